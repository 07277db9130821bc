"""SB3's ``common.evaluation``: ``evaluate_policy`` (lit-sb3's own, which takes SB3 VecEnvs too)."""

from __future__ import annotations

from lit_sb3_core import evaluate_policy

__all__ = ["evaluate_policy"]
