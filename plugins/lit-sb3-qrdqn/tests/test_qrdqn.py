"""QR-DQN specifics: the quantile Huber loss, defaults, greedy actions from quantile means, learning."""

from __future__ import annotations

import pytest
import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_qrdqn import QRDQN, quantile_huber_loss


def test_quantile_huber_loss_by_hand() -> None:
    # Two quantiles (levels 0.25, 0.75) at 0 and 1; one target at 0.5.
    current = torch.tensor([[0.0, 1.0]])
    target = torch.tensor([[0.5]])
    # delta = 0.5 for the first quantile (weight |0.25 - 0| = 0.25), -0.5 for the second (|0.75 - 1| = 0.25);
    # Huber(0.5) = 0.125 each: sum over quantiles = 0.0625, mean over the batch and targets.
    assert quantile_huber_loss(current, target).item() == pytest.approx(0.0625)
    # Beyond |delta| > 1 the kernel is linear: delta = 3 at level 0.5 gives 0.5 * (3 - 0.5).
    assert quantile_huber_loss(torch.tensor([[0.0]]), torch.tensor([[3.0]])).item() == pytest.approx(1.25)


def test_quantile_huber_loss_matches_sb3_contrib() -> None:
    contrib = pytest.importorskip("sb3_contrib.common.utils")
    generator = torch.Generator().manual_seed(0)
    for current_shape, target_shape in (((8, 5), (8, 7)), ((8, 2, 5), (8, 1, 7))):
        current = torch.randn(current_shape, generator=generator) * 2
        target = torch.randn(target_shape, generator=generator) * 2
        for summed in (True, False):
            torch.testing.assert_close(
                quantile_huber_loss(current, target, sum_over_quantiles=summed),
                contrib.quantile_huber_loss(current, target, sum_over_quantiles=summed),
            )
    with pytest.raises(ValueError, match="dimensions"):
        quantile_huber_loss(torch.zeros(2, 3), torch.zeros(2, 1, 3))


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
