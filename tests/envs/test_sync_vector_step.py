"""``LitSyncVectorEnv``'s own SAME_STEP step for array spaces gives what gymnasium's ``SyncVectorEnv.step`` gives.

Two copies of the same seeded envs step side by side with the same actions, one through lit-sb3's step and
one through gymnasium's, across many episode ends: observations, rewards, flags and infos (``final_obs``,
``final_info``, the envs' own info keys and their masks) must be identical at every step.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from lit_sb3_core.envs.vector_envs import LitSyncVectorEnv


class Counter(gym.Env):
    """Counts its steps into the observation; ends after a seeded random length; infos only sometimes."""

    observation_space = spaces.Box(0, 1000, (2,), np.int64)
    action_space = spaces.MultiDiscrete([3, 2])

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t, self.length = 0, int(self.np_random.integers(1, 6))
        return np.array([self.t, self.length]), {"start": self.length}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        info: dict[str, Any] = {"odd": np.array([self.t % 2, 1.0])} if self.t % 2 else {}
        done = self.t >= self.length
        return np.array([self.t, int(np.sum(action))]), float(self.t), done and self.t % 3 == 0, done, info


def _assert_same(ours: Any, theirs: Any, where: str) -> None:
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), where
        for key in theirs:
            _assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, np.ndarray) and theirs.dtype == object:
        assert isinstance(ours, np.ndarray) and ours.dtype == object and ours.shape == theirs.shape, where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            _assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), where
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, where
        np.testing.assert_array_equal(ours, theirs, err_msg=where)
    else:
        assert type(ours) is type(theirs) and ours == theirs, where


@pytest.mark.parametrize("make", ["CartPole-v1", "Pendulum-v1", Counter], ids=["discrete", "box", "infos"])
def test_the_array_step_is_gymnasiums_step(make: Any) -> None:
    n_envs = 3

    def factory() -> gym.Env:
        return gym.make(make, max_episode_steps=20) if isinstance(make, str) else make()

    ours = LitSyncVectorEnv([factory] * n_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    theirs = SyncVectorEnv([factory] * n_envs, autoreset_mode=AutoresetMode.SAME_STEP)
    assert ours._array_step, "array spaces take lit-sb3's step"
    _assert_same(ours.reset(seed=7), theirs.reset(seed=7), "reset")
    ours.action_space.seed(3)
    ends = 0
    for step in range(120):
        actions = ours.action_space.sample()
        result, expected = ours.step(actions), theirs.step(actions)
        for name, a, b in zip(("obs", "rewards", "terminated", "truncated", "infos"), result, expected):
            _assert_same(a, b, f"step {step} {name}")
        assert result[0] is not ours._observations, "copy=True hands out a copy, as gymnasium's"
        ends += int(np.sum(expected[2] | expected[3]))
    assert ends >= 10, "the run must cross many episode ends"
    ours.close()
    theirs.close()


def test_dict_observations_take_gymnasiums_step() -> None:
    def factory() -> gym.Env:
        return gym.wrappers.TransformObservation(
            gym.make("CartPole-v1"),
            lambda obs: {"x": obs},
            spaces.Dict({"x": gym.make("CartPole-v1").observation_space}),
        )

    env = LitSyncVectorEnv([factory] * 2, autoreset_mode=AutoresetMode.SAME_STEP)
    assert not env._array_step
    env.reset(seed=0)
    obs, *_ = env.step(np.array([0, 1]))
    assert obs["x"].shape == (2, 4)
    env.close()
