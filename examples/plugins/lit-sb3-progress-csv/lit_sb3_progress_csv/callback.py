"""``ProgressCSV``: one CSV row per training iteration, and an optional stop at a training return.

Unlike ``StopTrainingOnRewardThreshold`` (which needs evaluation episodes), this callback watches the
mean return of the recent *training* episodes, which costs nothing extra.
"""

from __future__ import annotations

import csv
import math
import time
from pathlib import Path
from typing import IO, Any

import numpy as np

from lit_sb3_core.sdk import RLCallback

__all__ = ["ProgressCSV"]

FIELDS = ("timesteps", "iterations", "time_elapsed", "ep_rew_mean")


class ProgressCSV(RLCallback):
    """Write ``timesteps, iterations, time_elapsed, ep_rew_mean`` after every iteration's rollout.

    ``ep_rew_mean`` is the mean return of the recent training episodes (``model.ep_info_buffer``, what
    ``rollout/ep_rew_mean`` shows), empty until an episode has finished.

    Args:
        path: the CSV file; its folder is created. It is rewritten at the start of each run.
        stop_at_reward: stop training once ``ep_rew_mean`` reaches this value (``None``: never).
        verbose: 1 prints a line when training is stopped.
    """

    def __init__(
        self, path: str | Path = "progress.csv", stop_at_reward: float | None = None, verbose: int = 0
    ) -> None:
        super().__init__(verbose)
        if stop_at_reward is not None and not math.isfinite(stop_at_reward):
            raise ValueError(
                f"ProgressCSV stop_at_reward must be a finite number or None, got {stop_at_reward!r}."
            )
        self.path = Path(path)
        self.stop_at_reward = stop_at_reward
        self.rows = 0
        self._file: IO[str] | None = None
        self._writer: Any = None
        self._stop = False
        self._started_at = 0.0

    def _on_training_start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", newline="")
        self._writer = csv.writer(self._file)
        self._writer.writerow(FIELDS)
        self.rows = 0
        self._stop = False
        self._started_at = time.perf_counter()

    def _on_rollout_end(self) -> None:
        # Once per iteration, after its rollout (SB3's callback protocol calls _on_step after every env step).
        returns = [episode["r"] for episode in self.model.ep_info_buffer]
        reward = float(np.mean(returns)) if returns else None
        elapsed = time.perf_counter() - self._started_at
        self.rows += 1
        self._writer.writerow(
            (self.num_timesteps, self.rows, f"{elapsed:.3f}", "" if reward is None else reward)
        )
        assert self._file is not None  # opened in _on_training_start
        self._file.flush()
        if self.stop_at_reward is not None and reward is not None and reward >= self.stop_at_reward:
            if self.verbose >= 1:
                print(f"ProgressCSV: ep_rew_mean {reward:.2f} >= {self.stop_at_reward}, stopping training")
            self._stop = True

    def _on_step(self) -> bool:
        return not self._stop  # a stop decided at the end of a rollout takes effect at the next step

    def _on_training_end(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
