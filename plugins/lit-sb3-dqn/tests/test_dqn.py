"""DQN specifics: learning on CartPole, the epsilon schedule, target updates, metrics and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lit_sb3_core import evaluate_policy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_dqn import DQN
from lit_sb3_dqn.dqn import linear_epsilon

SMALL = {"learning_starts": 50, "buffer_size": 2000, "policy_kwargs": {"net_arch": [32, 32]}, "seed": 0}


def test_learns_cartpole() -> None:
    """rl-zoo3's CartPole settings (smaller net and buffer): clearly better than random (~22) in 20k steps."""
    model = DQN(
        learning_rate=2.3e-3,
        batch_size=64,
        buffer_size=20_000,
        learning_starts=1000,
        target_update_interval=10,
        train_freq=256,
        gradient_steps=128,
        exploration_fraction=0.16,
        exploration_final_eps=0.04,
        policy_kwargs={"net_arch": [64, 64]},
        seed=0,
    )
    model.learn(20_000, env="CartPole-v1")
    mean_reward, _ = evaluate_policy(model, "CartPole-v1", n_eval_episodes=10)
    assert mean_reward >= 100, mean_reward
    assert model.last_metrics["rollout/ep_rew_mean"] > 60


def test_epsilon_schedule_and_logged_metrics() -> None:
    assert linear_epsilon(1.0, 0.05, 0.1, 1.0) == 1.0
    assert linear_epsilon(1.0, 0.05, 0.1, 0.95) == pytest.approx(0.525)
    assert linear_epsilon(1.0, 0.05, 0.1, 0.5) == 0.05
    model = DQN(env="CartPole-v1", exploration_fraction=0.5, **SMALL).learn(1000)
    metrics = model.last_metrics
    # Half the budget decays epsilon to its final value; the last write is at the end of the run.
    assert metrics["rollout/exploration_rate"] == pytest.approx(0.05)
    for key in ("train/loss", "train/n_updates", "train/learning_rate", "rollout/ep_rew_mean", "time/fps"):
        assert key in metrics, key
    # learning_starts=50, train_freq=4: updates after every chunk past step 50.
    assert metrics["train/n_updates"] == len(range(52, 1001, 4))
    assert metrics["train/learning_rate"] == 1e-4


def test_target_network_follows_the_interval() -> None:
    frozen = DQN(env="CartPole-v1", target_update_interval=10**6, **SMALL)
    initial = [p.clone() for p in frozen.policy.q_net_target.parameters()]
    frozen.learn(400)
    for before, after in zip(initial, frozen.policy.q_net_target.parameters()):
        torch.testing.assert_close(before, after)  # never copied within the run
    assert not all(
        torch.equal(a, b)
        for a, b in zip(frozen.policy.q_net.parameters(), frozen.policy.q_net_target.parameters())
    )
    # train_freq=1 with one update per step: the copy at each step precedes that step's update, so the
    # target always holds the online weights from exactly one update ago.
    every_step = DQN(env="CartPole-v1", target_update_interval=1, train_freq=1, **SMALL)
    every_step.learn(120)
    q_net, target = every_step.policy.q_net, every_step.policy.q_net_target
    assert not any(p.requires_grad for p in target.parameters())
    snapshot = [p.clone() for p in q_net.parameters()]
    every_step.learn(1, reset_num_timesteps=False)
    for a, b in zip(snapshot, target.parameters()):
        torch.testing.assert_close(a, b)


def test_predict_explores_only_when_not_deterministic() -> None:
    model = DQN(env="CartPole-v1", **SMALL)
    obs = np.zeros((64, 4), dtype=np.float32)
    greedy, _ = model.predict(obs, deterministic=True)
    assert len(set(greedy.tolist())) == 1
    model.exploration_rate = 1.0
    np.random.seed(0)
    random_actions, _ = model.predict(obs, deterministic=False)
    assert set(random_actions.tolist()) == {0, 1}
    single, _ = model.predict(obs[0], deterministic=False)
    assert np.asarray(single).shape == ()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_steps": 3},
        {"optimize_memory_usage": True, "replay_buffer_kwargs": {"handle_timeout_termination": False}},
        {"gradient_steps": -1, "train_freq": [2, "episode"]},
        {"optimize_memory_usage": True},
    ],
)
def test_variants_train(kwargs: dict) -> None:
    model = DQN(env="CartPole-v1", **{**SMALL, **kwargs}).learn(300)
    assert model.n_updates > 0
    assert all(torch.isfinite(p).all() for p in model.policy.parameters())


def test_unsupported_spaces_and_bad_arguments_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="does not support Box"):
        DQN(env="Pendulum-v1")
    with pytest.raises(ConfigurationError, match="target_update_interval"):
        DQN(target_update_interval=0)
    with pytest.raises(ConfigurationError, match="exploration_final_eps"):
        DQN(exploration_final_eps=1.5)
    with pytest.raises(ConfigurationError, match="train_freq"):
        DQN(train_freq=(4, "hour"))
    with pytest.raises(ConfigurationError, match="counts episodes"):
        DQN(train_freq=(1, "episode"), **SMALL).learn(100, env="CartPole-v1", n_envs=2)


def test_cnn_policy_on_channel_last_images_with_compact_buffer() -> None:
    from gymnasium import spaces

    from lit_sb3_core.testing.envs import SpaceTestEnv

    image = spaces.Box(0, 255, (36, 36, 3), np.uint8)
    model = DQN(
        "CnnPolicy",
        env=lambda: SpaceTestEnv(image, spaces.Discrete(3)),
        learning_starts=32,
        batch_size=8,
        buffer_size=100,
        optimize_memory_usage=True,
        seed=0,
    ).learn(40)
    assert model.replay_buffer.observations.dtype == np.uint8  # stored once, as bytes
    assert model.replay_buffer.next_observations is None and model.n_updates == 2
    action, _ = model.predict(image.sample(), deterministic=True)
    assert 0 <= int(action) < 3
