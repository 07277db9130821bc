"""SB3's VecEnvs over gymnasium vector envs take one action row per env and ignore extra rows, as SB3's
DummyVecEnv and SubprocVecEnv do (with one warning), so VecCheckNan and other wrappers see SB3's results."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3.common.vec_env import DummyVecEnv, VecCheckNan


class EchoEnv(gym.Env):
    """Observes the action it was given."""

    observation_space = spaces.Box(-np.inf, np.inf, (1,), np.float64)
    action_space = spaces.Box(-np.inf, np.inf, (1,), np.float64)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        return np.zeros(1), {}

    def step(self, action: np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        return np.asarray(action, np.float64).reshape(1), 0.0, False, False, {}


def test_extra_action_rows_are_ignored_with_one_warning() -> None:
    venv = DummyVecEnv([EchoEnv, EchoEnv])
    venv.reset()
    with pytest.warns(UserWarning, match=r"3 actions for 2 env\(s\)"):
        obs, _, _, _ = venv.step(np.array([[1.0], [2.0], [3.0]]))
    np.testing.assert_array_equal(obs, [[1.0], [2.0]])
    obs, _, _, _ = venv.step([[4.0], [5.0], [6.0]])  # a list too; no second warning
    np.testing.assert_array_equal(obs, [[4.0], [5.0]])


def test_vec_check_nan_checks_the_rows_the_envs_took() -> None:
    venv = VecCheckNan(DummyVecEnv([EchoEnv]), raise_exception=True)
    venv.reset()
    with pytest.warns(UserWarning, match="actions for 1 env"):
        venv.step(np.array([[0.0], [1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        venv.step(np.array([[np.nan]]))
