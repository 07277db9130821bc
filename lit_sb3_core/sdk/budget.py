"""The step budget and the ranks of a run: helpers RLAlgorithm holds (``self.budget``, ``self.ranks``).

``RLTrainer(max_steps=N)`` is a budget of environment steps; the trainer decides when it is spent
(``RLTrainer.rl_budget_reached_at``), the algorithm's loops ask :class:`Budget`. :class:`Ranks` reduces
values over the processes of a distributed run (a no-op with one).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, cast

if TYPE_CHECKING:
    import torch

    from lit_sb3_core.engine.trainer import RLTrainer

__all__ = ["Budget", "Ranks"]


class _Run(Protocol):
    """What the two helpers read and write on the algorithm."""

    num_timesteps: int
    progress_remaining: float

    @property
    def total_timesteps(self) -> int: ...
    @property
    def world_size(self) -> int: ...
    @property
    def trainer(self) -> Any: ...
    @property
    def device(self) -> torch.device: ...


class Budget:
    """The environment-step budget, as the algorithm's loops see it."""

    def __init__(self, algorithm: _Run) -> None:
        self.algorithm = algorithm

    def update_progress(self) -> None:
        """``progress_remaining`` goes from 1 to 0 over the step budget; schedules read it."""
        algorithm = self.algorithm
        total = max(1, algorithm.total_timesteps)
        algorithm.progress_remaining = max(0.0, 1.0 - algorithm.num_timesteps / total)

    def reached(self) -> bool:
        """Whether the step budget is spent: the trainer decides (``RLTrainer.rl_budget_reached_at``)."""
        algorithm = self.algorithm
        return cast("RLTrainer", algorithm.trainer).rl_budget_reached_at(algorithm.num_timesteps)

    def stop_if_reached(self) -> None:
        """Set ``trainer.should_stop`` once the budget is spent (call it at the end of an iteration)."""
        if self.reached():
            self.algorithm.trainer.should_stop = True


class Ranks:
    """The processes of a run: reductions every rank takes part in."""

    def __init__(self, algorithm: _Run) -> None:
        self.algorithm = algorithm

    def all_reduce(self, value: torch.Tensor, reduce_op: str = "mean") -> torch.Tensor:
        """``value`` reduced over all ranks (itself with one process). Every rank must call it."""
        algorithm = self.algorithm
        if algorithm.world_size <= 1:
            return value
        return algorithm.trainer.strategy.reduce(value.to(algorithm.device), reduce_op=reduce_op).cpu()
