"""SB3's callbacks as Lightning callbacks: each one, through learn(callback=...) and RLTrainer."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from lit_sb3 import (
    PPO,
    CallbackList,
    CheckpointCallback,
    EvalCallback,
    EveryNTimesteps,
    LogEveryNTimesteps,
    RLEnvDataModule,
    RLTrainer,
    StopTrainingOnMaxEpisodes,
    StopTrainingOnNoModelImprovement,
    StopTrainingOnRewardThreshold,
    list_callbacks,
    make_callback,
)
from lit_sb3_core.sb3.callbacks import RLCallback

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 0}


def test_eval_callback_keeps_the_best_model_and_a_pickle_free_record(tmp_path: Path) -> None:
    callback = EvalCallback("CartPole-v1", n_eval_episodes=2, eval_freq=64, log_path=tmp_path,
                            best_model_save_path=tmp_path, verbose=0)  # fmt: skip
    PPO(**SMALL).learn(256, env="CartPole-v1", callback=callback)
    record = np.load(tmp_path / "evaluations.npz", allow_pickle=False)
    assert record["timesteps"].tolist() == [64, 128, 192, 256]
    assert record["results"].shape == (4, 2) and record["ep_lengths"].shape == (4, 2)
    assert callback.best_mean_reward == record["results"].mean(axis=1).max()
    assert PPO.load(tmp_path / "best_model.zip").num_timesteps in record["timesteps"].tolist()


def test_stop_on_reward_threshold_stops_cleanly() -> None:
    stop = StopTrainingOnRewardThreshold(reward_threshold=0.0, verbose=0)
    callback = EvalCallback(
        "CartPole-v1", callback_on_new_best=stop, n_eval_episodes=1, eval_freq=32, verbose=0
    )
    model = PPO(**SMALL).learn(10_000, env="CartPole-v1", callback=callback)
    assert model.num_timesteps == 32


class ConstantEpisodes(gym.Env):
    """Every episode lasts 5 steps with reward 1: evaluations of any policy are identical."""

    observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 1.0, self.t >= 5, False, {}


def test_stop_on_no_model_improvement() -> None:
    stop = StopTrainingOnNoModelImprovement(max_no_improvement_evals=0, min_evals=1)
    callback = EvalCallback(
        ConstantEpisodes(), callback_after_eval=stop, n_eval_episodes=1, eval_freq=32, verbose=0
    )
    model = PPO(**SMALL).learn(10_000, env=ConstantEpisodes, callback=callback)
    # Nothing can improve after the first evaluation: training stops at the second.
    assert model.num_timesteps == 64 and stop.no_improvement_evals == 1


def test_stop_on_max_episodes() -> None:
    callback = StopTrainingOnMaxEpisodes(max_episodes=3)
    model = PPO(**SMALL).learn(100_000, env="CartPole-v1", n_envs=2, callback=callback)
    assert callback.n_episodes >= 6 and model.num_timesteps < 1000


def test_checkpoint_callback_writes_loadable_model_files(tmp_path: Path) -> None:
    callback = CheckpointCallback(save_freq=64, save_path=tmp_path, name_prefix="ppo")
    PPO(**SMALL).learn(256, env="CartPole-v1", n_envs=2, callback=callback)
    # 64 calls = 128 env steps with 2 envs.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ppo_128_steps.zip", "ppo_256_steps.zip"]
    assert PPO.load(tmp_path / "ppo_128_steps.zip").num_timesteps == 128


class Recorder(RLCallback):
    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__()
        self.seen: list[int] = []
        self.stop_at = stop_at

    def _on_step(self) -> bool:
        self.seen.append(self.num_timesteps)
        return self.stop_at is None or self.num_timesteps < self.stop_at


def test_every_n_timesteps_list_and_returning_false() -> None:
    every = Recorder()
    stopper = Recorder(stop_at=160)
    callbacks = CallbackList([EveryNTimesteps(n_steps=64, callback=every), stopper])
    model = PPO(**SMALL).learn(1000, env="CartPole-v1", callback=callbacks)
    # Called after every environment step (SB3's rhythm), stopped at the step that returned False.
    assert model.num_timesteps == 160
    assert every.seen == [64, 128] and stopper.seen == list(range(1, 161))


def test_function_callbacks_and_rl_callback_argument() -> None:
    calls = []

    def fn(locals_: dict, globals_: dict) -> bool:
        calls.append(locals_["self"].num_timesteps)
        return len(calls) < 2

    assert PPO(**SMALL).learn(1000, env="CartPole-v1", callback=fn).num_timesteps == 2
    recorder = Recorder()
    trainer = RLTrainer(
        max_steps=96,
        rl_callback=recorder,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
    )
    trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    assert recorder.seen == list(range(1, 97))
    with pytest.raises(TypeError, match="callback must be"):
        PPO(**SMALL).learn(64, env="CartPole-v1", callback=42)


def test_log_every_n_timesteps_prints_the_metrics(capsys: pytest.CaptureFixture) -> None:
    callback = LogEveryNTimesteps(n_steps=64)
    PPO(**SMALL).learn(128, env="CartPole-v1", callback=callback)
    out = capsys.readouterr().out
    assert callback.dumps == 2 and "train/" in out and "| loss" in out.replace("   ", "")


def test_callbacks_are_registered_by_name() -> None:
    assert {"eval", "checkpoint", "stop_on_reward_threshold", "every_n_timesteps"} <= set(list_callbacks())
    callback = make_callback("stop_on_max_episodes", max_episodes=2)
    assert isinstance(callback, StopTrainingOnMaxEpisodes)
