"""Episode statistics and metric records of RLAlgorithm: one record per logging iteration, SB3's names.

A record (``rollout/ep_rew_mean``, ``time/fps``, ``train/...``) goes straight to the loggers with the
number of environment steps on the x-axis; ``self.log`` (about a millisecond a call) is used only for a
metric that a ModelCheckpoint or EarlyStopping watches.
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numpy as np
import torch

from lit_sb3_core.engine.lightning_internals import attached_trainer
from lit_sb3_core.envs.episodes import EpisodeStatistics
from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["MetricLogging"]


class MetricLogging(AlgorithmPart):
    """RLAlgorithm's metric records (a part of RLAlgorithm)."""

    # Iterations between two metric records (SB3's log_interval: 1 for PPO, 100 for A2C). RLTrainer's
    # log_every_n_steps, counted in iterations, overrides it.
    default_log_interval: ClassVar[int] = 1
    _last_metrics: dict[str, float]
    _fit_start_time: float
    _fit_start_timesteps: int
    _episode_statistics: EpisodeStatistics
    _ep_rew_monitored: bool

    def _start_metric_window(self) -> None:
        """At fit start: the clock of ``time/fps`` and the episode window of ``rollout/*``."""
        self._episode_statistics = EpisodeStatistics(self.vector_env, self.stats_window_size)
        self._fit_start_time = time.perf_counter()
        self._fit_start_timesteps = self.num_timesteps
        callbacks = self.trainer.callbacks  # type: ignore[attr-defined]  # Lightning sets it in a connector
        self._ep_rew_monitored = any(
            getattr(callback, "monitor", None) == "rollout/ep_rew_mean" for callback in callbacks
        )

    @property
    def log_interval(self) -> int:
        """Iterations between metric records: RLTrainer(log_every_n_steps=...) or the algorithm's default."""
        chosen = getattr(attached_trainer(self), "rl_log_interval", None)
        return max(1, int(chosen if chosen is not None else self.default_log_interval))

    def should_log(self) -> bool:
        """Whether this iteration writes metrics: every ``log_interval`` iterations and at the budget."""
        return self.iterations % self.log_interval == 0 or self.budget_reached()

    def log_iteration(self, metrics: dict[str, float] | None = None) -> None:
        """Write one iteration's metrics to the loggers, the progress bar and (if verbose) the console.

        Call it every iteration; it records only on ``should_log()`` iterations, so pass metrics that are
        cheap to build or build them only when ``should_log()`` is true.
        """
        if not self.should_log():
            return
        elapsed = max(time.perf_counter() - self._fit_start_time, 1e-9)
        fps = int((self.num_timesteps - self._fit_start_timesteps) / elapsed)
        record: dict[str, float] = {}
        episodes = self._recent_episode_means()
        if episodes is not None:
            record["rollout/ep_rew_mean"], record["rollout/ep_len_mean"] = episodes
        successes = self.ep_success_buffer  # SB3's: the is_success of the last stats_window_size episodes
        if successes:
            record["rollout/success_rate"] = float(np.mean(successes))
        record.update(
            {
                "time/fps": fps,
                "time/iterations": self.iterations,
                "time/time_elapsed": int(elapsed),
                "time/total_timesteps": self.num_timesteps,
            }
        )
        record.update(metrics or {})
        # Through SB3's logger: with what callbacks recorded since the last dump, to the run's Lightning
        # loggers (and the console with verbose=1).
        self._last_metrics = self.write_record(record, step=self.num_timesteps)
        if "rollout/ep_rew_mean" in record and self._ep_rew_monitored:
            # Through Lightning too, for ModelCheckpoint/EarlyStopping(monitor="rollout/ep_rew_mean"); only
            # when one watches it, since self.log costs about a millisecond.
            self.log("rollout/ep_rew_mean", record["rollout/ep_rew_mean"], logger=False, batch_size=1)

    def _recent_episode_means(self) -> tuple[float, float] | None:
        """Mean return and length of the last ``stats_window_size`` training episodes, over every rank's."""
        statistics = self._episode_statistics
        returns = statistics.returns
        lengths = statistics.lengths if returns else []
        totals = torch.tensor([sum(returns), sum(lengths), len(returns)], dtype=torch.float64)
        totals = self.all_reduce(totals, "sum")
        if totals[2] == 0:
            return None
        return float(totals[0] / totals[2]), float(totals[1] / totals[2])

    @property
    def last_metrics(self) -> dict[str, float]:
        """The most recent metric record (``rollout/ep_rew_mean``, ``train/loss``, ...), as logged."""
        return dict(self._last_metrics)

    def progress_bar_metrics(self) -> dict[str, Any]:
        """What RLProgressBar shows beside the step count."""
        shown: dict[str, Any] = {}
        if "time/fps" in self._last_metrics:
            shown["fps"] = int(self._last_metrics["time/fps"])
        if "rollout/ep_rew_mean" in self._last_metrics:
            shown["ep_rew_mean"] = f"{self._last_metrics['rollout/ep_rew_mean']:.1f}"
        return shown
