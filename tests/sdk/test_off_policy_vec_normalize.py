"""Off-policy algorithms on a ``VecNormalize`` env store SB3's originals and normalize when they sample.

SB3 keeps the original observations and rewards in the replay buffer (``get_original_obs()`` and
``get_original_reward()``, the final observation unnormalized) and normalizes minibatches with the wrapper's
current statistics; the policy acts on what the env returned. With the same seed, random actions (no update
before ``learning_starts``) give the same trajectories through the wrapper as without it, so the buffers
must hold the same numbers.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
from lit_sb3_core.testing import PointGoalEnv
from lit_sb3_sac import SAC

STEPS = 450  # Pendulum truncates at 200 steps: two final observations per env


def pendulum() -> gym.Env:
    return gym.make("Pendulum-v1")


def collected(
    make_env: Any, wrapper: dict[str, Any] | None, n_envs: int = 2, policy: str = "MlpPolicy", **kwargs: Any
) -> SAC:
    """``STEPS`` random steps on ``n_envs`` envs (no update), through ``VecNormalize(**wrapper)`` if given."""
    env: Any = DummyVecEnv([make_env] * n_envs)
    if wrapper is not None:
        env = VecNormalize(env, **wrapper)
    model = SAC(policy, env, learning_starts=10_000, buffer_size=10_000, seed=0, **kwargs)
    return model.learn(STEPS)


def stored(model: SAC) -> dict[str, np.ndarray]:
    buffer = model.replay_buffer
    arrays = buffer.storage_arrays()
    rows = buffer.size()
    if buffer.next_observations is not None:
        return arrays
    # optimize_memory_usage: the next observations as sampling reads them (the truncated episodes' finals too)
    flat_rows = np.repeat(np.arange(rows), buffer.n_envs)
    flat_envs = np.tile(np.arange(buffer.n_envs), rows)
    next_obs = buffer._next_obs(flat_rows, flat_envs)
    return {**arrays, **{f"next.{key}": value for key, value in next_obs.items()}}


# a clip far inside the data: SB3's unnormalize_obs could not give back a clipped final observation
CLIPPED = {"norm_obs": True, "norm_reward": True, "clip_obs": 0.5}


@pytest.mark.parametrize(
    "kwargs", [{}, {"n_steps": 3}, {"optimize_memory_usage": True}], ids=["flat", "n-step", "memory"]
)
def test_the_buffer_holds_the_original_observations_and_rewards(kwargs: dict[str, Any]) -> None:
    plain, wrapped = collected(pendulum, None, **kwargs), collected(pendulum, CLIPPED, **kwargs)
    ours, theirs = stored(wrapped), stored(plain)
    assert sorted(ours) == sorted(theirs) and any(key.startswith("next") for key in ours)
    for name, array in theirs.items():
        np.testing.assert_array_equal(ours[name], array, err_msg=name)
    assert np.abs(theirs["observations."][..., 2]).max() > 1  # Pendulum's angular velocity: raw, not clipped


def test_dict_observations_are_stored_original() -> None:
    plain = collected(PointGoalEnv, None, policy="MultiInputPolicy")
    wrapped = collected(PointGoalEnv, CLIPPED, policy="MultiInputPolicy")
    for key in ("observation", "achieved_goal", "desired_goal"):
        np.testing.assert_array_equal(
            wrapped.replay_buffer.observations[key], plain.replay_buffer.observations[key]
        )
        np.testing.assert_array_equal(
            wrapped.replay_buffer.next_observations[key], plain.replay_buffer.next_observations[key]
        )
    np.testing.assert_array_equal(wrapped.replay_buffer.rewards, plain.replay_buffer.rewards)


@pytest.mark.parametrize("n_steps", [1, 3])
def test_minibatches_are_normalized_with_the_current_statistics(n_steps: int) -> None:
    """``sample_replay`` (what the updates train on) and SB3's ``sample(env=VecNormalize)`` give the stored
    transitions normalized by the wrapper's statistics of now; n-step returns sum the normalized rewards."""
    model = collected(pendulum, {"norm_obs": True, "norm_reward": True, "clip_reward": 1e3}, n_steps=n_steps)
    vec_normalize = model.get_vec_normalize_env()
    assert model._vec_normalize_env is vec_normalize  # SB3's attribute, for SB3 code's own train()

    def draw(normalized: bool) -> Any:
        np.random.seed(3)
        return model.sample_replay(512) if normalized else model.replay_buffer.sample(512)

    raw, normalized = draw(False), draw(True)
    np.random.seed(3)
    np.testing.assert_array_equal(
        model.replay_buffer.sample(512, env=vec_normalize).observations.numpy(),
        normalized.observations.numpy(),
    )
    for name in ("observations", "next_observations"):
        expected = vec_normalize.normalize_obs(getattr(raw, name).numpy())
        np.testing.assert_allclose(getattr(normalized, name).numpy(), expected, rtol=1e-5, atol=1e-6)
    scale = float(np.sqrt(vec_normalize.ret_rms.var + vec_normalize.epsilon))
    np.testing.assert_allclose(normalized.rewards.numpy(), raw.rewards.numpy() / scale, rtol=1e-4)
    np.testing.assert_array_equal(normalized.actions.numpy(), raw.actions.numpy())
    np.testing.assert_array_equal(normalized.dones.numpy(), raw.dones.numpy())
    # Later statistics normalize the same stored transitions differently: nothing normalized was stored.
    model.learn(200, reset_num_timesteps=False)
    assert not np.allclose(
        vec_normalize.normalize_obs(raw.observations.numpy()), normalized.observations.numpy()
    )


def test_the_updates_train_on_normalized_minibatches() -> None:
    env = VecNormalize(DummyVecEnv([pendulum]), norm_obs=True, norm_reward=True)
    model = SAC("MlpPolicy", env, learning_starts=100, batch_size=64, buffer_size=2000, seed=0)
    seen: list[tuple[Any, torch.Tensor]] = []
    model.learn(100)  # builds the buffer; the spy goes on the run's buffer
    buffer = model.replay_buffer
    sample = buffer.sample

    def spy(batch_size: int, env: Any = None) -> Any:
        data = sample(batch_size, env=env)
        seen.append((env, data.observations))
        return data

    buffer.sample = spy  # type: ignore[method-assign]
    model.learn(150, reset_num_timesteps=False)
    assert model.n_updates > 0 and len(seen) == model.n_updates
    assert all(env is model.get_vec_normalize_env() for env, _ in seen)
    batches = torch.cat([obs for _, obs in seen])
    raw = buffer.observations[: buffer.size(), 0]
    assert np.abs(raw[:, 2]).max() > 3 and batches[:, 2].abs().max() < np.abs(raw[:, 2]).max()
    assert batches.mean(0).abs().max() < 1.0


def test_replay_buffer_files_hold_the_originals(tmp_path: Any) -> None:
    model = collected(pendulum, CLIPPED)
    path = model.save_replay_buffer(tmp_path / "buffer")
    fresh = SAC("MlpPolicy", "Pendulum-v1", seed=0)
    fresh.load_replay_buffer(path)
    for name, array in model.replay_buffer.storage_arrays().items():
        np.testing.assert_array_equal(fresh.replay_buffer.storage_arrays()[name], array, err_msg=name)
    np.random.seed(0)
    before = model.replay_buffer.sample(64, env=model.get_vec_normalize_env())
    np.random.seed(0)
    after = fresh.replay_buffer.sample(64, env=model.get_vec_normalize_env())
    np.testing.assert_array_equal(after.observations.numpy(), before.observations.numpy())
