import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.data.rollout_buffer import RolloutBuffer, compute_gae


def _reference_gae(rewards, values, dones_after, last_value, gamma, lam):
    """Textbook GAE for one env, with dones_after[t] = episode ended after step t."""
    n = len(rewards)
    adv = np.zeros(n)
    gae = 0.0
    for t in reversed(range(n)):
        next_value = last_value if t == n - 1 else values[t + 1]
        not_done = 1.0 - dones_after[t]
        delta = rewards[t] + gamma * next_value * not_done - values[t]
        gae = delta + gamma * lam * not_done * gae
        adv[t] = gae
    return adv


def test_gae_matches_textbook_with_episode_boundaries() -> None:
    rng = np.random.default_rng(0)
    n_steps, n_envs = 7, 3
    rewards = rng.normal(size=(n_steps, n_envs)).astype(np.float32)
    values = rng.normal(size=(n_steps, n_envs)).astype(np.float32)
    dones_after = (rng.random((n_steps, n_envs)) < 0.3).astype(np.float32)
    episode_starts = np.zeros_like(dones_after)
    episode_starts[1:] = dones_after[:-1]
    episode_starts[0] = 1.0
    last_values = rng.normal(size=n_envs).astype(np.float32)
    advantages = compute_gae(rewards, values, episode_starts, last_values, dones_after[-1], 0.97, 0.9)
    for env in range(n_envs):
        expected = _reference_gae(
            rewards[:, env], values[:, env], dones_after[:, env], last_values[env], 0.97, 0.9
        )
        np.testing.assert_allclose(advantages[:, env], expected, rtol=1e-5, atol=1e-5)


def test_gae_lambda_one_gives_discounted_returns() -> None:
    rewards = np.ones((4, 1), dtype=np.float32)
    values = np.zeros((4, 1), dtype=np.float32)
    advantages = compute_gae(rewards, values, np.zeros((4, 1)), np.zeros(1), np.ones(1), 0.5, 1.0)
    np.testing.assert_allclose(advantages[:, 0], [1.875, 1.75, 1.5, 1.0])


def test_minibatches_cover_the_rollout_once_and_returns_are_advantage_plus_value() -> None:
    obs_space = spaces.Box(-1, 1, (2,), np.float32)
    buffer = RolloutBuffer(5, 2, obs_space, spaces.Discrete(3), gamma=0.9, gae_lambda=0.8)
    for step in range(5):
        obs = np.full((2, 2), step, dtype=np.float32) + np.array([[0.0], [0.5]], dtype=np.float32)
        buffer.add(obs, torch.tensor([step % 3, 1]), np.ones(2), np.zeros(2), torch.zeros(2), torch.zeros(2))
    assert buffer.full
    buffer.compute_returns_and_advantage(torch.zeros(2), np.zeros(2))
    torch.testing.assert_close(buffer.returns, buffer.advantages + buffer.values)
    seen = []
    sizes = []
    for batch in buffer.minibatches(4, generator=torch.Generator().manual_seed(0)):
        sizes.append(len(batch.actions))
        seen.extend(batch.observations[:, 0].tolist())
    assert sizes == [4, 4, 2]
    assert sorted(seen) == sorted([s + off for s in range(5) for off in (0.0, 0.5)])


def test_adding_past_the_end_is_an_error() -> None:
    buffer = RolloutBuffer(1, 1, spaces.Box(-1, 1, (1,)), spaces.Discrete(2))
    buffer.add(np.zeros((1, 1)), torch.zeros(1), np.zeros(1), np.zeros(1), torch.zeros(1), torch.zeros(1))
    try:
        buffer.add(np.zeros((1, 1)), torch.zeros(1), np.zeros(1), np.zeros(1), torch.zeros(1), torch.zeros(1))
    except RuntimeError as exc:
        assert "reset()" in str(exc)
    else:
        raise AssertionError("expected RuntimeError")


def test_full_batch_is_every_sample_in_storage_order_without_a_copy() -> None:
    obs_space = spaces.Box(-1, 1, (2,), np.float32)
    buffer = RolloutBuffer(3, 2, obs_space, spaces.Discrete(3))
    for step in range(3):
        obs = np.full((2, 2), step, dtype=np.float32) + np.array([[0.0], [0.5]], dtype=np.float32)
        buffer.add(
            obs, torch.tensor([step, 2]), np.ones(2), np.zeros(2), torch.full((2,), step), torch.zeros(2)
        )
    buffer.compute_returns_and_advantage(torch.zeros(2), np.zeros(2))
    batch = buffer.full_batch()
    assert batch.observations[:, 0].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5]
    assert batch.actions.tolist() == [0, 2, 1, 2, 2, 2]
    assert batch.old_values.tolist() == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]
    torch.testing.assert_close(batch.returns, batch.advantages + batch.old_values)
    assert batch.observations.data_ptr() == buffer.observations.data_ptr()  # a view of the storage
