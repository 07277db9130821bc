"""``sb3_contrib.crossq``: ``CrossQ`` and its policy names."""

from __future__ import annotations

from lit_sb3 import CrossQ
from lit_sb3.crossq.policies import MlpPolicy

__all__ = ["CrossQ", "MlpPolicy"]
