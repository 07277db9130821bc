"""HER through a ``VecNormalize`` training env: the buffer keeps the original goals, relabels and scores on them,
and normalizes the minibatch (relabelled rewards included) with the wrapper's current statistics, as SB3 does."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
from lit_sb3_core.testing import PointGoalEnv
from lit_sb3_her import HerReplayBuffer
from lit_sb3_sac import SAC

BATCH = 2000


def collected(normalize: dict[str, Any] | None) -> SAC:
    """600 steps of random actions (no update: learning_starts is beyond them) on PointGoalEnv, seed 0."""
    env: Any = DummyVecEnv([PointGoalEnv])
    if normalize is not None:
        env = VecNormalize(env, **normalize)
    model = SAC("MultiInputPolicy", env, replay_buffer_class=HerReplayBuffer, learning_starts=10_000, seed=0)
    return model.learn(600)


def sampled(model: SAC, seed: int = 1, normalized: bool = True) -> Any:
    """A minibatch as the updates see it (``sample_replay``), or as stored, with numpy's generator at ``seed``."""
    np.random.seed(seed)  # the buffer draws from numpy's global generator, as SB3's
    if normalized:
        return model.sample_replay(BATCH)
    return model.replay_buffer.sample(BATCH)


def test_relabelled_successes_are_the_same_share_with_a_goal_normalizing_vec_normalize() -> None:
    """Relabelled rewards are computed on original goals: the share of successes is the raw env's (SB3: 20.6 %
    on this seed with and without the wrapper; scoring normalized goals made it 74 %)."""
    raw = sampled(collected(None))
    model = collected({"norm_obs": True, "norm_reward": False})
    through_wrapper = sampled(model)
    share = float((raw.rewards == 0).float().mean())
    assert 0.15 < share < 0.3, share
    assert float((through_wrapper.rewards == 0).float().mean()) == share
    np.testing.assert_array_equal(through_wrapper.rewards.numpy(), raw.rewards.numpy())
    # The minibatch itself is normalized with the wrapper's statistics: goals of scale 10 come out near 1.
    vec_normalize = model.get_vec_normalize_env()
    goals = raw.observations["desired_goal"].numpy()
    np.testing.assert_allclose(
        through_wrapper.observations["desired_goal"].numpy(),
        vec_normalize.normalize_obs({"desired_goal": goals})["desired_goal"],
        rtol=1e-5,
        atol=1e-5,
    )
    assert (
        np.abs(goals).mean() > 4 and np.abs(through_wrapper.observations["desired_goal"].numpy()).mean() < 1.5
    )


def test_the_buffer_stores_original_observations_and_rewards() -> None:
    """Same seed, same random actions: the buffer behind a VecNormalize holds exactly what the plain env's holds."""
    plain = collected(None).replay_buffer
    wrapped = collected({"norm_obs": True, "norm_reward": True}).replay_buffer
    for key in ("observation", "achieved_goal", "desired_goal"):
        np.testing.assert_array_equal(wrapped.observations[key], plain.observations[key])
        np.testing.assert_array_equal(wrapped.next_observations[key], plain.next_observations[key])
    np.testing.assert_array_equal(wrapped.rewards, plain.rewards)
    assert set(np.unique(wrapped.rewards[: wrapped.size()])) <= {0.0, -1.0}


def test_relabelled_rewards_are_normalized_with_the_stored_ones() -> None:
    """With norm_reward, real and relabelled rewards alike are the raw ones scaled by the current return std."""
    model = collected({"norm_obs": True, "norm_reward": True, "clip_reward": 1000.0})
    raw, normalized = sampled(model, normalized=False), sampled(model)
    vec_normalize = model.get_vec_normalize_env()
    scale = float(np.sqrt(vec_normalize.ret_rms.var + vec_normalize.epsilon))
    assert scale != pytest.approx(1.0, abs=0.05)
    np.testing.assert_allclose(normalized.rewards.numpy(), raw.rewards.numpy() / scale, rtol=1e-5)
