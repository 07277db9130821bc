"""``compile=True`` rollouts act through ``NumpyActorCritic``: the eager pass's actions (the same draws from
torch's generator), values and log-probabilities within float rounding; hooks keep ``policy(obs)``.

The algorithms here skip their updates (so nothing compiles and the weights stay those of the seed): what is
compared is the rollout pass alone, over several rollouts of 8 real CartPole envs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import lit_sb3
from lit_sb3_a2c import A2C
from lit_sb3_core.nets.direct_forward import NumpyActorCritic

torch.set_num_threads(1)


class _RolloutsOnly(A2C):
    """A2C without its update: every iteration is a rollout."""

    def train_on_rollout(self) -> dict[str, float]:
        return {}


def _collected(compile: bool, steps: int = 8 * 5 * 12, **kwargs: Any) -> tuple[_RolloutsOnly, list[Any]]:
    model = _RolloutsOnly("MlpPolicy", seed=0, device="cpu", compile=compile, **kwargs)
    rollouts: list[Any] = []
    collect = model.collect_rollout

    def kept() -> bool:
        result = collect()
        buffer = model.rollout
        assert buffer is not None
        rollouts.append(
            [t.clone() for t in (buffer.actions, buffer.values, buffer.log_probs, buffer.returns)]
        )
        return result

    model.collect_rollout = kept  # type: ignore[method-assign]
    model.learn(steps, env=lit_sb3.RLEnvDataModule(train_env="CartPole-v1", n_envs=8, seed=0))
    return model, rollouts


def test_a_compiled_runs_rollouts_are_the_eager_ones_within_rounding() -> None:
    compiled, ours = _collected(True)
    _, theirs = _collected(False)
    assert isinstance(compiled._numpy_rollout[1], NumpyActorCritic)  # type: ignore[index]
    assert len(ours) == len(theirs) == 12
    for rollout, eager in zip(ours, theirs, strict=True):
        assert torch.equal(rollout[0], eager[0])  # actions
        for ours_values, eager_values in zip(rollout[1:], eager[1:], strict=True):
            torch.testing.assert_close(ours_values, eager_values, rtol=1e-5, atol=1e-5)


def test_an_eager_run_keeps_the_policys_pass() -> None:
    model, _ = _collected(False, steps=8 * 5)
    assert model._numpy_rollout is None


def test_hooks_on_the_policy_keep_its_pass() -> None:
    model, _ = _collected(True, steps=8 * 5)
    calls: list[int] = []
    model.policy.register_forward_hook(lambda *args: calls.append(1))
    model.learn(8 * 5 * 3, reset_num_timesteps=False)
    assert len(calls) == 5 * 3  # one call per vector step
    assert not np.isnan(model.rollout.values.numpy()).any()  # type: ignore[union-attr]


def test_the_numpy_pass_bootstraps_values_as_the_policy_does() -> None:
    """``rollout_values`` (the bootstrap at a rollout's end and of truncated episodes) through the numpy
    critic: the policy's ``predict_values`` within rounding."""
    model, _ = _collected(True, steps=8 * 5)
    obs = torch.from_numpy(np.asarray(model.last_obs, dtype=np.float32))
    with torch.inference_mode():
        eager = model.policy.predict_values(obs)
    model.policy.plain_calls = True  # as while it trains
    try:
        ours = model.rollout_values(obs)
    finally:
        model.policy.plain_calls = False
    torch.testing.assert_close(ours, eager, rtol=1e-5, atol=1e-6)
    with torch.inference_mode():
        assert torch.equal(model.rollout_values(obs), eager)  # outside training: the policy's own pass
