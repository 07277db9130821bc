"""The partially observed ``*NoVel`` tasks: velocities really are gone, and the ids work wherever gymnasium does."""

from __future__ import annotations

import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_ppo_recurrent.envs import NO_VELOCITY_IDS, VELOCITY_INDICES, MaskVelocityWrapper


def test_cartpole_without_velocities_observes_position_and_angle_only() -> None:
    env = gym.make("CartPoleNoVel-v1")
    assert env.observation_space.shape == (2,)
    obs, _ = env.reset(seed=0)
    for _ in range(5):
        x, x_dot, theta, theta_dot = env.unwrapped.state
        np.testing.assert_allclose(obs, [x, theta], rtol=1e-6)
        assert x_dot != 0.0 or theta_dot != 0.0
        obs, *_ = env.step(env.action_space.sample())
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(
        env.observation_space.high, gym.make("CartPole-v1").observation_space.high[[0, 2]]
    )


@pytest.mark.parametrize("no_velocity_id", sorted(NO_VELOCITY_IDS))
def test_every_registered_id_drops_its_velocities(no_velocity_id: str) -> None:
    full = gym.make(NO_VELOCITY_IDS[no_velocity_id])
    env = gym.make(no_velocity_id)
    dropped = len(VELOCITY_INDICES[NO_VELOCITY_IDS[no_velocity_id]])
    assert env.observation_space.shape[0] == full.observation_space.shape[0] - dropped
    assert env.spec is not None and env.spec.id == no_velocity_id
    assert env.spec.max_episode_steps == full.spec.max_episode_steps  # the base env's time limit
    assert gym.make(env.spec).observation_space == env.observation_space  # recreatable from its spec


def test_time_limit_can_be_changed_through_make() -> None:
    env = gym.make("CartPoleNoVel-v1", max_episode_steps=3)
    env.reset(seed=0)
    truncated = [env.step(0)[3] for _ in range(2)]
    assert truncated == [False, False]


def test_module_qualified_id_works_in_a_fresh_process() -> None:
    code = (
        "import gymnasium as gym; "
        "env = gym.make('lit_sb3_ppo_recurrent.envs:CartPoleNoVel-v1'); print(env.observation_space.shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(2,)"


def test_wrapper_errors_name_the_fix() -> None:
    with pytest.raises(ConfigurationError, match="velocity_indices="):
        MaskVelocityWrapper(gym.make("Acrobot-v1"))
    with pytest.raises(ConfigurationError, match="out of range"):
        MaskVelocityWrapper(gym.make("CartPole-v1"), velocity_indices=[4])
    with pytest.raises(ConfigurationError, match="1-D Box"):
        MaskVelocityWrapper(gym.make("FrozenLake-v1"))
    custom = MaskVelocityWrapper(gym.make("Acrobot-v1"), velocity_indices=[4, 5])
    assert custom.observation_space.shape == (4,)
