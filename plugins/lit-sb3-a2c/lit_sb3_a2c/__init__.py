"""lit-sb3-a2c: Advantage Actor-Critic. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = ["A2C", "RMSpropTFLike"]


def __getattr__(name: str) -> Any:
    if name == "A2C":
        from lit_sb3_a2c.a2c import A2C

        return A2C
    if name == "RMSpropTFLike":
        from lit_sb3_a2c.rmsprop_tf_like import RMSpropTFLike

        return RMSpropTFLike
    raise AttributeError(f"module 'lit_sb3_a2c' has no attribute {name!r}")
