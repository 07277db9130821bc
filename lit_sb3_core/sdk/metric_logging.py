"""Episode statistics and metric records of RLAlgorithm: one record per logging iteration, SB3's names.

A record (``rollout/ep_rew_mean``, ``time/fps``, ``train/...``) goes straight to the loggers with the
number of environment steps on the x-axis; ``self.log`` (about a millisecond a call) is used only for a
metric that a ModelCheckpoint or EarlyStopping watches. :class:`MetricRecords` is a helper the algorithm
holds (``RLAlgorithm.metrics``): loops call ``self.metrics.log_iteration(...)`` and
``self.metrics.should_log()``; ``log_interval`` and ``last_metrics`` are the algorithm's views of it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np
import torch

from lit_sb3_core.engine.lightning_internals import attached_trainer, trainer_callbacks
from lit_sb3_core.envs.episodes import EpisodeStatistics

if TYPE_CHECKING:
    from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["MetricRecords"]


class MetricRecords:
    """One algorithm's metric records: the clock of ``time/fps``, the episode window and the last record."""

    def __init__(self, algorithm: AlgorithmPart) -> None:
        self.algorithm = algorithm
        self.last: dict[str, float] = {}  # the most recent record, as logged
        # An algorithm with its own rhythm (OffPolicyAlgorithm: every log_interval episodes) sets this each
        # iteration; None: every log_interval iterations and at the budget.
        self.due: bool | None = None

    _fit_start_time: float  # these four are set by start_window, at fit start
    _fit_start_timesteps: int
    _episode_statistics: EpisodeStatistics
    _ep_rew_monitored: bool

    def start_window(self) -> None:
        """At fit start: the clock of ``time/fps`` and the episode window of ``rollout/*``."""
        algorithm = self.algorithm
        trainer = attached_trainer(algorithm)
        self._episode_statistics = EpisodeStatistics(algorithm.vector_env, algorithm.stats_window_size)
        self._fit_start_time = time.perf_counter()
        self._fit_start_timesteps = algorithm.num_timesteps
        self._ep_rew_monitored = any(
            getattr(callback, "monitor", None) == "rollout/ep_rew_mean"
            for callback in (trainer_callbacks(trainer) if trainer is not None else ())
        )

    @property
    def log_interval(self) -> int:
        """Iterations between metric records: RLTrainer(log_every_n_steps=...) or the algorithm's default."""
        algorithm = self.algorithm
        chosen = getattr(attached_trainer(algorithm), "rl_log_interval", None)
        return max(1, int(chosen if chosen is not None else algorithm.default_log_interval))

    def should_log(self) -> bool:
        """Whether this iteration writes metrics: every ``log_interval`` iterations and at the budget
        (or what the algorithm set ``due`` to)."""
        if self.due is not None:
            return self.due
        return self.algorithm.iterations % self.log_interval == 0 or self.algorithm.budget.reached()

    def log_iteration(self, metrics: dict[str, float] | None = None) -> None:
        """Write one iteration's metrics to the loggers, the progress bar and (if verbose) the console.

        Call it every iteration; it records only on ``should_log()`` iterations, so pass metrics that are
        cheap to build or build them only when ``should_log()`` is true.
        """
        if not self.should_log():
            return
        algorithm = self.algorithm
        elapsed = max(time.perf_counter() - self._fit_start_time, 1e-9)
        fps = int((algorithm.num_timesteps - self._fit_start_timesteps) / elapsed)
        record: dict[str, float] = {}
        episodes = self._recent_episode_means()
        if episodes is not None:
            record["rollout/ep_rew_mean"], record["rollout/ep_len_mean"] = episodes
        # SB3's: the is_success of the last stats_window_size episodes
        successes = algorithm.ep_success_buffer
        if successes:
            record["rollout/success_rate"] = float(np.mean(successes))
        record.update(
            {
                "time/fps": fps,
                "time/iterations": algorithm.iterations,
                "time/time_elapsed": int(elapsed),
                "time/total_timesteps": algorithm.num_timesteps,
            }
        )
        record.update(metrics or {})
        # Through SB3's logger: with what callbacks recorded since the last dump, to the run's Lightning
        # loggers (and the console with verbose=1).
        self.last = algorithm._sb3_logger.write_record(record, step=algorithm.num_timesteps)
        if "rollout/ep_rew_mean" in record and self._ep_rew_monitored:
            # Through Lightning too, for ModelCheckpoint/EarlyStopping(monitor="rollout/ep_rew_mean"); only
            # when one watches it, since self.log costs about a millisecond.
            algorithm.log("rollout/ep_rew_mean", record["rollout/ep_rew_mean"], logger=False, batch_size=1)

    def _recent_episode_means(self) -> tuple[float, float] | None:
        """Mean return and length of the last ``stats_window_size`` training episodes, over every rank's."""
        statistics = self._episode_statistics
        returns = statistics.returns
        lengths = statistics.lengths if returns else []
        totals = torch.tensor([sum(returns), sum(lengths), len(returns)], dtype=torch.float64)
        totals = self.algorithm.ranks.all_reduce(totals, "sum")
        if totals[2] == 0:
            return None
        return float(totals[0] / totals[2]), float(totals[1] / totals[2])
