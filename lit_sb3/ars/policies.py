"""``sb3_contrib.ars.policies``: ARS's policies (lit-sb3's, through the algorithm's aliases)."""

from __future__ import annotations

from lit_sb3 import ARS as _Algorithm

__all__ = ["ARSLinearPolicy", "ARSPolicy", "LinearPolicy", "MlpPolicy"]

MlpPolicy = ARSPolicy = _Algorithm.policy_aliases["MlpPolicy"]
LinearPolicy = ARSLinearPolicy = _Algorithm.policy_aliases["LinearPolicy"]
