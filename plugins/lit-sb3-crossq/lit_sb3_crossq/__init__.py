"""lit-sb3-crossq: CrossQ. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BatchRenorm", "CrossQ", "CrossQPolicy", "MlpPolicy"]

_LOCATIONS = {
    "CrossQ": ("lit_sb3_crossq.crossq", "CrossQ"),
    "CrossQPolicy": ("lit_sb3_crossq.policies", "CrossQPolicy"),
    "MlpPolicy": ("lit_sb3_crossq.policies", "CrossQPolicy"),
    "BatchRenorm": ("lit_sb3_crossq.batch_renorm", "BatchRenorm"),
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        module, attribute = _LOCATIONS[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'lit_sb3_crossq' has no attribute {name!r}")
