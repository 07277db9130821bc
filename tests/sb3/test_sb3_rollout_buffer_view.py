"""``model.rollout_buffer`` is SB3's numpy rollout buffer, a view of the tensors lit-sb3 trains on."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import torch

from lit_sb3 import A2C, PPO
from lit_sb3.common.buffers import DictRolloutBuffer, RolloutBuffer


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

    class Grab(BaseCallback):
        seen: list[object] = []

        def _on_step(self) -> bool:
            self.seen.append(self.locals["rollout_buffer"])
            return True

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=8, batch_size=8, n_epochs=1, seed=0, device="cpu")
    model.learn(8, callback=Grab())
    assert Grab.seen and all(seen is model.rollout_buffer for seen in Grab.seen)
