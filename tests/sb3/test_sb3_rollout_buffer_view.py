"""``model.rollout_buffer`` is SB3's numpy rollout buffer, a view of the tensors lit-sb3 trains on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3 import A2C, PPO
from lit_sb3.common.buffers import DictRolloutBuffer, RolloutBuffer
from lit_sb3_core.errors import ConfigurationError


def test_rollout_buffer_reads_as_sb3_numpy_arrays_sharing_the_training_memory() -> None:
    model = PPO("MlpPolicy", "Pendulum-v1", n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    assert model.rollout_buffer is None  # nothing collected yet
    model.learn(32)
    buffer = model.rollout_buffer
    assert isinstance(buffer, RolloutBuffer)
    assert buffer.full and buffer.size() == buffer.buffer_size == 16 and buffer.n_envs == 1
    assert buffer.observations.shape == (16, 1, 3) and buffer.actions.shape == (16, 1, 1)
    for name in ("rewards", "returns", "values", "log_probs", "advantages", "episode_starts"):
        field = getattr(buffer, name)
        assert isinstance(field, np.ndarray) and field.shape == (16, 1), name
    # Zero-copy on the CPU: the view and the training tensors are one memory.
    assert np.shares_memory(buffer.values, model.rollout.values.numpy())
    assert np.shares_memory(buffer.observations, model.rollout.observations.numpy())
    np.testing.assert_allclose(buffer.returns, buffer.advantages + buffer.values, rtol=1e-6)
    # SB3 code compares the stored actions with the space's bounds, as numpy.
    assert (buffer.actions <= np.inf).all()
    batches = list(buffer.get(batch_size=6))
    assert [len(batch.returns) for batch in batches] == [6, 6, 4]
    assert batches[0].observations.shape == (6, 3) and batches[0].actions.dtype == torch.float32
    assert model.rollout_buffer is buffer  # one view per rollout, not one per read


def test_discrete_actions_and_dict_observations_get_sb3_shapes_and_classes() -> None:
    model = A2C("MlpPolicy", "CartPole-v1", n_steps=4, seed=0, device="cpu")
    model.learn(8)
    assert model.rollout_buffer is not None
    assert model.rollout_buffer.actions.shape == (4, 1, 1)
    assert next(model.rollout_buffer.get(4)).actions.shape == (4, 1)

    env = gym.make("CartPole-v1")
    env = gym.wrappers.TransformObservation(
        env, lambda obs: {"state": obs}, gym.spaces.Dict({"state": env.observation_space})
    )
    dict_model = A2C("MultiInputPolicy", env, n_steps=4, seed=0, device="cpu")
    dict_model.learn(8)
    buffer = dict_model.rollout_buffer
    assert isinstance(buffer, DictRolloutBuffer)
    assert buffer.observations["state"].shape == (4, 1, 4)
    assert next(buffer.get(2)).observations["state"].shape == (2, 4)


def test_rollout_callback_gets_the_sb3_view() -> None:
    from lit_sb3.common.callbacks import BaseCallback

    seen: list[object] = []

    class Grab(BaseCallback):
        def _on_step(self) -> bool:
            seen.append(self.locals["rollout_buffer"])
            return True

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=8, batch_size=8, n_epochs=1, seed=0, device="cpu")
    model.learn(8, callback=Grab())
    assert seen and all(buffer is model.rollout_buffer for buffer in seen)


def test_fields_written_through_the_view_reach_the_training_rollout() -> None:
    model = A2C("MlpPolicy", "CartPole-v1", n_steps=4, seed=0, device="cpu")
    model.learn(4)
    buffer = model.rollout_buffer
    assert buffer is not None
    buffer.returns = np.full((4, 1), 7.0, dtype=np.float32)  # SB3 code assigns fields
    buffer.rewards[0, 0] = 3.0
    assert torch.all(model.rollout.returns == 7.0) and model.rollout.rewards[0, 0] == 3.0
    buffer.reset()
    assert not buffer.full and buffer.pos == 0 and model.rollout.pos == 0


class TaggedRolloutBuffer(RolloutBuffer):
    """A user subclass that adds an argument, an attribute and a method, as SB3 users write them."""

    def __init__(self, *args: object, tag: str = "none", **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.tag = tag

    def mean_reward(self) -> float:
        return float(self.rewards.mean())


def test_rollout_buffer_class_is_built_as_sb3_builds_it_and_is_what_rollout_buffer_is(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unexpected keyword argument 'wrong_keyword'"):
        A2C(
            "MlpPolicy",
            "Pendulum-v1",
            rollout_buffer_class=RolloutBuffer,
            rollout_buffer_kwargs={"wrong_keyword": 1},
        )
    with pytest.raises(TypeError, match="multiple values for keyword argument 'gamma'"):
        A2C(
            "MlpPolicy", "Pendulum-v1", rollout_buffer_class=RolloutBuffer, rollout_buffer_kwargs={"gamma": 1}
        )
    with pytest.raises(AssertionError, match="DictRolloutBuffer must be used with Dict obs space only"):
        A2C("MlpPolicy", "Pendulum-v1", rollout_buffer_class=DictRolloutBuffer)

    model = PPO(
        "MlpPolicy",
        "CartPole-v1",
        n_steps=8,
        batch_size=8,
        n_epochs=1,
        seed=0,
        device="cpu",
        rollout_buffer_class=TaggedRolloutBuffer,
        rollout_buffer_kwargs={"tag": "mine"},
    )
    model.learn(8)
    buffer = model.rollout_buffer
    assert isinstance(buffer, TaggedRolloutBuffer) and buffer.tag == "mine"
    assert buffer.mean_reward() == 1.0  # CartPole pays 1 a step, read from the training rollout
    model.save(tmp_path / "model.zip")  # the class is stored as an import string
    loaded = PPO.load(tmp_path / "model.zip", env="CartPole-v1", device="cpu")
    assert loaded.rollout_buffer_class is TaggedRolloutBuffer and loaded.rollout_buffer_kwargs == {
        "tag": "mine"
    }


def test_a_rollout_buffer_class_that_changes_storage_or_sampling_is_refused_by_name() -> None:
    class Resampling(RolloutBuffer):
        def get(self, batch_size: int | None = None) -> Iterator[Any]:
            yield from super().get(batch_size)

    with pytest.raises(ConfigurationError, match=r"overrides get.*Supported: RolloutBuffer and subclasses"):
        PPO("MlpPolicy", "CartPole-v1", rollout_buffer_class=Resampling)
    with pytest.raises(
        ConfigurationError, match="rollout_buffer_class must be RolloutBuffer or DictRolloutBuffer"
    ):
        PPO("MlpPolicy", "CartPole-v1", rollout_buffer_class=dict)


def test_a_02_algorithm_calling_core_rollout_methods_on_rollout_buffer_still_works_with_a_warning() -> None:
    """0.2's ``self.rollout_buffer`` was the tensor rollout; its methods stay reachable until 0.4."""
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=8, batch_size=8, n_epochs=1, seed=0, device="cpu")
    model.learn(8)
    with pytest.warns(DeprecationWarning, match=r"self\.rollout\.minibatches"):
        (batch,) = model.rollout_buffer.minibatches(None)
    (expected,) = model.rollout.minibatches(None)
    assert torch.equal(batch.returns, expected.returns)
    with pytest.raises(AttributeError, match="no_such_field"):
        _ = model.rollout_buffer.no_such_field
