"""``stable_baselines3.ddpg.policies``: DDPG's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import DDPG as _Algorithm
from lit_sb3._sb3_style import off_policy_policy

__all__ = ["CnnPolicy", "MlpPolicy", "MultiInputPolicy", "TD3Policy"]

MlpPolicy = TD3Policy = off_policy_policy(_Algorithm, "MlpPolicy", "TD3Policy", __name__)
CnnPolicy = off_policy_policy(_Algorithm, "CnnPolicy", "CnnPolicy", __name__)
MultiInputPolicy = off_policy_policy(_Algorithm, "MultiInputPolicy", "MultiInputPolicy", __name__)
