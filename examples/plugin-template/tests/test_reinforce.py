"""REINFORCE's own behaviour: Monte-Carlo returns, the optional baseline, clear errors, learning CartPole."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_core import evaluate_policy, make_algo
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_reinforce import REINFORCE


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def test_registered_and_importable_lazily() -> None:
    assert type(make_algo("REINFORCE", env="CartPole-v1")) is REINFORCE


def test_without_a_baseline_the_weights_are_monte_carlo_returns() -> None:
    gamma = 0.9
    model = REINFORCE(env="CartPole-v1", n_steps=64, gamma=gamma, use_baseline=False, seed=0).learn(64)
    buffer = model.rollout
    rewards, starts = buffer.rewards[:, 0], buffer.episode_starts[:, 0]
    expected, future = np.zeros(64, dtype=np.float32), 0.0
    for t in reversed(range(64)):  # G_t = r_t + gamma * G_{t+1} within an episode; nothing after the rollout
        ends_here = t + 1 < 64 and starts[t + 1]
        future = rewards[t] + (0.0 if ends_here else gamma * future)
        expected[t] = future
    assert starts[1:].any(), "the rollout should hold several CartPole episodes"
    np.testing.assert_allclose(buffer.returns[:, 0].numpy(), expected, rtol=1e-5)


@pytest.mark.parametrize("use_baseline", [True, False])
def test_the_value_head_learns_only_as_a_baseline(use_baseline: bool) -> None:
    model = REINFORCE(env="CartPole-v1", n_steps=64, use_baseline=use_baseline, seed=0)
    value_head = model.policy.value_net.weight.detach().clone()
    action_head = model.policy.action_net.weight.detach().clone()
    model.learn(128)
    assert not torch.equal(model.policy.action_net.weight, action_head)
    assert torch.equal(model.policy.value_net.weight, value_head) is not use_baseline


def test_saved_hyperparameters_are_exactly_the_constructor_arguments() -> None:
    model = REINFORCE(env="CartPole-v1", use_baseline=False)
    assert "gae_lambda" not in model.hparams and model.hparams["use_baseline"] is False
    assert model.gae_lambda == 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"use_baseline": "yes"}, "use_baseline must be True or False"),
        ({"vf_coef": -1.0}, "vf_coef must be a finite number >= 0, got -1.0"),
        ({"ent_coef": float("nan")}, "ent_coef must be a finite number >= 0, got nan"),
        ({"max_grad_norm": 0.0}, "max_grad_norm must be a finite number > 0 or None, got 0.0"),
        ({"n_steps": 0}, "n_steps must be a positive integer"),
    ],
)
def test_bad_hyperparameters_are_refused_clearly(kwargs: dict, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        REINFORCE(**kwargs)


def test_learns_cartpole_with_a_small_budget() -> None:
    env = gym.make("CartPole-v1")
    env.reset(seed=0)
    model = REINFORCE(env="CartPole-v1", n_steps=256, learning_rate=0.01, seed=0)
    before, _ = evaluate_policy(model, env, n_eval_episodes=10, deterministic=False)
    model.learn(25_000, n_envs=4)
    after, _ = evaluate_policy(model, env, n_eval_episodes=10, deterministic=False)
    assert after >= max(100.0, 3 * before), f"mean return {before:.1f} -> {after:.1f} after 25k steps"
