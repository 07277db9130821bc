"""ReplayBuffer / DictReplayBuffer: storage, sampling semantics, n-step returns and persistence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3_core.data.replay_buffer import DictReplayBuffer, ReplayBuffer
from lit_sb3_core.errors import ConfigurationError

OBS = spaces.Box(-100.0, 100.0, shape=(2,), dtype=np.float32)
ACT = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)


def _obs(t: float, n_envs: int = 1) -> np.ndarray:
    """Observation at time t: both coordinates equal t (env e adds 1000 * e)."""
    return np.array([[t + 1000 * e, t + 1000 * e] for e in range(n_envs)], dtype=np.float32)


def _fill(
    buffer: ReplayBuffer,
    steps: int,
    terminated_at: set[int] = frozenset(),
    truncated_at: set[int] = frozenset(),
    final_offset: float = 0.5,
) -> None:
    """Step t stores obs t, action t/100, reward t; episode ends give next_obs t + final_offset."""
    for t in range(steps):
        term = np.array([t in terminated_at] * buffer.n_envs)
        trunc = np.array([t in truncated_at] * buffer.n_envs)
        ended = t in terminated_at or t in truncated_at
        next_obs = _obs(t + final_offset, buffer.n_envs) if ended else _obs(t + 1, buffer.n_envs)
        buffer.add(
            _obs(t, buffer.n_envs),
            next_obs,
            np.full((buffer.n_envs, 1), t / 100),
            np.full(buffer.n_envs, float(t)),
            term,
            trunc,
        )


def _all_rows(buffer: ReplayBuffer) -> np.ndarray:
    return np.arange(buffer.size())


def test_circular_overwrite_keeps_newest() -> None:
    buffer = ReplayBuffer(5, OBS, ACT)
    _fill(buffer, 7)
    assert buffer.full and buffer.pos == 2 and len(buffer) == 5
    # Rows 0 and 1 were overwritten by steps 5 and 6; rows 2..4 still hold steps 2..4.
    np.testing.assert_array_equal(buffer.rewards[:, 0], [5, 6, 2, 3, 4])
    samples = buffer.sample(200)
    assert set(samples.rewards.flatten().tolist()) == {2.0, 3.0, 4.0, 5.0, 6.0}
    np.testing.assert_allclose(samples.next_observations[:, 0], samples.rewards.flatten() + 1)


def test_sample_shapes_dtypes_and_seeded() -> None:
    buffer = ReplayBuffer(100, OBS, ACT, seed=3)
    _fill(buffer, 50)
    first = buffer.sample(32)
    assert first.observations.shape == (32, 2) and first.observations.dtype == torch.float32
    assert first.actions.shape == (32, 1) and first.rewards.shape == (32, 1) and first.dones.shape == (32, 1)
    assert first.discounts is None
    again = ReplayBuffer(100, OBS, ACT, seed=3)
    _fill(again, 50)
    torch.testing.assert_close(again.sample(32).rewards, first.rewards)


def test_empty_buffer_refuses_to_sample() -> None:
    with pytest.raises(RuntimeError, match="empty replay buffer"):
        ReplayBuffer(10, OBS, ACT).sample(4)


def test_timeouts_bootstrap_but_terminations_do_not() -> None:
    buffer = ReplayBuffer(20, OBS, ACT)
    _fill(buffer, 10, terminated_at={3}, truncated_at={6})
    data = buffer._get_samples(_all_rows(buffer), None)
    dones = data.dones.flatten().tolist()
    assert dones[3] == 1.0  # termination: no bootstrap
    assert dones[6] == 0.0  # truncation: bootstrap ...
    assert data.next_observations[6, 0] == 6.5  # ... from the true final observation
    assert sum(dones) == 1.0

    no_handling = ReplayBuffer(20, OBS, ACT, handle_timeout_termination=False)
    _fill(no_handling, 10, terminated_at={3}, truncated_at={6})
    dones = no_handling._get_samples(_all_rows(no_handling), None).dones.flatten().tolist()
    assert dones[3] == 1.0 and dones[6] == 1.0


@pytest.mark.parametrize("full", [False, True])
def test_optimize_memory_usage_matches_plain_buffer(full: bool) -> None:
    steps = 13 if full else 7
    plain = ReplayBuffer(10, OBS, ACT)
    compact = ReplayBuffer(10, OBS, ACT, optimize_memory_usage=True)
    for buffer in (plain, compact):
        _fill(buffer, steps, terminated_at={2}, truncated_at={4, 9})
    assert compact.next_observations is None  # observations stored once
    rows = np.array([r for r in range(10) if (r != compact.pos or not compact.full) and r < compact.size()])
    a, b = plain._get_samples(rows, None), compact._get_samples(rows, None)
    torch.testing.assert_close(b.observations, a.observations)
    torch.testing.assert_close(b.rewards, a.rewards)
    torch.testing.assert_close(b.dones, a.dones)
    # Where the episode continues or was truncated the next observation must be the true one.
    bootstrap = (a.dones.flatten() == 0).numpy()
    torch.testing.assert_close(b.next_observations[bootstrap], a.next_observations[bootstrap])
    # Truncated at step 9 (the side table keeps its final observation 9.5, not the reset obs).
    if full:
        row9 = 9 % 10
        assert compact._get_samples(np.array([row9]), None).next_observations[0, 0] == 9.5
    # Sampling never returns the row whose next observation is missing.
    if full:
        sampled = compact.sample(500).rewards.flatten()
        assert float(compact.rewards[compact.pos, 0]) not in sampled.tolist()


def test_n_step_returns_against_hand_computation() -> None:
    gamma = 0.9
    buffer = ReplayBuffer(50, OBS, ACT, n_steps=3, gamma=gamma)
    # Episode 1: steps 0..4, terminated at 4. Episode 2: steps 5..8, truncated at 8. Episode 3: 9..10 (open).
    _fill(buffer, 11, terminated_at={4}, truncated_at={8})
    data = buffer._get_samples(_all_rows(buffer), None)
    returns = data.rewards.flatten().numpy()
    discounts = data.discounts.flatten().numpy()
    dones = data.dones.flatten().numpy()
    next_obs = data.next_observations[:, 0].numpy()

    def expect(t: int, rewards: list[float], discount: float, done: float, nxt: float) -> None:
        assert returns[t] == pytest.approx(sum(r * gamma**k for k, r in enumerate(rewards)), rel=1e-6), t
        assert discounts[t] == pytest.approx(discount, rel=1e-6), t
        assert dones[t] == done, t
        assert next_obs[t] == pytest.approx(nxt), t

    expect(0, [0, 1, 2], gamma**3, 0.0, 3)  # full window, bootstraps from obs 3
    expect(2, [2, 3, 4], gamma**3, 1.0, 4.5)  # window ends on the termination: no bootstrap
    expect(3, [3, 4], gamma**2, 1.0, 4.5)  # cut by the termination
    expect(4, [4], gamma, 1.0, 4.5)
    expect(6, [6, 7, 8], gamma**3, 0.0, 8.5)  # ends on a truncation: bootstrap from its final obs
    expect(7, [7, 8], gamma**2, 0.0, 8.5)
    expect(9, [9, 10], gamma**2, 0.0, 11)  # stops at the newest transition, never runs past it


def test_n_step_windows_stop_at_the_write_position_of_a_full_buffer() -> None:
    buffer = ReplayBuffer(6, OBS, ACT, n_steps=4, gamma=0.5)
    _fill(buffer, 8)  # rows hold steps [6, 7, 2, 3, 4, 5]; pos = 2
    data = buffer._get_samples(np.array([1, 4]), None)
    # Row 1 (step 7) is the newest: a one-step window. Row 4 (step 4): steps 4, 5, 6, 7 wrap around.
    assert data.rewards.flatten().tolist() == pytest.approx([7, 4 + 0.5 * 5 + 0.25 * 6 + 0.125 * 7])
    assert data.discounts.flatten().tolist() == pytest.approx([0.5, 0.5**4])


def test_truncate_last_transition_marks_a_reset() -> None:
    buffer = ReplayBuffer(10, OBS, ACT, n_steps=3, gamma=0.5)
    _fill(buffer, 4)
    buffer.truncate_last_transition()
    assert buffer.dones[3, 0] == 1.0 and buffer.timeouts[3, 0] == 1.0
    _fill(buffer, 2)  # new episode written after the reset
    data = buffer._get_samples(np.array([2]), None)
    assert data.rewards.item() == pytest.approx(2 + 0.5 * 3)  # does not run into the new episode
    assert data.dones.item() == 0.0  # and still bootstraps


def test_several_envs_use_one_column_each() -> None:
    buffer = ReplayBuffer(20, OBS, ACT, n_envs=2, seed=0)
    assert buffer.buffer_size == 10
    _fill(buffer, 5)
    samples = buffer.sample(400)
    obs = samples.observations[:, 0].numpy()
    np.testing.assert_allclose(samples.next_observations[:, 0].numpy(), obs + 1)
    assert (obs >= 1000).any() and (obs < 1000).any()  # both envs are sampled


def test_discrete_observations_and_actions() -> None:
    buffer = ReplayBuffer(10, spaces.Discrete(5), spaces.Discrete(3), n_envs=2)
    buffer.add(
        np.array([1, 2]), np.array([2, 3]), np.array([0, 2]), np.array([1.0, 2.0]), np.array([False, True])
    )
    data = buffer._get_samples(np.array([0, 0]), np.array([0, 1]))
    assert data.observations.tolist() == [1, 2] and data.next_observations.tolist() == [2, 3]
    assert data.actions.dtype == torch.int64 and data.actions.flatten().tolist() == [0, 2]
    assert data.dones.flatten().tolist() == [0.0, 1.0]


def test_dict_observations() -> None:
    space = spaces.Dict({"pos": spaces.Box(-10, 10, (2,), np.float32), "mode": spaces.Discrete(3)})
    for compact in (False, True):
        buffer = DictReplayBuffer(10, space, ACT, optimize_memory_usage=compact)
        for t in range(4):
            obs = {"pos": np.full((1, 2), t, np.float32), "mode": np.array([t % 3])}
            nxt = {"pos": np.full((1, 2), t + 1, np.float32), "mode": np.array([(t + 1) % 3])}
            buffer.add(obs, nxt, np.zeros((1, 1)), np.array([t]), np.array([False]), np.array([t == 3]))
        data = buffer._get_samples(np.arange(4), None)
        assert set(data.observations) == {"pos", "mode"}
        assert data.observations["pos"][:, 0].tolist() == [0, 1, 2, 3]
        assert data.next_observations["pos"][:, 0].tolist() == [1, 2, 3, 4]
        assert data.next_observations["mode"].tolist() == [1, 2, 0, 1]
    with pytest.raises(ConfigurationError, match="must be used with Dict obs space only"):
        DictReplayBuffer(10, OBS, ACT)
    with pytest.raises(AssertionError):  # the type SB3 asserts it with
        DictReplayBuffer(10, OBS, ACT)


@pytest.mark.parametrize("kwargs", [{}, {"optimize_memory_usage": True}, {"n_envs": 2, "n_steps": 2}])
def test_save_load_round_trip_is_identical(tmp_path: Path, kwargs: dict) -> None:
    buffer = ReplayBuffer(12, OBS, ACT, seed=1, **kwargs)
    _fill(buffer, 9, terminated_at={2}, truncated_at={5})
    path = buffer.save(tmp_path / "buffer")
    assert path.suffix == ".npz"
    with np.load(path, allow_pickle=False) as data:  # readable without pickle
        assert "actions" in data.files
    loaded = ReplayBuffer.load(path)
    assert (loaded.pos, loaded.full, loaded.n_envs, loaded.n_steps) == (
        buffer.pos,
        buffer.full,
        buffer.n_envs,
        buffer.n_steps,
    )
    for name in ("actions", "rewards", "dones", "timeouts"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(buffer, name))
    np.testing.assert_array_equal(loaded.observations, buffer.observations)
    assert loaded._final_obs.keys() == buffer._final_obs.keys()
    # The sampling generator continues where it was: the next minibatches are identical.
    a, b = buffer.sample(16), loaded.sample(16)
    for x, y in zip(a, b):
        if x is not None:
            torch.testing.assert_close(x, y)


def test_state_dict_round_trip_and_compatibility_check() -> None:
    buffer = ReplayBuffer(8, OBS, ACT)
    _fill(buffer, 11)
    other = ReplayBuffer(8, OBS, ACT)
    other.load_state_dict(buffer.state_dict())
    np.testing.assert_array_equal(other.rewards, buffer.rewards)
    assert (other.pos, other.full) == (buffer.pos, buffer.full)
    with pytest.raises(ConfigurationError, match="observation space"):
        ReplayBuffer(8, spaces.Box(-1, 1, (3,), np.float32), ACT).load_state_dict(buffer.state_dict())


def test_load_rejects_other_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ReplayBuffer.load(tmp_path / "missing.npz")
    bogus = tmp_path / "bogus.npz"
    np.savez(bogus, x=np.zeros(3))
    with pytest.raises(ConfigurationError, match="not a lit-sb3 replay buffer"):
        ReplayBuffer.load(bogus)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"buffer_size": 0}, "buffer_size"),
        ({"n_steps": 0}, "n_steps"),
        ({"gamma": 1.5}, "gamma"),
        ({"buffer_size": 1, "optimize_memory_usage": True}, "at least 2 rows"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, message: str) -> None:
    args = {"buffer_size": 10, **kwargs}
    with pytest.raises(ConfigurationError, match=message):
        ReplayBuffer(args.pop("buffer_size"), OBS, ACT, **args)


def test_dict_observations_take_n_step_returns() -> None:
    """A deliberate difference: SB3 asserts that Dict observations have no n-step returns; here the Dict
    buffer computes them as the flat one does (the window only reads rewards, dones and next observations)."""
    space = spaces.Dict({"pos": spaces.Box(-10, 10, (2,), np.float32), "mode": spaces.Discrete(3)})
    buffer = DictReplayBuffer(10, space, ACT, n_steps=3, gamma=0.5)
    for t in range(5):
        obs = {"pos": np.full((1, 2), t, np.float32), "mode": np.array([t % 3])}
        nxt = {"pos": np.full((1, 2), t + 1, np.float32), "mode": np.array([(t + 1) % 3])}
        buffer.add(obs, nxt, np.zeros((1, 1)), np.array([t]), np.array([False]), np.array([False]))
    data = buffer._get_samples(np.array([0, 4]), None)
    assert data.rewards.flatten().tolist() == pytest.approx([0 + 0.5 * 1 + 0.25 * 2, 4])
    assert data.discounts.flatten().tolist() == pytest.approx([0.125, 0.5])
    assert data.next_observations["pos"][:, 0].tolist() == [3, 5]
    assert data.next_observations["mode"].tolist() == [0, 2]
