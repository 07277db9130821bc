"""An env handed to a model (an id, an ``Env`` or a factory) is wrapped in SB3's ``Monitor``, as SB3's
algorithms do (``_wrap_env``, ``make_vec_env``); an env that records episodes already is left alone."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import RecordEpisodeStatistics

from lit_sb3 import A2C, PPO
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.monitor import Monitor

SOURCES = {
    "id": lambda: "CartPole-v1",
    "env": lambda: gym.make("CartPole-v1"),
    "factory": lambda: lambda: gym.make("CartPole-v1"),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_an_env_handed_to_the_model_is_monitored(source: str) -> None:
    model = A2C("MlpPolicy", SOURCES[source](), seed=0)
    assert model.env.env_is_wrapped(Monitor) == [True]
    assert isinstance(model.env.envs[0], Monitor)


def test_a_monitored_env_is_not_wrapped_twice_and_its_episodes_are_the_models() -> None:
    monitor = Monitor(gym.make("CartPole-v1"))
    model = PPO("MlpPolicy", monitor, n_steps=128, batch_size=64, n_epochs=1, seed=0).learn(512)
    assert model.env.envs[0] is monitor
    episodes = monitor.get_episode_rewards()
    assert len(episodes) >= 5
    infos = list(model.ep_info_buffer)
    assert [info["r"] for info in infos] == pytest.approx(episodes[-len(infos) :])
    # "t" is the Monitor's: seconds since it started, growing from episode to episode.
    times = [info["t"] for info in infos]
    assert times == sorted(times) and times[-1] > 0


def test_an_env_with_gymnasiums_recorder_is_left_alone() -> None:
    recorded = RecordEpisodeStatistics(gym.make("CartPole-v1"))
    model = A2C("MlpPolicy", recorded, seed=0)
    assert model.env.envs[0] is recorded and model.env.env_is_wrapped(Monitor) == [False]
    model.learn(300)  # one recorder, no clash over info["episode"]
    assert len(model.ep_info_buffer) > 0


def test_a_vec_env_is_used_as_it_is() -> None:
    vec_env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    model = A2C("MlpPolicy", vec_env, seed=0)
    assert model.get_env() is vec_env
    assert all(type(env) is Monitor for env in vec_env.envs)  # make_vec_env's own, not a second one
    assert not any(isinstance(env.env, Monitor) for env in vec_env.envs)
    np.testing.assert_array_equal(vec_env.env_is_wrapped(Monitor), [True, True])


def test_learn_with_n_envs_monitors_every_copy() -> None:
    model = A2C("MlpPolicy", "CartPole-v1", seed=0).learn(64, n_envs=3)
    assert model.env.env_is_wrapped(Monitor) == [True, True, True]
