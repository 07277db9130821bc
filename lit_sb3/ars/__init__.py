"""``sb3_contrib.ars``: ``ARS`` and its policy names."""

from __future__ import annotations

from lit_sb3 import ARS
from lit_sb3.ars.policies import LinearPolicy, MlpPolicy

__all__ = ["ARS", "LinearPolicy", "MlpPolicy"]
