"""lit-sb3-wide-policy: ``WideMlpPolicy`` for PPO, imported lazily (torch loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = ["WideExtractor", "WideMlpPolicy"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from lit_sb3_wide_policy import policies

        return getattr(policies, name)
    raise AttributeError(f"module 'lit_sb3_wide_policy' has no attribute {name!r}")
