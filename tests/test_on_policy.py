"""The shared on-policy loop: rollouts, truncation bootstrapping, budget, logged metrics."""

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer


class CountingEnv(gym.Env):
    """Observation = step count; reward 1 per step; never terminates (TimeLimit truncates it)."""

    observation_space = spaces.Box(0.0, 100.0, (1,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.array([0.0], np.float32), {}

    def step(self, action):
        self.t += 1
        return np.array([float(self.t)], np.float32), 1.0, False, False, {}


def fit(model, dm, steps: int) -> RLTrainer:
    trainer = RLTrainer(max_steps=steps, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    trainer.fit(model, datamodule=dm)
    return trainer


def test_truncated_episodes_bootstrap_from_the_true_final_observation() -> None:
    horizon = 3
    dm = RLEnvDataModule(train_env=lambda: gym.wrappers.TimeLimit(CountingEnv(), horizon))
    model = PPO(n_steps=7, batch_size=7, n_epochs=1, gamma=0.9, learning_rate=0.0, seed=0)
    fit(model, dm, 7)
    buffer = model.rollout_buffer
    with torch.no_grad():
        final_value = model.policy.predict_values(torch.tensor([[float(horizon)]])).item()
    rewards = buffer.rewards[:, 0]
    observations = buffer.observations[:, 0, 0].tolist()
    # Steps whose action led to the truncation started from obs 2 (the third step of an episode).
    for t, obs in enumerate(observations):
        expected = 1.0 + 0.9 * final_value if obs == horizon - 1 else 1.0
        assert rewards[t] == pytest.approx(expected, rel=1e-5), (t, obs)
    assert buffer.episode_starts[:, 0].tolist() == [1, 0, 0, 1, 0, 0, 1]


def test_terminated_episodes_do_not_bootstrap() -> None:
    dm = RLEnvDataModule(train_env="CartPole-v1", seed=0)
    model = PPO(n_steps=64, batch_size=64, n_epochs=1, seed=0)
    fit(model, dm, 64)
    # CartPole terminates (falls) long before its 500-step time limit: every reward stays exactly 1.
    assert np.all(model.rollout_buffer.rewards == 1.0)


def test_the_budget_counts_whole_iterations_over_all_envs() -> None:
    model = PPO(n_steps=10, batch_size=30, n_epochs=1, seed=0)
    fit(model, RLEnvDataModule(train_env="CartPole-v1", n_envs=3), 65)
    assert model.num_timesteps == 90 and model.iterations == 3


def test_rollout_too_small_is_refused() -> None:
    from lit_sb3_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="n_steps \\* n_envs"):
        fit(PPO(n_steps=1, batch_size=2), RLEnvDataModule(train_env="CartPole-v1"), 10)


def test_sb3_metric_names_are_logged_against_environment_steps(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model = PPO(n_steps=64, batch_size=64, n_epochs=2, seed=0, clip_range_vf=0.2)
    trainer = RLTrainer(max_steps=512, default_root_dir=tmp_path, enable_progress_bar=False)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", n_envs=2))
    events = EventAccumulator(trainer.logger.log_dir)
    events.Reload()
    tags = set(events.Tags()["scalars"])
    expected = {
        "rollout/ep_rew_mean", "rollout/ep_len_mean", "time/fps", "time/iterations", "time/time_elapsed",
        "time/total_timesteps", "train/entropy_loss", "train/policy_gradient_loss", "train/value_loss",
        "train/approx_kl", "train/clip_fraction", "train/loss", "train/explained_variance", "train/n_updates",
        "train/clip_range", "train/clip_range_vf", "train/learning_rate", "train/std",
    }  # fmt: skip
    assert expected <= tags, expected - tags
    assert [event.step for event in events.Scalars("train/loss")] == [128, 256, 384, 512]
    assert [event.value for event in events.Scalars("train/n_updates")] == [2, 4, 6, 8]


def test_lightning_runs_once_per_iteration_not_per_step() -> None:
    from lightning.pytorch.callbacks import Callback

    class Count(Callback):
        batches = 0

        def on_train_batch_end(self, *args) -> None:
            Count.batches += 1

    trainer = RLTrainer(max_steps=512, logger=False, enable_progress_bar=False, enable_checkpointing=False,
                        callbacks=[Count()])
    model = PPO(n_steps=64, batch_size=32, n_epochs=3, seed=0)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    assert Count.batches == model.iterations == 4
    assert trainer.global_step == 4 * 3 * 4  # optimizer steps: 4 iterations x 3 epochs x 4 minibatches
