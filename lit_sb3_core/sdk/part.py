"""``AlgorithmPart``: the base of RLAlgorithm's parts (``prediction.py``, ``optimization.py``, ...).

RLAlgorithm is assembled from one class per concern, each in its own module. A part uses members that
``RLAlgorithm`` (or another part, or LightningModule) defines; this class declares them for type checkers.
At run time it is ``object``: the parts are plain classes, and ``RLAlgorithm`` combines them with
``LightningModule``, so no attribute lookup or ``super()`` call goes through anything extra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

__all__ = ["AlgorithmPart"]

if TYPE_CHECKING:
    from collections import deque
    from typing import Protocol, TypeVar

    import lightning as L
    import numpy as np
    import torch
    from gymnasium import spaces
    from gymnasium.vector import VectorEnv

    from lit_sb3_core.engine.datamodule import RLEnvDataModule
    from lit_sb3_core.engine.protocol import EvaluationEpisodes, EvaluationOptions
    from lit_sb3_core.foundation.schedules import Schedule
    from lit_sb3_core.sb3.model_logger import ModelLogger
    from lit_sb3_core.sdk.budget import Budget, Ranks
    from lit_sb3_core.sdk.normalizers import Normalizers

    PolicyT = TypeVar("PolicyT", covariant=True)

    class HasPolicy(Protocol[PolicyT]):
        """Anything with a ``policy`` attribute: ``require_policy`` returns its type (a subclass's narrower one)."""

        @property
        def policy(self) -> PolicyT | None: ...

    class _Methods(Protocol):
        """What RLAlgorithm itself implements and the parts call."""

        @property
        def datamodule(self) -> RLEnvDataModule: ...
        @property
        def world_size(self) -> int: ...
        @property
        def total_timesteps(self) -> int: ...
        @property
        def stats_window_size(self) -> int: ...
        def require_policy(self: HasPolicy[PolicyT]) -> PolicyT: ...
        def _check_same_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None: ...
        def build_policy(self, observation_space: spaces.Space, action_space: spaces.Space) -> None: ...
        def configure_normalization(self, config: dict[str, Any] | None) -> None: ...
        @property
        def ep_success_buffer(self) -> deque[bool]: ...
        def _clear_success_window(self) -> None: ...

    class AlgorithmPart(L.LightningModule, _Methods):
        """RLAlgorithm's attributes, as its parts see them."""

        algo_name: ClassVar[str]
        seed: int | None
        verbose: int
        lr_schedule: Schedule
        policy: torch.nn.Module | None
        observation_space: spaces.Space | None
        action_space: spaces.Space | None
        normalization: dict[str, Any] | None
        num_timesteps: int
        iterations: int
        n_updates: int
        progress_remaining: float
        run_counters: torch.Tensor
        env_source: Any
        vector_env: VectorEnv | None
        last_obs: Any
        last_episode_starts: np.ndarray
        pending_optimizer_states: list[dict[str, Any]]
        evaluation_options: EvaluationOptions | None
        last_evaluation: dict[str, float]
        last_evaluation_episodes: EvaluationEpisodes
        _learn_datamodule: RLEnvDataModule | None
        _setup_total_timesteps: int
        _restored_episode_stats: tuple[list[float], list[int]]
        default_log_interval: ClassVar[int]
        _sb3_logger: ModelLogger  # the SB3 logger RLAlgorithm holds (sb3/model_logger.py)
        budget: Budget  # helpers RLAlgorithm holds (budget.py, normalizers.py)
        ranks: Ranks
        normalizers: Normalizers

else:
    AlgorithmPart = object
