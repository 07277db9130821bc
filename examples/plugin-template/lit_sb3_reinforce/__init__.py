"""lit-sb3-reinforce: REINFORCE. ``REINFORCE`` is imported lazily, so importing the package loads no torch."""

from __future__ import annotations

from typing import Any

__all__ = ["REINFORCE"]


def __getattr__(name: str) -> Any:
    if name == "REINFORCE":
        from lit_sb3_reinforce.reinforce import REINFORCE

        return REINFORCE
    raise AttributeError(f"module 'lit_sb3_reinforce' has no attribute {name!r}")
