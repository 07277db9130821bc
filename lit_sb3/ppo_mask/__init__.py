"""``sb3_contrib.ppo_mask``: ``MaskablePPO`` and its policy names."""

from __future__ import annotations

from lit_sb3 import MaskablePPO
from lit_sb3.ppo_mask.policies import CnnPolicy, MlpPolicy, MultiInputPolicy

__all__ = ["CnnPolicy", "MaskablePPO", "MlpPolicy", "MultiInputPolicy"]
