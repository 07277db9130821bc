"""``stable_baselines3.sac``: ``SAC`` and its policy names."""

from __future__ import annotations

from lit_sb3 import SAC
from lit_sb3.sac.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["SAC", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
