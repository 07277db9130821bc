"""``sb3_contrib.common.maskable.callbacks``: ``MaskableEvalCallback`` (evaluates with action masks)."""

from __future__ import annotations

from lit_sb3_core.sb3.callbacks import MaskableEvalCallback

__all__ = ["MaskableEvalCallback"]
