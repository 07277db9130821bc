"""SB3's ``common.off_policy_algorithm``: lit-sb3's ``OffPolicyAlgorithm``."""

from __future__ import annotations

from lit_sb3_core.sdk import OffPolicyAlgorithm

__all__ = ["OffPolicyAlgorithm"]
