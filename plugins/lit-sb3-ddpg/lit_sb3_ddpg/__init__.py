"""lit-sb3-ddpg: Deep Deterministic Policy Gradient. Classes are imported lazily (torch loads on first use).

DDPG uses TD3's policies (as in Stable-Baselines3), so the policy classes are those of ``lit_sb3_td3``.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["DDPG", "CnnPolicy", "MultiInputPolicy", "TD3Policy"]

_LOCATIONS = {
    "DDPG": "lit_sb3_ddpg.ddpg",
    "TD3Policy": "lit_sb3_td3.policies",
    "CnnPolicy": "lit_sb3_td3.policies",
    "MultiInputPolicy": "lit_sb3_td3.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_ddpg' has no attribute {name!r}")
