"""ProgressCSV passes the callback conformance kit, and writes what it promises."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, ClassVar

import pytest

from lit_sb3_core import make_algo, make_callback
from lit_sb3_core.testing import CallbackConformance


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as file:
        return list(csv.DictReader(file))


class TestProgressCSVConformance(CallbackConformance):
    callback_name = "progress_csv"
    distribution = "lit-sb3-progress-csv"
    # A random CartPole policy averages about 20 per episode: a threshold of 10 stops after one iteration.
    stop_kwargs: ClassVar[dict[str, Any]] = {"stop_at_reward": 10.0}

    def check_callback_ran(self, callback: Any, model: Any, calls: dict[str, int]) -> None:
        super().check_callback_ran(callback, model, calls)
        rows = read_rows(Path("progress.csv"))
        assert len(rows) == model.iterations == callback.rows
        assert int(rows[-1]["timesteps"]) == model.num_timesteps


def test_rows_follow_training_and_stop_at_the_threshold(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "progress.csv"
    model = make_algo("ppo", env="CartPole-v1", seed=0, n_steps=64, batch_size=64, n_epochs=1)
    model.learn(320, callback=make_callback("progress_csv", path=path))
    rows = read_rows(path)
    assert [int(row["timesteps"]) for row in rows] == [64, 128, 192, 256, 320]
    assert all(float(row["ep_rew_mean"]) > 0 for row in rows)

    model.learn(10_000, callback=make_callback("progress_csv", path=path, stop_at_reward=1.0))
    # The first iteration's return reached the threshold: training stops at the next step, as a callback's
    # False does in SB3 (the second rollout is not trained on).
    assert model.num_timesteps == 65 and model.iterations == 1
    assert len(read_rows(path)) == 1  # each run rewrites the file


def test_a_non_finite_threshold_is_refused() -> None:
    with pytest.raises(ValueError, match="stop_at_reward must be a finite number"):
        make_callback("progress_csv", stop_at_reward=float("nan"))
