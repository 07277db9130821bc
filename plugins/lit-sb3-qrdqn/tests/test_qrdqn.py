"""QR-DQN specifics: defaults, greedy actions from quantile means, learning (the loss: tests/nets/test_losses.py)."""

from __future__ import annotations

import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_qrdqn import QRDQN


def test_defaults_and_greedy_actions_from_quantile_means() -> None:
    model = QRDQN(env="CartPole-v1", seed=0, policy_kwargs={"n_quantiles": 7})
    assert model.lr_schedule(1.0) == 5e-5
    assert model.exploration_fraction == 0.005 and model.exploration_final_eps == 0.01
    assert model.max_grad_norm is None
    assert model.policy.optimizer_kwargs == {"eps": 0.01 / 32}
    obs = torch.randn(16, 4)
    quantiles = model.policy.quantile_net(obs)
    assert quantiles.shape == (16, 7, 2)
    torch.testing.assert_close(model.policy(obs), quantiles.mean(dim=1).argmax(dim=1))


def test_learns_cartpole() -> None:
    """rl-zoo3's CartPole settings (smaller net and buffer): clearly better than random (~22) in 20k steps."""
    model = QRDQN(
        learning_rate=2.3e-3,
        batch_size=64,
        buffer_size=20_000,
        learning_starts=1000,
        target_update_interval=10,
        train_freq=256,
        gradient_steps=128,
        exploration_fraction=0.16,
        exploration_final_eps=0.04,
        policy_kwargs={"net_arch": [64, 64], "n_quantiles": 10},
        seed=0,
    )
    model.learn(20_000, env="CartPole-v1")
    mean_reward, _ = evaluate_policy(model, "CartPole-v1", n_eval_episodes=10)
    assert mean_reward >= 100, mean_reward
    assert model.last_metrics["train/loss"] > 0
