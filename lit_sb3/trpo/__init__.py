"""``sb3_contrib.trpo``: ``TRPO`` and its policy names."""

from __future__ import annotations

from lit_sb3 import TRPO
from lit_sb3.trpo.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["TRPO", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
