"""``stable_baselines3.ppo``: ``PPO`` and its policy names."""

from __future__ import annotations

from lit_sb3 import PPO
from lit_sb3.ppo.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["PPO", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
