"""``get_env()`` of a model trained on channel-last images is the env in ``VecTransposeImage`` (SB3's
wrapping), and the model takes that env and its channel-first observations back everywhere."""

from __future__ import annotations

import numpy as np

from lit_sb3 import A2C
from lit_sb3.common.envs import FakeImageEnv
from lit_sb3.common.evaluation import evaluate_policy
from lit_sb3.common.vec_env import VecTransposeImage, is_vecenv_wrapped

SMALL = {"n_steps": 8, "seed": 0, "policy_kwargs": {"features_extractor_kwargs": {"features_dim": 16}}}


def _image_env(channel_first: bool = False) -> FakeImageEnv:
    return FakeImageEnv(
        screen_height=36, screen_width=36, n_channels=1, discrete=True, channel_first=channel_first
    )


def test_get_env_of_a_channel_last_image_env_is_transposed_and_taken_back() -> None:
    env = _image_env()
    model = A2C("CnnPolicy", env, **SMALL).learn(16)
    venv = model.get_env()
    assert is_vecenv_wrapped(venv, VecTransposeImage) and venv is model.get_env()
    assert venv.observation_space.shape == (1, 36, 36)
    obs = venv.reset()
    assert obs.shape == (1, 1, 36, 36)
    first, _ = env.reset(seed=1)
    # Channel-first (from get_env) and channel-last (from the env) observations predict the same action.
    assert np.array_equal(
        model.predict(np.moveaxis(first, -1, 0), deterministic=True)[0],
        model.predict(first, deterministic=True)[0],
    )
    assert model.predict(obs, deterministic=True)[0].shape == (1,)
    mean, _ = evaluate_policy(model, venv, n_eval_episodes=1)
    assert np.isfinite(mean)
    model.set_env(venv, force_reset=False)
    model.learn(8, reset_num_timesteps=False)
    model.learn(8, env=model.get_env())
    assert is_vecenv_wrapped(model.get_env(), VecTransposeImage) and model.num_timesteps == 8


def test_get_env_of_a_channel_first_image_env_is_not_wrapped() -> None:
    model = A2C("CnnPolicy", _image_env(channel_first=True), **SMALL)
    assert not is_vecenv_wrapped(model.get_env(), VecTransposeImage)
