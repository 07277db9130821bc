"""The bit-flipping environment: spaces, dynamics, the sparse reward, episode ends and its gymnasium id."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_her import BitFlippingEnv


@pytest.mark.parametrize("continuous", [False, True])
def test_passes_gymnasiums_env_checker(continuous: bool) -> None:
    check_env(BitFlippingEnv(n_bits=5, continuous=continuous), skip_render_check=True)


def test_flipping_the_differing_bits_reaches_the_goal() -> None:
    env = BitFlippingEnv(n_bits=8)
    obs, _ = env.reset(seed=3)
    assert set(obs) == {"observation", "achieved_goal", "desired_goal"}
    np.testing.assert_array_equal(obs["observation"], obs["achieved_goal"])
    differing = np.flatnonzero(obs["achieved_goal"] != obs["desired_goal"])
    assert differing.size > 0  # never starts solved
    for i, bit in enumerate(differing):
        obs, reward, terminated, truncated, info = env.step(bit)
        last = i == differing.size - 1
        assert (reward, terminated, info["is_success"]) == (
            (0.0, True, True) if last else (-1.0, False, False)
        )
        assert not truncated
    np.testing.assert_array_equal(obs["achieved_goal"], obs["desired_goal"])


def test_continuous_actions_flip_every_bit_with_a_positive_component() -> None:
    env = BitFlippingEnv(n_bits=4, continuous=True)
    obs, _ = env.reset(seed=0)
    start = obs["observation"].copy()
    obs, *_ = env.step(np.array([0.5, -0.5, 0.0, 1.0], dtype=np.float32))
    np.testing.assert_array_equal(obs["observation"], np.where([True, False, False, True], 1 - start, start))
    assert env.action_space == gym.spaces.Box(-1.0, 1.0, shape=(4,), dtype=np.float32)


def test_episodes_are_truncated_after_max_steps() -> None:
    env = BitFlippingEnv(n_bits=6, max_steps=3)
    env.reset(seed=1)
    ends = []
    for _ in range(3):
        _, _, terminated, truncated, _ = env.step(0)  # flipping one bit back and forth never solves 6 bits
        ends.append((terminated, truncated))
    assert ends == [(False, False), (False, False), (False, True)]
    assert BitFlippingEnv(n_bits=6).max_steps == 6


def test_compute_reward_is_vectorised() -> None:
    env = BitFlippingEnv(n_bits=3)
    achieved = np.array([[0, 1, 1], [1, 1, 1], [0, 0, 0]], dtype=np.int8)
    desired = np.array([[0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=np.int8)
    rewards = env.compute_reward(achieved, desired, [{}] * 3)
    np.testing.assert_array_equal(rewards, [0.0, -1.0, 0.0])
    assert rewards.dtype == np.float32
    assert env.compute_reward(achieved[1], desired[1], {}) == -1.0


def test_random_starts_and_goals_are_seeded() -> None:
    def starts(seed: int) -> list[np.ndarray]:
        env = BitFlippingEnv(n_bits=10)
        obs = [env.reset(seed=seed)[0]] + [env.reset()[0] for _ in range(4)]
        return [np.concatenate([o["observation"], o["desired_goal"]]) for o in obs]

    np.testing.assert_array_equal(starts(5), starts(5))
    assert not np.array_equal(starts(5), starts(6))
    assert len({tuple(s) for s in starts(5)}) == 5  # the goal changes every episode


def test_a_fixed_goal_start_is_drawn_once_even_when_it_is_already_solved() -> None:
    """With the all-ones goal each start is one draw of the env's generator (SB3's env draws it so), so
    seeded runs keep SB3's random stream; a random-goal start never equals its goal."""
    fixed = BitFlippingEnv(n_bits=2, random_goal=False)
    starts = [fixed.reset(seed=5)[0]["observation"]] + [fixed.reset()[0]["observation"] for _ in range(15)]
    rng, _ = gym.utils.seeding.np_random(5)
    np.testing.assert_array_equal(starts, [rng.integers(0, 2, size=2, dtype=np.int8) for _ in range(16)])
    assert any(np.array_equal(start, [1, 1]) for start in starts)
    random_goal = BitFlippingEnv(n_bits=1)
    for seed in range(16):
        obs, _ = random_goal.reset(seed=seed)
        assert not np.array_equal(obs["observation"], obs["desired_goal"])


def test_success_rewards_minus_zero_as_compute_reward_does() -> None:
    env = BitFlippingEnv(n_bits=1, random_goal=False)
    env.reset(seed=0)
    env.state[:] = 0
    obs, reward, terminated, _, info = env.step(0)
    assert (reward, terminated, info["is_success"]) == (0.0, True, True)
    assert np.signbit(reward) == np.signbit(
        env.compute_reward(obs["achieved_goal"], obs["desired_goal"], info)
    )


def test_registered_id_builds_it_with_kwargs() -> None:
    env = gym.make("lit_sb3_her.envs:BitFlipping-v0", n_bits=7, continuous=True)
    assert env.unwrapped.n_bits == 7 and isinstance(env.action_space, gym.spaces.Box)
    assert env.get_wrapper_attr("compute_reward")(np.zeros(7), np.ones(7), {}) == -1.0


@pytest.mark.parametrize(("kwargs", "match"), [({"n_bits": 0}, "n_bits"), ({"max_steps": 0}, "max_steps")])
def test_bad_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        BitFlippingEnv(**kwargs)
