"""``sb3_contrib.tqc``: ``TQC`` and its policy names."""

from __future__ import annotations

from lit_sb3 import TQC
from lit_sb3.tqc.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["TQC", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
