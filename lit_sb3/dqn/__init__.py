"""``stable_baselines3.dqn``: ``DQN`` and its policy names."""

from __future__ import annotations

from lit_sb3 import DQN
from lit_sb3.dqn.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["DQN", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
