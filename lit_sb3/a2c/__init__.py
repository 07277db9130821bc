"""``stable_baselines3.a2c``: ``A2C`` and its policy names."""

from __future__ import annotations

from lit_sb3 import A2C
from lit_sb3.a2c.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["A2C", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
