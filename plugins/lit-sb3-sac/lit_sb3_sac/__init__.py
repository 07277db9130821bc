"""lit-sb3-sac: Soft Actor-Critic. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SAC", "CnnPolicy", "MultiInputPolicy", "SACPolicy"]

_LOCATIONS = {
    "SAC": "lit_sb3_sac.sac",
    "SACPolicy": "lit_sb3_sac.policies",
    "CnnPolicy": "lit_sb3_sac.policies",
    "MultiInputPolicy": "lit_sb3_sac.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_sac' has no attribute {name!r}")
