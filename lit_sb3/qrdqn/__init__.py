"""``sb3_contrib.qrdqn``: ``QRDQN`` and its policy names."""

from __future__ import annotations

from lit_sb3 import QRDQN
from lit_sb3.qrdqn.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["QRDQN", "CnnPolicy", "MlpPolicy", "MultiInputPolicy"]
