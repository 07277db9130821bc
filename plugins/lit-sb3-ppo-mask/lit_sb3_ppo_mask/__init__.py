"""lit-sb3-ppo-mask: PPO with invalid action masking. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "ActionMasker",
    "MaskableActorCriticCnnPolicy",
    "MaskableActorCriticPolicy",
    "MaskableCategoricalDistribution",
    "MaskableMultiCategoricalDistribution",
    "MaskableMultiInputActorCriticPolicy",
    "MaskablePPO",
    "MaskableRolloutBuffer",
    "get_action_masks",
    "is_masking_supported",
]

_WHERE = {
    "MaskablePPO": "ppo_mask",
    "MaskableActorCriticPolicy": "policies",
    "MaskableActorCriticCnnPolicy": "policies",
    "MaskableMultiInputActorCriticPolicy": "policies",
    "MaskableCategoricalDistribution": "distributions",
    "MaskableMultiCategoricalDistribution": "distributions",
    "MaskableRolloutBuffer": "buffers",
    "ActionMasker": "action_masks",
    "get_action_masks": "action_masks",
    "is_masking_supported": "action_masks",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"lit_sb3_ppo_mask.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lit_sb3_ppo_mask' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
