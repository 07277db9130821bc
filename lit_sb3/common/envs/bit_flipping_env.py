"""SB3's ``BitFlippingEnv`` (the goal-conditioned env HER is tested on): the HER plugin's."""

from __future__ import annotations

try:
    from lit_sb3_her.envs import BitFlippingEnv
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("BitFlippingEnv comes with the HER plugin: pip install lit-sb3-her") from exc

__all__ = ["BitFlippingEnv"]
