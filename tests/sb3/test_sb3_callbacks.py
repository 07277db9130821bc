"""SB3's callback semantics: ``_on_step`` after every vector-env step, with ``self.locals``, and SB3's logger.

Written from SB3's callback guide: a callback sees every step, counts ``n_calls`` in vector steps, stops
training at the step it returns False, and records values with ``self.logger.record``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from lit_sb3 import DQN, PPO, SAC
from lit_sb3.common.callbacks import (
    BaseCallback,
    CallbackList,
    CheckpointCallback,
    EvalCallback,
    EveryNTimesteps,
    ProgressBarCallback,
)
from lit_sb3.common.logger import Figure, FormatUnsupportedError, HParam, Image, Video, configure

ON = {"n_steps": 16, "batch_size": 16, "n_epochs": 1, "seed": 0, "policy_kwargs": {"net_arch": [8]}}
OFF = {
    "learning_starts": 10,
    "buffer_size": 1000,
    "batch_size": 8,
    "seed": 0,
    "policy_kwargs": {"net_arch": [8]},
}


class Spy(BaseCallback):
    """Records what SB3's documentation says a callback can read, at every call."""

    def __init__(self, stop_at_call: int | None = None) -> None:
        super().__init__()
        self.stop_at_call = stop_at_call
        self.events: list[str] = []
        self.timesteps: list[int] = []
        self.keys: set[str] = set()
        self.terminal_infos: list[dict[str, Any]] = []
        self.done_count = 0

    def _init_callback(self) -> None:
        self.events.append("init")
        self.n_envs_seen = self.training_env.num_envs

    def _on_training_start(self) -> None:
        self.events.append("training_start")
        self.total_timesteps = self.locals["total_timesteps"]

    def _on_rollout_start(self) -> None:
        self.events.append("rollout_start")

    def _on_step(self) -> bool:
        self.timesteps.append(self.num_timesteps)
        self.keys |= set(self.locals)
        dones = self.locals["dones"]
        infos = self.locals["infos"]
        assert isinstance(infos, list) and len(infos) == len(dones) == self.n_envs_seen
        assert len(self.locals["rewards"]) == len(self.locals["new_obs"]) == len(dones)
        self.done_count += int(np.sum(dones))
        self.terminal_infos += [info for info, done in zip(infos, dones) if done]
        return self.stop_at_call is None or self.n_calls < self.stop_at_call

    def _on_rollout_end(self) -> None:
        self.events.append("rollout_end")

    def _on_training_end(self) -> None:
        self.events.append("training_end")


def test_on_policy_callbacks_see_every_vector_step() -> None:
    spy = Spy()
    model = PPO("MlpPolicy", "CartPole-v1", **ON).learn(64, callback=spy)
    assert model.num_timesteps == 64
    assert spy.n_calls == 64 and spy.timesteps == list(range(1, 65))
    assert spy.total_timesteps == 64 and spy.model is model and spy.logger is model.logger
    assert {
        "self",
        "new_obs",
        "rewards",
        "dones",
        "infos",
        "actions",
        "values",
        "log_probs",
        "rollout_buffer",
    } <= spy.keys
    assert spy.events == ["init", "training_start", *["rollout_start", "rollout_end"] * 4, "training_end"]
    assert spy.done_count == len(spy.terminal_infos) > 0
    for info in spy.terminal_infos:  # SB3's DummyVecEnv keys at the end of an episode
        assert info["terminal_observation"].shape == (4,) and "TimeLimit.truncated" in info


def test_n_calls_count_vector_steps_with_several_envs() -> None:
    spy = Spy()
    PPO("MlpPolicy", "CartPole-v1", **ON).learn(64, callback=spy, n_envs=4)
    assert spy.n_envs_seen == 4 and spy.n_calls == 16 and spy.timesteps == list(range(4, 65, 4))


class EveryCheckFreq(BaseCallback):
    """SB3's documented pattern: act when ``n_calls % check_freq == 0`` (check_freq need not divide n_steps)."""

    def __init__(self, check_freq: int) -> None:
        super().__init__()
        self.check_freq = check_freq
        self.fired: list[int] = []

    def _on_step(self) -> bool:
        if self.n_calls % self.check_freq == 0:
            self.fired.append(self.num_timesteps)
            self.logger.record("custom/fired", len(self.fired))
        return True


def test_the_n_calls_modulo_pattern_fires_at_its_exact_steps() -> None:
    callback = EveryCheckFreq(check_freq=7)
    PPO("MlpPolicy", "CartPole-v1", **ON).learn(48, callback=callback)
    assert callback.fired == [7, 14, 21, 28, 35, 42]


@pytest.mark.parametrize("stop_at", [5, 16])
def test_returning_false_stops_on_policy_training_at_that_step(stop_at: int) -> None:
    spy = Spy(stop_at_call=stop_at)
    model = PPO("MlpPolicy", "CartPole-v1", **ON).learn(1000, callback=spy, n_envs=2)
    assert model.num_timesteps == 2 * stop_at and spy.n_calls == stop_at
    assert model.n_updates == 0  # the interrupted rollout was not trained on (SB3 returns before train())
    assert spy.events[-1] == "training_end" and spy.events.count("rollout_end") == 0


def test_off_policy_callbacks_see_every_step_and_stop_there() -> None:
    spy = Spy()
    model = DQN("MlpPolicy", "CartPole-v1", train_freq=4, **OFF).learn(40, callback=spy)
    assert spy.timesteps == list(range(1, 41))
    assert {"buffer_actions", "replay_buffer", "num_collected_steps", "infos", "new_obs"} <= spy.keys
    assert (
        spy.events.count("rollout_start") == spy.events.count("rollout_end") == 10
    )  # one per train_freq chunk
    stopper = Spy(stop_at_call=23)
    model = SAC("MlpPolicy", "Pendulum-v1", **OFF).learn(500, callback=stopper)
    assert model.num_timesteps == 23 and stopper.timesteps[-1] == 23
    assert model.n_updates == 22 - 10  # updates after steps 11..22; none after the step that stopped


def test_no_locals_are_built_without_callbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    from lit_sb3_core.sdk.step_callbacks import StepCallbacks

    def forbidden(algorithm: Any, **values: Any) -> dict[str, Any]:
        raise AssertionError("the per-step path ran without callbacks")

    monkeypatch.setattr(StepCallbacks, "locals", staticmethod(forbidden))
    assert PPO("MlpPolicy", "CartPole-v1", **ON).learn(32).num_timesteps == 32
    assert DQN("MlpPolicy", "CartPole-v1", **OFF).learn(32).num_timesteps == 32


def test_eval_and_checkpoint_fire_at_sb3_call_counts(tmp_path: Path) -> None:
    evaluate = EvalCallback(
        gym.make("CartPole-v1"), n_eval_episodes=1, eval_freq=10, log_path=tmp_path, verbose=0
    )
    checkpoint = CheckpointCallback(save_freq=12, save_path=tmp_path / "ckpt", name_prefix="m")
    every = Spy()
    PPO("MlpPolicy", "CartPole-v1", **ON).learn(
        96,
        n_envs=2,
        callback=CallbackList([evaluate, checkpoint, EveryNTimesteps(n_steps=30, callback=every)]),
    )
    record = np.load(tmp_path / "evaluations.npz")
    assert record["timesteps"].tolist() == [20, 40, 60, 80]  # every 10 calls, 2 envs per call
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir()) == [
        "m_24_steps.zip",
        "m_48_steps.zip",
        "m_72_steps.zip",
        "m_96_steps.zip",
    ]
    assert every.timesteps == [30, 60, 90]  # EveryNTimesteps counts environment steps


def test_progress_bar_callback_counts_environment_steps() -> None:
    bar = ProgressBarCallback()
    PPO("MlpPolicy", "CartPole-v1", **ON).learn(32, callback=bar, n_envs=2)
    assert bar.pbar is None  # closed at the end of training


def _has(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


class LogsEverything(BaseCallback):
    def _on_training_start(self) -> None:
        self.logger.record(
            "hparams",
            HParam(
                {"algorithm": type(self.model).__name__, "gamma": self.model.gamma},
                {"rollout/ep_len_mean": 0},
            ),
            exclude=("stdout", "log", "json", "csv"),
        )

    def _on_step(self) -> bool:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import torch

        if self.n_calls == 16:
            self.logger.record("custom/value", 3.5)
            self.logger.record("custom/mean", 1.0)
            self.logger.record_mean("custom/averaged", 1.0)
            self.logger.record_mean("custom/averaged", 3.0)
            self.logger.record(
                "trajectory/image",
                Image(np.zeros((8, 8, 3), np.uint8), "HWC"),
                exclude=("stdout", "log", "json", "csv"),
            )
            figure = plt.figure()
            figure.add_subplot().plot(np.arange(3))
            self.logger.record(
                "trajectory/figure", Figure(figure, close=True), exclude=("stdout", "log", "json", "csv")
            )
            self.logger.record(
                "trajectory/video",
                Video(torch.zeros(1, 2, 3, 8, 8, dtype=torch.uint8), fps=4),
                exclude=("stdout", "log", "json", "csv"),
            )
        return True


def test_configured_logger_writes_through_lightning_loggers(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pytest.importorskip("matplotlib")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model = PPO("MlpPolicy", "CartPole-v1", **ON)
    model.set_logger(configure(str(tmp_path), ["stdout", "csv", "tensorboard", "json", "log"]))
    model.learn(32, callback=LogsEverything())
    out = capsys.readouterr().out
    assert "custom/" in out and "3.5" in out and "rollout/" in out  # SB3's table on stdout
    import csv

    rows = list(csv.DictReader(open(tmp_path / "progress.csv")))
    assert rows[0]["custom/value"] == "3.5" and rows[0]["custom/averaged"] == "2.0"
    assert (
        "train/loss" in rows[-1] and (tmp_path / "progress.json").exists() and (tmp_path / "log.txt").exists()
    )
    events = EventAccumulator(str(tmp_path), size_guidance={"images": 0, "tensors": 0})
    events.Reload()
    tags = events.Tags()
    assert "custom/value" in tags["scalars"] and "train/loss" in tags["scalars"]
    assert {"trajectory/image", "trajectory/figure"} <= set(tags["images"])
    if _has("moviepy.editor"):  # torch's add_video needs moviepy < 2 (as in SB3)
        assert any("trajectory/video" in tag for tag in tags["images"])
    assert events.Scalars("custom/value")[0].step == 16 * 1  # dumped with the iteration that recorded it


def test_media_into_a_text_format_is_refused(tmp_path: Path) -> None:
    logger = configure(str(tmp_path), ["csv"])
    logger.record("image", Image(np.zeros((2, 2, 3), np.uint8), "HWC"))
    with pytest.raises(FormatUnsupportedError, match="exclude"):
        logger.dump(1)


def test_model_logger_is_sb3s_and_forwards_lightnings_attributes(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    class Peek(BaseCallback):
        def _on_step(self) -> bool:
            seen["experiment"] = self.logger.experiment  # Lightning's TensorBoardLogger attribute
            seen["log_dir"] = self.logger.log_dir
            self.logger.record("custom/x", 1.0)
            return True

    model = PPO("MlpPolicy", "CartPole-v1", tensorboard_log=str(tmp_path), **ON).learn(16, callback=Peek())
    assert hasattr(seen["experiment"], "add_scalar") and Path(seen["log_dir"]).is_dir()
    # custom/x was dumped with its iteration; only the last update's train/ values wait, as in SB3
    assert all(key.startswith("train/") for key in model.logger.name_to_value)
    assert model.last_metrics["custom/x"] == 1.0


def test_ars_calls_step_callbacks_while_it_scores_candidates() -> None:
    from lit_sb3 import ARS

    spy = Spy(stop_at_call=30)
    model = ARS("LinearPolicy", "CartPole-v1", n_delta=2, seed=0).learn(10_000, callback=spy)
    assert spy.timesteps[:3] == [1, 2, 3] and spy.n_calls >= 30
    assert model.iterations == 1  # stopped after the iteration in which the callback said so


def test_a_callback_written_for_the_real_stable_baselines3_runs_unchanged() -> None:
    """Third-party SB3 integrations (wandb's WandbCallback) subclass stable_baselines3's own BaseCallback."""
    sb3_callbacks = pytest.importorskip("stable_baselines3.common.callbacks")

    class RealSB3Spy(sb3_callbacks.BaseCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.events: list[str] = []
            self.timesteps: list[int] = []

        def _init_callback(self) -> None:
            self.events.append(f"init {type(self.model).__module__.split('.')[0]}")
            self.n_envs_seen = self.training_env.num_envs

        def _on_training_start(self) -> None:
            self.events.append(f"training_start {self.locals['total_timesteps']}")

        def _on_rollout_start(self) -> None:
            self.events.append("rollout_start")

        def _on_step(self) -> bool:
            assert len(self.locals["infos"]) == len(self.locals["dones"]) == self.n_envs_seen
            self.timesteps.append(self.num_timesteps)
            return self.n_calls < 20  # stops training at the 20th vector step

        def _on_rollout_end(self) -> None:
            self.events.append("rollout_end")

        def _on_training_end(self) -> None:
            self.events.append("training_end")

    spy = RealSB3Spy()
    model = PPO("MlpPolicy", "CartPole-v1", **ON).learn(1000, callback=[spy], n_envs=2)
    assert spy.model is model and spy.logger is model.logger and spy.n_envs_seen == 2
    assert spy.n_calls == 20 and spy.timesteps == list(range(2, 41, 2)) and model.num_timesteps == 40
    assert spy.events[:2] == ["init lit_sb3_ppo", "training_start 1000"]
    assert spy.events[2:] == ["rollout_start", "rollout_end", "rollout_start", "training_end"]


def test_eval_env_without_the_training_envs_vecnormalize_warns_then_is_refused() -> None:
    from lit_sb3 import A2C
    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
    from lit_sb3_core.errors import EvalEnvMismatchError

    train_env = VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    model = A2C("MlpPolicy", train_env, n_steps=50, seed=0, policy_kwargs=dict(net_arch=[8]))
    with pytest.warns(UserWarning, match="eval_env is not"):
        # An AssertionError as SB3's sync_envs_normalization raises, with the fix in the message.
        with pytest.raises(AssertionError, match=r"VecNormalize\(eval_env, training=False") as raised:
            model.learn(100, callback=EvalCallback(gym.make("CartPole-v1"), eval_freq=50, warn=False))
    assert isinstance(raised.value, EvalEnvMismatchError) and isinstance(raised.value, TypeError)


def test_checkpoints_use_sb3s_file_names_and_load_back(tmp_path: Path) -> None:
    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize

    inner = DummyVecEnv([lambda: gym.make("CartPole-v1")])
    model = DQN("MlpPolicy", VecNormalize(inner), learning_starts=50, buffer_size=500, seed=0)
    checkpoint = CheckpointCallback(
        save_freq=100, save_path=tmp_path, save_replay_buffer=True, save_vecnormalize=True
    )
    model.learn(100, callback=checkpoint)
    names = {path.name for path in tmp_path.iterdir()}
    assert names == {
        "rl_model_100_steps.zip",
        "rl_model_replay_buffer_100_steps.pkl",  # SB3's names; NumPy archives inside, no pickle
        "rl_model_vecnormalize_100_steps.pkl",
    }
    loaded = DQN.load(tmp_path / "rl_model_100_steps.zip")
    loaded.load_replay_buffer(tmp_path / "rl_model_replay_buffer_100_steps.pkl")
    assert loaded.replay_buffer.size() == model.replay_buffer.size() == 100
    assert model.save_replay_buffer(tmp_path / "no_suffix").name == "no_suffix.npz"
