"""lit-sb3-ppo: Proximal Policy Optimization. ``PPO`` is imported lazily (torch loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = ["PPO"]


def __getattr__(name: str) -> Any:
    if name == "PPO":
        from lit_sb3_ppo.ppo import PPO

        return PPO
    raise AttributeError(f"module 'lit_sb3_ppo' has no attribute {name!r}")
