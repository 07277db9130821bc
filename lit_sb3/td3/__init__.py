"""``stable_baselines3.td3``: ``TD3`` and its policy names."""

from __future__ import annotations

from lit_sb3 import TD3
from lit_sb3.td3.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["TD3", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
