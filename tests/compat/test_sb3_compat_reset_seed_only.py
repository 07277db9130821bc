"""Envs whose ``reset`` takes ``seed`` but not ``options`` work, as in SB3's VecEnvs (options only when given)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

from lit_sb3 import PPO
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.vec_env import DummyVecEnv, SubprocVecEnv


class SeedOnlyEnv(gym.Env):
    """Five steps per episode; ``reset(seed=None)`` without ``options``, as many hand-written envs have."""

    observation_space = gym.spaces.Box(-1, 1, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, dict[str, Any]]:  # type: ignore[override]
        super().reset(seed=seed)
        self.t = 0
        return self.np_random.uniform(-1, 1, 2).astype(np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        self.t += 1
        return np.zeros(2, np.float32), 1.0, False, self.t >= 5, {}


@pytest.mark.parametrize("vec_env_cls", [DummyVecEnv, SubprocVecEnv])
def test_vec_envs_and_training_accept_seed_only_resets(vec_env_cls: type) -> None:
    env = make_vec_env(SeedOnlyEnv, n_envs=2, seed=3, vec_env_cls=vec_env_cls)
    try:
        first = env.reset()
        env.seed(3)
        np.testing.assert_array_equal(env.reset(), first)  # the seed still reaches the env
        PPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0).learn(32)
    finally:
        env.close()


def test_monitor_counts_episodes_of_seed_only_envs() -> None:
    monitor = Monitor(SeedOnlyEnv())
    monitor.reset(seed=1)
    for _ in range(5):
        monitor.step(0)
    assert monitor.get_episode_rewards() == [5.0] and monitor.get_episode_lengths() == [5]
    monitor.reset()
    assert monitor.episode_lengths == 0
