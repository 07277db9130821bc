"""``stable_baselines3.td3.policies``: TD3's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import TD3 as _Algorithm
from lit_sb3._sb3_style import off_policy_policy
from lit_sb3_core.nets.off_policy_policies import DeterministicActor as Actor

__all__ = ["Actor", "CnnPolicy", "MlpPolicy", "MultiInputPolicy", "TD3Policy"]

MlpPolicy = TD3Policy = off_policy_policy(_Algorithm, "MlpPolicy", "TD3Policy", __name__)
CnnPolicy = off_policy_policy(_Algorithm, "CnnPolicy", "CnnPolicy", __name__)
MultiInputPolicy = off_policy_policy(_Algorithm, "MultiInputPolicy", "MultiInputPolicy", __name__)
