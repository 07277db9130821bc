"""Issue 24: PPO refuses, at construction, the settings SB3's PPO asserts on (AssertionError there, a
ConfigurationError that is also an AssertionError here), and allows what SB3 allows."""

import numpy as np
import pytest
import torch

from lit_sb3 import PPO
from lit_sb3_core.errors import ConfigurationError


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


@pytest.mark.parametrize("clip_range_vf", [-0.2, 0, float("nan")])
def test_a_clip_range_vf_that_is_not_positive_is_asserted(clip_range_vf: float) -> None:
    with pytest.raises(AssertionError, match="clip_range_vf must be a finite number > 0") as caught:
        PPO("MlpPolicy", "CartPole-v1", clip_range_vf=clip_range_vf)
    assert isinstance(caught.value, ConfigurationError)


def test_a_rollout_of_one_step_is_refused_at_construction() -> None:
    with pytest.raises(AssertionError, match=r"n_steps \* n_envs must be greater than 1"):
        PPO("MlpPolicy", "Pendulum-v1", n_steps=1)


def test_batch_size_one_is_allowed_without_advantage_normalization() -> None:
    with pytest.raises(AssertionError, match="batch_size must be greater than 1"):
        PPO("MlpPolicy", "Pendulum-v1", n_steps=4, batch_size=1)
    model = PPO("MlpPolicy", "Pendulum-v1", n_steps=1, batch_size=1, normalize_advantage=False, n_epochs=1)
    model.learn(4)
    assert model.num_timesteps == 4


def test_a_truncated_minibatch_warns_in_sb3s_words() -> None:
    with pytest.warns(UserWarning, match="there will be a truncated mini-batch of size 1"):
        model = PPO("MlpPolicy", "Pendulum-v1", n_steps=64, batch_size=63, n_epochs=1)
        model.learn(64)
    loss = model.logger.name_to_value["train/loss"]  # still there after learn(), as in SB3
    assert np.isfinite(loss)
