"""lit-sb3-her: Hindsight Experience Replay. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BitFlippingEnv", "GoalSelectionStrategy", "HerReplayBuffer"]

_LOCATIONS = {
    "HerReplayBuffer": "lit_sb3_her.buffer",
    "GoalSelectionStrategy": "lit_sb3_her.buffer",
    "BitFlippingEnv": "lit_sb3_her.envs",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_her' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
