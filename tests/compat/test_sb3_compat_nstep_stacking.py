"""SB3's ``NStepReplayBuffer`` and ``StackedObservations.compute_stacking`` in the facade."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3 import SAC
from lit_sb3.common.buffers import NStepReplayBuffer, ReplayBuffer
from lit_sb3.common.vec_env.stacked_observations import StackedObservations


def _filled(
    n_envs: int = 1, done_at: int | None = None, truncated_at: int | None = None
) -> NStepReplayBuffer:
    box = spaces.Box(0, 10, (2,), np.float32)
    buffer = NStepReplayBuffer(10, box, box, n_envs=n_envs, n_steps=3, gamma=0.5)
    for i in range(6):
        obs = np.full((n_envs, 2), i, np.float32)
        done = np.full(n_envs, float(i in (done_at, truncated_at)))
        infos = [{"TimeLimit.truncated": i == truncated_at, "other": 1}] * n_envs  # SB3's call: infos
        buffer.add(obs, obs + 1, np.zeros((n_envs, 2), np.float32), np.ones(n_envs), done, infos)
    return buffer


def test_n_step_buffer_sums_discounted_rewards_up_to_termination() -> None:
    buffer = _filled(done_at=1)
    assert isinstance(buffer, ReplayBuffer) and buffer.n_steps == 3 and buffer.gamma == 0.5
    batch = buffer._get_samples(np.array([0, 2]))  # SB3's signature: rows only
    assert batch.discounts is not None
    np.testing.assert_allclose(batch.rewards.numpy().ravel(), [1 + 0.5, 1 + 0.5 + 0.25])
    np.testing.assert_allclose(batch.dones.numpy().ravel(), [1.0, 0.0])
    np.testing.assert_allclose(batch.discounts.numpy().ravel(), [0.25, 0.125])
    np.testing.assert_allclose(batch.next_observations.numpy()[:, 0], [2.0, 5.0])


def test_sb3_infos_mark_truncations_which_bootstrap() -> None:
    buffer = _filled(truncated_at=1)
    np.testing.assert_array_equal(buffer.dones[:3, 0], [0, 1, 0])
    np.testing.assert_array_equal(buffer.timeouts[:3, 0], [0, 1, 0])
    batch = buffer._get_samples(np.array([0]))
    assert batch.dones.item() == 0.0  # truncated: the target bootstraps
    assert batch.rewards.item() == pytest.approx(1.5)


def test_rows_only_sampling_picks_envs_with_several_envs() -> None:
    batch = _filled(n_envs=2)._get_samples(np.arange(4))
    assert batch.observations.shape == (4, 2)


def test_off_policy_algorithms_build_an_n_step_buffer_for_n_steps() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", n_steps=3, gamma=0.9, buffer_size=200)
    assert isinstance(model.replay_buffer, NStepReplayBuffer)
    assert model.replay_buffer.n_steps == 3 and model.replay_buffer.gamma == 0.9
    assert type(SAC("MlpPolicy", "Pendulum-v1", buffer_size=200).replay_buffer) is ReplayBuffer


@pytest.mark.parametrize(
    ("shape", "dtype", "order", "expected"),
    [
        ((4,), np.float32, None, (False, -1, (16,), -1)),
        ((4, 5), np.float32, "first", (True, 1, (16, 5), 0)),
        ((3, 16, 24), np.uint8, None, (True, 1, (12, 16, 24), 0)),
        ((16, 24, 3), np.uint8, None, (False, -1, (16, 24, 12), -1)),
        ((3, 16, 24), np.uint8, "last", (False, -1, (3, 16, 96), -1)),
    ],
)
def test_compute_stacking(shape: tuple, dtype: type, order: str | None, expected: tuple) -> None:
    space = spaces.Box(0, 255, shape, dtype)
    assert StackedObservations.compute_stacking(4, space, order) == expected
    stacker = StackedObservations(2, 4, space, order)
    assert stacker.stacked_observation_space.shape == expected[2]


def test_compute_stacking_rejects_unknown_orders() -> None:
    with pytest.raises(ValueError, match="channels_order"):
        StackedObservations.compute_stacking(4, spaces.Box(0, 1, (3,)), "middle")


def test_batch_size_larger_than_buffer_size_samples_with_replacement() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", batch_size=64, buffer_size=20, learning_starts=10)
    model.learn(40)
    batch = model.replay_buffer.sample(64)
    assert batch.observations.shape == (64, 3)
    assert model.replay_buffer.size() == 20
