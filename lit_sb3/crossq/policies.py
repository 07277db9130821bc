"""``sb3_contrib.crossq.policies``: CrossQ's policies (lit-sb3's, with SB3's constructor signature)."""

from __future__ import annotations

from lit_sb3 import CrossQ as _Algorithm
from lit_sb3._sb3_style import off_policy_policy
from lit_sb3_crossq.policies import CrossQActor as Actor
from lit_sb3_crossq.policies import CrossQCritic

__all__ = ["Actor", "CrossQCritic", "CrossQPolicy", "MlpPolicy"]

MlpPolicy = CrossQPolicy = off_policy_policy(_Algorithm, "MlpPolicy", "CrossQPolicy", __name__)
