"""SB3's buffer API: numpy ``RolloutBuffer``/``DictRolloutBuffer`` and the replay buffers' SB3 layout."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3.common.buffers import DictReplayBuffer, DictRolloutBuffer, ReplayBuffer, RolloutBuffer
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.type_aliases import (
    DictReplayBufferSamples,
    DictRolloutBufferSamples,
    ReplayBufferSamples,
    RolloutBufferSamples,
)
from lit_sb3.common.vec_env import VecNormalize


def _fill(buffer: RolloutBuffer, steps: int, n_envs: int, obs: dict | np.ndarray) -> None:
    for step in range(steps):
        buffer.add(
            obs,
            np.full((n_envs, 1), step, dtype=np.float64),
            np.full(n_envs, float(step)),
            np.zeros(n_envs),
            torch.full((n_envs, 1), 0.5),
            torch.zeros(n_envs),
        )


def test_rollout_buffer_stores_numpy_in_the_spaces_dtypes() -> None:
    obs_space = spaces.Box(0, 255, (3,), np.uint8)
    action_space = spaces.Box(-1, 1, (1,), np.float64)
    buffer = RolloutBuffer(4, obs_space, action_space, device="auto", gae_lambda=0.9, gamma=0.5, n_envs=2)
    assert buffer.observations.shape == (4, 2, 3) and buffer.observations.dtype == np.uint8
    assert buffer.actions.dtype == np.float64 and isinstance(buffer.rewards, np.ndarray)
    _fill(buffer, 4, 2, np.full((2, 3), 7, np.uint8))
    assert buffer.full and buffer.size() == 4 and buffer.values[0].tolist() == [0.5, 0.5]

    buffer.compute_returns_and_advantage(torch.zeros(2), np.ones(2))
    # Last step ends the episode: its advantage is r - V; earlier ones add the discounted next delta.
    deltas = [t + 0.5 * 0.5 - 0.5 for t in range(3)] + [3 - 0.5]
    expected = [0.0] * 4
    running = 0.0
    for t in reversed(range(4)):
        running = deltas[t] + 0.5 * 0.9 * running
        expected[t] = running
    np.testing.assert_allclose(buffer.advantages[:, 0], expected, rtol=1e-6)
    np.testing.assert_allclose(buffer.returns, buffer.advantages + buffer.values)

    batches = list(buffer.get(batch_size=3))
    assert [len(batch.actions) for batch in batches] == [3, 3, 2]
    assert all(type(batch) is RolloutBufferSamples for batch in batches)
    assert batches[0].observations.dtype == torch.uint8
    assert batches[0].actions.dtype == torch.float32  # actions are sampled as float32, as SB3's
    seen = sorted(torch.cat([batch.actions.flatten() for batch in batches]).tolist())
    assert seen == sorted([float(t) for t in range(4)] * 2)
    buffer.reset()
    assert buffer.size() == 0 and not buffer.full


def test_dict_rollout_buffer_and_its_space_checks() -> None:
    space = spaces.Dict({"a": spaces.Box(-1, 1, (2,)), "b": spaces.Discrete(3)})
    buffer = DictRolloutBuffer(2, space, spaces.Box(-1, 1, (1,)), n_envs=1)
    assert buffer.observations["b"].shape == (2, 1, 1) and buffer.observations["b"].dtype == np.int64
    _fill(buffer, 2, 1, {"a": np.ones((1, 2), np.float32), "b": np.array([2])})
    buffer.compute_returns_and_advantage(torch.zeros(1), np.zeros(1))
    (batch,) = buffer.get()
    assert type(batch) is DictRolloutBufferSamples and batch.observations["b"].flatten().tolist() == [2, 2]
    with pytest.raises(AssertionError, match="DictRolloutBuffer must be used with Dict obs space only"):
        DictRolloutBuffer(2, spaces.Box(-1, 1, (2,)), spaces.Discrete(2))
    with pytest.raises(ValueError, match="Use DictRolloutBuffer"):
        RolloutBuffer(2, space, spaces.Discrete(2))
    with pytest.raises(RuntimeError, match="needs a full buffer"):
        next(DictRolloutBuffer(3, space, spaces.Discrete(2)).get())


def test_replay_buffer_arrays_in_sb3_layout() -> None:
    buffer = ReplayBuffer(8, spaces.Box(0, 9, (2,), np.int16), spaces.Box(-1, 1, (1,), np.float64), "auto")
    assert buffer.observations.shape == (8, 1, 2) and buffer.observations.dtype == np.int16
    assert buffer.actions.dtype == np.float32 == ReplayBuffer._maybe_cast_dtype(np.float64)
    assert ReplayBuffer._maybe_cast_dtype(np.int64) == np.int64
    for t in range(3):
        buffer.add(np.full((1, 2), t), np.full((1, 2), t + 1), np.zeros((1, 1)), np.ones(1), np.zeros(1))
    assert buffer.observations[:3, 0, 0].tolist() == [0, 1, 2]
    assert buffer.next_observations[:3, 0, 0].tolist() == [1, 2, 3]
    samples = buffer.sample(4)
    assert type(samples) is ReplayBufferSamples and samples.observations.dtype == torch.int16

    dict_space = spaces.Dict({"x": spaces.Box(-1, 1, (1,))})
    dict_buffer = DictReplayBuffer(4, dict_space, spaces.Discrete(2))
    dict_buffer.add({"x": np.zeros((1, 1))}, {"x": np.ones((1, 1))}, np.zeros(1), np.ones(1), np.zeros(1))
    assert isinstance(dict_buffer.observations, dict)
    assert isinstance(dict_buffer.sample(2), DictReplayBufferSamples)
    assert not isinstance(samples, DictReplayBufferSamples)


def test_replay_sample_normalized_by_a_vec_normalize() -> None:
    env = VecNormalize(make_vec_env(lambda: gym.make("Pendulum-v1"), n_envs=1, seed=0))
    buffer = ReplayBuffer(200, env.observation_space, env.action_space, device="cpu")
    env.reset()
    obs = env.get_original_obs()
    for _ in range(200):
        _, _, done, info = env.step(np.array([env.action_space.sample()]))
        next_obs, reward = env.get_original_obs(), env.get_original_reward()
        buffer.add(obs, next_obs, np.zeros((1, 1)), reward, done, info)
        obs = next_obs
    state = np.random.get_state()  # an unseeded buffer draws from numpy's global generator, as SB3's
    raw = buffer.sample(100)
    np.random.set_state(state)  # the same rows again, normalized this time
    normalized = buffer.sample(100, env)
    for name in ("observations", "next_observations"):
        expected = env.normalize_obs(getattr(raw, name).numpy())
        np.testing.assert_allclose(getattr(normalized, name).numpy(), expected, rtol=1e-5)
        assert not np.allclose(getattr(raw, name).numpy(), expected)
    np.testing.assert_allclose(
        normalized.rewards.numpy(), env.normalize_reward(raw.rewards.numpy()), rtol=1e-5
    )
    assert normalized.rewards.shape == raw.rewards.shape and normalized.rewards.dtype == torch.float32
