"""``stable_baselines3.ddpg``: ``DDPG`` and its policy names."""

from __future__ import annotations

from lit_sb3 import DDPG
from lit_sb3.ddpg.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["DDPG", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
