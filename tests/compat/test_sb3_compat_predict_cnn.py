"""SB3's ``predict`` shapes and errors, the CnnPolicy's refusal of non-image observations, and schedules
that return plain floats, on real envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from lit_sb3 import A2C, DQN, PPO
from lit_sb3.common.envs import FakeImageEnv
from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
from lit_sb3_core.errors import ConfigurationError, ImageSpaceError


@pytest.mark.parametrize("model_class", [PPO, DQN])
def test_predict_on_one_discrete_observation_returns_a_0d_array(model_class):
    model = model_class("MlpPolicy", "CartPole-v1", policy_kwargs=dict(net_arch=[8]))
    obs, _ = gym.make("CartPole-v1").reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert isinstance(action, np.ndarray) and action.shape == ()
    policy_action, _ = model.policy.predict(obs, deterministic=True)
    assert isinstance(policy_action, np.ndarray) and policy_action.shape == () and policy_action == action
    batch, _ = model.predict(np.stack([obs, obs]), deterministic=True)
    assert batch.shape == (2,)


def test_predict_on_reset_tuple_names_the_gym_api_mix():
    env = gym.make("CartPole-v1")
    model = PPO("MlpPolicy", env, policy_kwargs=dict(net_arch=[8]))
    with pytest.raises(ValueError, match="mixing Gym API"):
        model.predict(env.reset())


def test_cnn_policy_on_normalized_floats_asserts_as_sb3():
    env = FakeImageEnv(screen_height=36, screen_width=36, n_channels=1, channel_first=True)
    vec_env = VecNormalize(DummyVecEnv([lambda: env]))  # float observations: not images to normalize
    kwargs = dict(n_steps=16, policy_kwargs=dict(features_extractor_kwargs=dict(features_dim=8)))
    with pytest.raises(AssertionError, match="needs image observations") as caught:
        A2C("CnnPolicy", vec_env, **kwargs)
    assert isinstance(caught.value, (ImageSpaceError, ConfigurationError))
    kwargs["policy_kwargs"]["normalize_images"] = False
    A2C("CnnPolicy", vec_env, **kwargs).learn(16)  # already normalised: taken as they are


def test_a_callable_schedule_gives_plain_floats():
    model = PPO("MlpPolicy", "CartPole-v1", learning_rate=lambda progress: progress * np.sin(1.0))
    assert type(model.lr_schedule(1.0)) is float
    assert model.lr_schedule(0.5) == pytest.approx(0.5 * np.sin(1.0))


def test_create_mlp_with_pre_and_post_linear_modules():
    from torch import nn

    from lit_sb3.common.torch_layers import create_mlp

    layers = create_mlp(
        6, 2, [8, 12], pre_linear_modules=[nn.BatchNorm1d], post_linear_modules=[nn.LayerNorm]
    )
    kinds = [type(layer) for layer in layers]
    assert kinds == [nn.BatchNorm1d, nn.Linear, nn.LayerNorm, nn.ReLU] * 2 + [nn.BatchNorm1d, nn.Linear]
    assert [layer.num_features for layer in layers if isinstance(layer, nn.BatchNorm1d)] == [6, 8, 12]
    no_bias = create_mlp(6, 2, [8], with_bias=False)
    assert all(layer.bias is None for layer in no_bias if isinstance(layer, nn.Linear))
    out = nn.Sequential(*layers).eval()(__import__("torch").zeros(3, 6))
    assert out.shape == (3, 2)


def test_seeded_dqn_explores_the_same_in_predict():
    actions = []
    for _ in range(2):
        model = DQN("MlpPolicy", "CartPole-v1", seed=3, policy_kwargs=dict(net_arch=[8]))
        model.exploration_rate = 1.0
        obs = np.zeros(4, dtype=np.float32)
        np.random.seed(3)
        actions.append([int(model.predict(obs, deterministic=False)[0]) for _ in range(20)])
    assert actions[0] == actions[1]
