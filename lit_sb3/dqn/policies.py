"""``stable_baselines3.dqn.policies``: DQN's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import DQN as _Algorithm
from lit_sb3._sb3_style import off_policy_policy
from lit_sb3_core.nets.off_policy_policies import QNetwork

__all__ = ["CnnPolicy", "DQNPolicy", "MlpPolicy", "MultiInputPolicy", "QNetwork"]

MlpPolicy = DQNPolicy = off_policy_policy(_Algorithm, "MlpPolicy", "DQNPolicy", __name__)
CnnPolicy = off_policy_policy(_Algorithm, "CnnPolicy", "CnnPolicy", __name__)
MultiInputPolicy = off_policy_policy(_Algorithm, "MultiInputPolicy", "MultiInputPolicy", __name__)
