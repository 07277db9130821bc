"""SB3's ``common.on_policy_algorithm``: lit-sb3's ``OnPolicyAlgorithm``."""

from __future__ import annotations

from lit_sb3_core.sdk import OnPolicyAlgorithm

__all__ = ["OnPolicyAlgorithm"]
