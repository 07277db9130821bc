"""lit-sb3-dqn: Deep Q-Network. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DQN", "CnnPolicy", "DQNPolicy", "MultiInputPolicy"]

_LOCATIONS = {
    "DQN": "lit_sb3_dqn.dqn",
    "DQNPolicy": "lit_sb3_dqn.policies",
    "CnnPolicy": "lit_sb3_dqn.policies",
    "MultiInputPolicy": "lit_sb3_dqn.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_dqn' has no attribute {name!r}")
