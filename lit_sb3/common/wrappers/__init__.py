"""sb3-contrib's ``common.wrappers``: ``ActionMasker`` (MaskablePPO's) and ``TimeFeatureWrapper``."""

from __future__ import annotations

from lit_sb3.common.wrappers.action_masker import ActionMasker
from lit_sb3.common.wrappers.time_feature import TimeFeatureWrapper

__all__ = ["ActionMasker", "TimeFeatureWrapper"]
