"""Issue 24: DQN on several envs as SB3's: the warning about target updates on every vector step, and
gradient_steps=-1 training once per transition collected, readable in the logger after learn()."""

import warnings

import gymnasium as gym
import pytest

from lit_sb3 import DQN
from lit_sb3.common.env_util import make_vec_env


def test_more_envs_than_the_target_update_interval_warn() -> None:
    with pytest.warns(UserWarning, match="The number of environments used is greater"):
        DQN("MlpPolicy", make_vec_env("CartPole-v1", n_envs=2), buffer_size=100, target_update_interval=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        DQN("MlpPolicy", make_vec_env("CartPole-v1", n_envs=2), buffer_size=100, target_update_interval=2)


def test_gradient_steps_minus_one_trains_once_per_transition() -> None:
    env = make_vec_env(lambda: gym.wrappers.TimeLimit(gym.make("CartPole-v1"), 50), n_envs=2)
    model = DQN(
        "MlpPolicy",
        env,
        policy_kwargs={"net_arch": [16]},
        learning_starts=0,
        buffer_size=1000,
        train_freq=3,
        gradient_steps=-1,
    )
    model.learn(total_timesteps=3)  # one chunk of 3 vector steps: 6 transitions
    assert model.num_timesteps == 6
    assert model.logger.name_to_value["train/n_updates"] == 6
