"""The algorithm's ``n_steps`` sets up the default replay buffer only; a user's ``replay_buffer_class`` is
built from ``replay_buffer_kwargs`` alone, as in SB3 (and a dropped ``n_steps`` is warned about)."""

from __future__ import annotations

import warnings

import pytest

from lit_sb3 import SAC
from lit_sb3.common.buffers import NStepReplayBuffer, ReplayBuffer


def test_default_buffer_takes_the_algorithms_n_steps() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", n_steps=3, gamma=0.9, buffer_size=200)
    assert type(model.replay_buffer) is NStepReplayBuffer
    assert model.replay_buffer.n_steps == 3 and model.replay_buffer.gamma == 0.9


def test_a_user_buffer_class_ignores_n_steps_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="n_steps=3 is ignored"):
        model = SAC("MlpPolicy", "Pendulum-v1", n_steps=3, buffer_size=200, replay_buffer_class=ReplayBuffer)
    assert type(model.replay_buffer) is ReplayBuffer and model.replay_buffer.n_steps == 1


def test_a_user_n_step_class_keeps_its_own_settings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = SAC("MlpPolicy", "Pendulum-v1", buffer_size=200, replay_buffer_class=NStepReplayBuffer)
    assert model.replay_buffer.n_steps == 3  # NStepReplayBuffer's default, not the algorithm's n_steps=1
