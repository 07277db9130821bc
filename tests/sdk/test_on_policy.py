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
    buffer = model.rollout
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
    assert np.all(model.rollout.rewards == 1.0)


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

    trainer = RLTrainer(
        max_steps=512,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        callbacks=[Count()],
    )
    model = PPO(n_steps=64, batch_size=32, n_epochs=3, seed=0)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    assert Count.batches == model.iterations == 4
    assert trainer.global_step == 4 * 3 * 4  # optimizer steps: 4 iterations x 3 epochs x 4 minibatches


def test_a2c_runs_several_whole_iterations_per_lightning_batch() -> None:
    """A2C's 5-step iterations are grouped into batches of >= 256 env steps; the iterations are unchanged."""
    from lightning.pytorch.callbacks import Callback

    from lit_sb3 import A2C

    class Count(Callback):
        batches = 0

        def on_train_batch_end(self, *args) -> None:
            Count.batches += 1

    trainer = RLTrainer(max_steps=1000, logger=False, enable_progress_bar=False, enable_checkpointing=False,
                        callbacks=[Count()], log_every_n_steps=10)  # fmt: skip
    model = A2C(seed=0)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    # 10 steps per iteration: 26 iterations (260 steps) per batch; the budget stops at the first iteration
    # that reaches 1000 steps, inside the fourth batch, as SB3's learn loop would.
    assert model.num_timesteps == 1000 and model.iterations == 100
    assert Count.batches == 4
    assert trainer.global_step == 100  # one optimizer step per iteration
    assert model.last_metrics["time/iterations"] == 100 and "train/value_loss" in model.last_metrics


def test_module_hooks_are_honoured_during_training() -> None:
    """Policies skip nn.Module.__call__ only while no hook is registered: a forward hook still runs."""
    calls = []
    model = PPO(n_steps=32, batch_size=32, n_epochs=1, seed=0, env="CartPole-v1")
    handle = model.policy.action_net.register_forward_hook(
        lambda module, args, output: calls.append(len(output))
    )
    fit(model, RLEnvDataModule(train_env="CartPole-v1"), 64)
    handle.remove()
    # Two iterations: 32 rollout steps and one 32-sample update each.
    assert calls == ([1] * 32 + [32]) * 2


def test_plain_calls_give_the_same_outputs_as_module_calls() -> None:
    from lit_sb3_core.nets.torch_layers import hook_free

    model = PPO(seed=0, env="CartPole-v1", policy_kwargs={"share_features_extractor": False})
    policy = model.policy
    assert hook_free(policy)
    obs = torch.randn(16, 4)
    actions = torch.randint(0, 2, (16,))
    expected = [policy.evaluate_actions(obs, actions), policy.predict_values(obs)]
    policy.plain_calls = True
    try:
        got = [policy.evaluate_actions(obs, actions), policy.predict_values(obs)]
    finally:
        policy.plain_calls = False
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    handle = policy.value_net.register_forward_pre_hook(lambda module, args: None)
    assert not hook_free(policy)
    handle.remove()
