"""SB3's logger behaviour over Lightning's loggers: output formats on disk at each dump, ``exclude=``, the
default logger's outputs and folder, TensorBoard runs named as SB3 names them, ``rollout/success_rate``."""

from __future__ import annotations

import io
from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas
import pytest
import torch
from gymnasium import spaces

from lit_sb3 import A2C, PPO
from lit_sb3.common.logger import (
    HumanOutputFormat,
    Logger,
    TensorBoardOutputFormat,
    configure,
    make_output_format,
)
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.utils import configure_logger, get_latest_run_id


def _tensorboard_tags(folder: Path) -> dict[str, list[str]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(folder))
    accumulator.Reload()
    return accumulator.Tags()


def test_csv_and_tensorboard_are_on_disk_after_each_write(tmp_path: Path) -> None:
    csv = make_output_format("csv", tmp_path)
    assert (tmp_path / "progress.csv").exists()  # before any write, as SB3's
    csv.write({"a": 1.0, "b": 2}, {"a": None, "b": None})
    assert pandas.read_csv(tmp_path / "progress.csv")["a"].tolist() == [1.0]
    board = make_output_format("tensorboard", tmp_path / "tb")
    board.write({"x": 1.5, "hist": np.arange(5.0), "th": torch.ones(3), "note": "hi"}, {})
    tags = _tensorboard_tags(tmp_path / "tb")
    assert "x" in tags["scalars"] and {"hist", "th"} <= set(tags["histograms"])
    csv.close()
    board.close()


def test_exclude_takes_a_format_name_or_a_tuple_and_long_keys_must_stay_distinct() -> None:
    stream = io.StringIO()
    human = HumanOutputFormat(stream)
    with pytest.warns(UserWarning, match="empty key-value dict"):
        human.write({"tag": 1}, {"tag": "stdout"})
    human.write({"tag": 1, "other": 2}, {"tag": ("json", "csv"), "other": "log"})
    assert "| tag" in stream.getvalue() and "other" not in stream.getvalue()
    long = "k" * human.max_length
    with pytest.raises(ValueError, match="truncated"):
        human.write({long + "a": 1, long + "b": 2}, {})


def test_default_logger_outputs_and_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))
    quiet = A2C("MlpPolicy", "CartPole-v1", n_steps=4).learn(4)
    assert quiet.logger.output_formats == [] and quiet.logger.dir == str(tmp_path / "sb3")
    loud = A2C("MlpPolicy", "CartPole-v1", n_steps=4, verbose=1, tensorboard_log=str(tmp_path)).learn(4)
    first, second = loud.logger.output_formats
    assert isinstance(first, HumanOutputFormat) and isinstance(second, TensorBoardOutputFormat)
    assert loud.logger.dir == str(tmp_path / "A2C_1")


def test_tensorboard_runs_are_named_and_continued_as_sb3s(tmp_path: Path) -> None:
    model = A2C("MlpPolicy", "CartPole-v1", n_steps=8, tensorboard_log=str(tmp_path))
    model.learn(16)
    model.learn(16, reset_num_timesteps=False)
    assert (tmp_path / "A2C_1").is_dir() and not (tmp_path / "A2C_2").exists()
    assert "time/fps" in _tensorboard_tags(tmp_path / "A2C_1")["scalars"]
    model.learn(16, tb_log_name="run[8, 8]")
    model.learn(16, tb_log_name="run[8, 8]")
    assert get_latest_run_id(str(tmp_path), "run[8, 8]") == 2
    logger = configure_logger(0, str(tmp_path), "run[8, 8]")
    assert logger.get_dir() == str(tmp_path / "run[8, 8]_3")
    assert isinstance(logger.output_formats[0], TensorBoardOutputFormat)


class _Succeeds(gym.Env):
    """Episodes of 4 steps; every other one reports is_success."""

    observation_space = spaces.Discrete(2)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.t, self.episodes = 0, 0

    def reset(self, *, seed=None, options=None):
        self.t = 0
        return 0, {}

    def step(self, action):
        self.t += 1
        info = {}
        if self.t == 4:
            info["is_success"] = self.episodes % 2 == 0
            self.episodes += 1
        return 0, 0.0, False, self.t == 4, info


class _Memory(Logger):
    def __init__(self) -> None:
        super().__init__("", [])

    def dump(self, step: int = 0) -> None:
        pass


def test_rollout_success_rate_is_logged_over_the_window_and_reset_by_learn() -> None:
    env = Monitor(_Succeeds(), info_keywords=("is_success",))
    model = PPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, stats_window_size=4)
    logger = _Memory()
    model.set_logger(logger)
    model.learn(16)
    assert logger.name_to_value["rollout/success_rate"] == 0.5
    assert len(model.ep_success_buffer) == 4
    model.learn(16)  # a new run forgets the last run's episodes
    assert len(model.ep_success_buffer) == 4


def test_configure_writes_progress_csv_during_learn(tmp_path: Path) -> None:
    model = A2C("MlpPolicy", "CartPole-v1", n_steps=8)
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(64, log_interval=1)
    frame = pandas.read_csv(tmp_path / "progress.csv")
    assert "time/total_timesteps" in frame and frame["time/total_timesteps"].iloc[-1] == 64
    assert all(key.startswith("train/") for key in model.logger.name_to_value)  # the last update's, as SB3
