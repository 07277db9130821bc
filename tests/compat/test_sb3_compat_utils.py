"""SB3's ``evaluate_policy``, ``make_vec_env`` and ``common.utils`` behaviour that SB3 code relies on: the
callback's per-env locals, Monitor-based episode counting, the no-Monitor warning, SB3's exception types."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import lit_sb3
from lit_sb3 import A2C, TD3
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.evaluation import evaluate_policy
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.noise import NormalActionNoise, OrnsteinUhlenbeckActionNoise, VectorizedActionNoise
from lit_sb3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
from lit_sb3.common.utils import check_shape_equal, get_system_info
from lit_sb3.common.vec_env import DummyVecEnv
from lit_sb3_core.errors import ConfigurationError


class _ZeroReward(gym.RewardWrapper):
    def reward(self, reward):
        return 0.0 * reward


class _AlwaysDone(gym.Wrapper):
    """Ends an 'episode' at every step, resetting the env below only when its own episode ended."""

    def __init__(self, env):
        super().__init__(env)
        self.needs_reset, self.last = True, None

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.needs_reset, self.last = terminated or truncated, obs
        return obs, reward, True, truncated, info

    def reset(self, **kwargs):
        if self.needs_reset:
            self.last, info = self.env.reset(**kwargs)
            self.needs_reset = False
            return self.last, info
        return self.last, {}


@pytest.fixture(scope="module")
def model() -> A2C:
    return A2C("MlpPolicy", "CartPole-v1", seed=0, policy_kwargs={"net_arch": [8]})


def test_callback_sees_each_sub_envs_step_as_sb3_does(model: A2C) -> None:
    env = make_vec_env("CartPole-v1", n_envs=3, seed=0)
    seen: list[tuple[int, bool]] = []

    def callback(locals_, globals_):
        assert locals_["new_observations"] is not locals_["observations"]
        assert locals_["model"] is model and isinstance(locals_["info"], dict)
        assert np.isscalar(locals_["reward"])
        seen.append((locals_["i"], bool(locals_["done"])))

    rewards, lengths = evaluate_policy(model, env, 5, callback=callback, return_episode_rewards=True)
    assert sum(done for _, done in seen) == 5 == len(rewards)
    assert len(seen) >= sum(lengths)  # one call per counted env step, never more than the steps seen
    assert {i for i, _ in seen} == {0, 1, 2}


def test_monitor_returns_and_lengths_are_counted(model: A2C) -> None:
    zero = DummyVecEnv([lambda: _ZeroReward(gym.make("CartPole-v1"))] * 2)
    assert evaluate_policy(model, zero, 2, warn=False)[0] == 0.0
    monitored = DummyVecEnv([lambda: _ZeroReward(Monitor(gym.make("CartPole-v1")))] * 2)
    assert evaluate_policy(model, monitored, 2)[0] > 0.0  # the Monitor's (true) returns
    cut = _AlwaysDone(gym.make("CartPole-v1"))
    assert evaluate_policy(model, cut, 2, return_episode_rewards=True, warn=False)[1] == [1, 1]
    whole = _AlwaysDone(Monitor(gym.make("CartPole-v1")))
    lengths = evaluate_policy(model, whole, 2, return_episode_rewards=True)[1]
    assert all(length > 1 for length in lengths)  # the Monitor's episodes, not the wrapper's


def test_warns_without_an_episode_recorder(model: A2C) -> None:
    with pytest.warns(UserWarning, match="not wrapped in a Monitor"):
        evaluate_policy(model, gym.make("CartPole-v1"), 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate_policy(model, Monitor(gym.make("CartPole-v1")), 1)
        evaluate_policy(model, gym.make("CartPole-v1"), 1, warn=False)
        evaluate_policy(model, "CartPole-v1", 1)  # built here, with a recorder
        evaluate_policy(model, model.get_env(), 1)  # the training env records its episodes


def test_make_vec_env_sub_envs_are_the_monitor_or_the_wrapper() -> None:
    env = make_vec_env("CartPole-v1", n_envs=2, seed=0)
    assert all(isinstance(sub, Monitor) for sub in env.envs)
    wrapped = make_vec_env("CartPole-v1", n_envs=1, wrapper_class=gym.wrappers.RecordEpisodeStatistics)
    assert isinstance(wrapped.envs[0], gym.wrappers.RecordEpisodeStatistics)
    assert isinstance(wrapped.envs[0].env, Monitor)
    env.close()
    wrapped.close()


def test_vectorized_action_noise_holds_one_noise_per_env_and_trains() -> None:
    base = OrnsteinUhlenbeckActionNoise(np.zeros(1), 0.3 * np.ones(1))
    noise = VectorizedActionNoise(base, 2)
    assert len(noise.noises) == 2 and all(isinstance(n, OrnsteinUhlenbeckActionNoise) for n in noise.noises)
    assert noise().shape == (2, 1)
    with pytest.raises(AssertionError):
        noise.noises = [base]
    with pytest.raises(ValueError):
        noise.noises = [NormalActionNoise(np.zeros(1), np.ones(1))] * 2
    with pytest.raises(ValueError):
        VectorizedActionNoise(None, 2)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        VectorizedActionNoise(12, 2)  # type: ignore[arg-type]
    env = make_vec_env("Pendulum-v1", n_envs=2, seed=0)
    model = TD3("MlpPolicy", env, action_noise=noise, learning_starts=10, seed=0)
    model.learn(40)
    assert model.num_timesteps == 40


def test_sb3_exception_types_and_system_info() -> None:
    with pytest.raises(AssertionError, match="different shapes"):
        check_shape_equal(spaces.Box(0, 1, (2,)), spaces.Box(0, 1, (3,)))
    with pytest.raises(ConfigurationError):
        check_shape_equal(spaces.Box(0, 1, (2,)), spaces.Box(0, 1, (3,)))
    for name, label in (("lr", "learning rate"), ("eps", "epsilon"), ("alpha", "alpha")):
        with pytest.raises(ValueError, match=f"Invalid {label}"):
            RMSpropTFLike([torch.nn.Parameter(torch.zeros(1))], **{name: -1.0})
    info, text = get_system_info(print_info=False)
    assert info["Stable-Baselines3"] == lit_sb3.__version__ and "lit-sb3" in text


def test_policy_recognises_channel_last_images_of_a_channel_first_space(model: A2C) -> None:
    policy = A2C("MlpPolicy", "CartPole-v1").policy
    policy.observation_space = spaces.Box(0, 255, (3, 8, 6), np.uint8)
    image = policy.observation_space.sample()
    last = np.transpose(image, (1, 2, 0))
    assert not policy.is_vectorized_observation(image) and not policy.is_vectorized_observation(last)
    assert policy.is_vectorized_observation(last[None])
    tensor, batched = policy.obs_to_tensor(last)
    assert not batched and tuple(tensor.shape) == (1, 3, 8, 6)
    assert torch.equal(tensor[0].cpu(), torch.as_tensor(image))


def test_a2c_takes_one_step_rollouts_and_falsy_callback_values_stop_it() -> None:
    from lit_sb3.common.callbacks import BaseCallback

    class Stop(BaseCallback):
        def _on_step(self):
            return np.bool_(False)

    stop = Stop()
    A2C("MlpPolicy", "CartPole-v1", n_steps=1, stats_window_size=1).learn(10, callback=stop)
    assert stop.n_calls == 1
    with pytest.raises(ConfigurationError, match="advantage normalization"):
        lit_sb3.PPO("MlpPolicy", "CartPole-v1", n_steps=1, batch_size=2).learn(10)
