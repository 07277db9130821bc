"""``stable_baselines3.sac.policies``: SAC's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import SAC as _Algorithm
from lit_sb3._sb3_style import off_policy_policy
from lit_sb3_core.nets.off_policy_policies import SquashedGaussianActor as Actor

__all__ = ["Actor", "CnnPolicy", "MlpPolicy", "MultiInputPolicy", "SACPolicy"]

MlpPolicy = SACPolicy = off_policy_policy(_Algorithm, "MlpPolicy", "SACPolicy", __name__)
CnnPolicy = off_policy_policy(_Algorithm, "CnnPolicy", "CnnPolicy", __name__)
MultiInputPolicy = off_policy_policy(_Algorithm, "MultiInputPolicy", "MultiInputPolicy", __name__)
