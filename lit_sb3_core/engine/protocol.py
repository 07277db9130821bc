"""What the engine needs from an algorithm: the trainer, evaluation and model files talk to an algorithm
through this protocol only, so the engine never imports the SDK's base classes (which sit above it).

``lit_sb3_core.sdk.RLAlgorithm`` implements it; a test checks that it does.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["RLModel"]


@runtime_checkable
class RLModel(Protocol):
    """An algorithm as the engine sees it."""

    algo_name: str
    num_timesteps: int
    iterations: int
    observation_space: Any
    action_space: Any
    normalization: dict[str, Any] | None

    def predict(
        self, observation: Any, state: Any = None, episode_start: Any = None, deterministic: bool = False
    ) -> tuple[Any, Any]:
        """Actions for ``observation`` (SB3's ``predict``)."""
        ...
