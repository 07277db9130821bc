"""lit-sb3-td3: Twin Delayed DDPG. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["TD3", "CnnPolicy", "MultiInputPolicy", "TD3Policy"]

_LOCATIONS = {
    "TD3": "lit_sb3_td3.td3",
    "TD3Policy": "lit_sb3_td3.policies",
    "CnnPolicy": "lit_sb3_td3.policies",
    "MultiInputPolicy": "lit_sb3_td3.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_td3' has no attribute {name!r}")
