"""lit-sb3-trpo: Trust Region Policy Optimization. ``TRPO`` is imported lazily (torch loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = ["TRPO"]


def __getattr__(name: str) -> Any:
    if name == "TRPO":
        from lit_sb3_trpo.trpo import TRPO

        return TRPO
    raise AttributeError(f"module 'lit_sb3_trpo' has no attribute {name!r}")
