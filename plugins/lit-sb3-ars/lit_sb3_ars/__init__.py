"""lit-sb3-ars: Augmented Random Search. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["ARS", "ARSLinearPolicy", "ARSPolicy"]

_WHERE = {"ARS": "ars", "ARSPolicy": "policies", "ARSLinearPolicy": "policies"}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"lit_sb3_ars.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'lit_sb3_ars' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
