"""One MaskablePPO update on the same data gives sb3-contrib's weights and every one of its ``train/*`` values.

MaskablePPO trains with PPO's update (``lit_sb3_ppo.PPO.train_on_rollout``), scoring each minibatch under
the masks its actions were sampled with. sb3-contrib collects a masked rollout and trains on it; lit-sb3
trains on a copy (masks included) from the same weights in the same minibatch order, through ``RLTrainer``.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import _ppo_mask_envs as envs
import numpy as np
import pytest
import torch

from lit_sb3_core.sdk import RLEnvDataModule, RLTrainer
from lit_sb3_ppo_mask import MaskablePPO

torch.set_num_threads(1)

N_ENVS, N_STEPS = 2, 32
BASE = {
    "n_steps": N_STEPS, "batch_size": 16, "n_epochs": 3, "learning_rate": 1e-3, "gamma": 0.9,
    "gae_lambda": 0.9, "ent_coef": 0.01, "seed": 0, "policy_kwargs": {"net_arch": [16]},
}  # fmt: skip
CASES = {
    "discrete": (envs.ARMS, {}),
    "multidiscrete-clip-vf": (envs.MULTI_ARMS, {"clip_range_vf": 0.2}),
    "target-kl": (envs.ARMS, {"target_kl": 0.003, "learning_rate": 1e-2, "n_epochs": 4}),
}  # fmt: skip


def permutations(n_epochs: int) -> list[np.ndarray]:
    rng = np.random.RandomState(7)
    return [rng.permutation(N_STEPS * N_ENVS) for _ in range(n_epochs)]


def sb3_contrib_update(
    env_id: str, kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, ...]:
    contrib = pytest.importorskip("sb3_contrib")
    from stable_baselines3.common.env_util import make_vec_env

    model = contrib.MaskablePPO(
        "MlpPolicy", make_vec_env(env_id, n_envs=N_ENVS, seed=0), device="cpu", **kwargs
    )
    total, callback = model._setup_learn(N_STEPS * N_ENVS, None)
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, callback, model.rollout_buffer, N_STEPS)
    model._update_current_progress_remaining(model.num_timesteps, total)
    rollout, initial = copy.deepcopy(model.rollout_buffer), copy.deepcopy(model.policy.state_dict())
    assert not rollout.action_masks.all(), "the rollout must mask some actions"
    orders = permutations(kwargs["n_epochs"])
    with monkeypatch.context() as patch:
        patch.setattr(np.random, "permutation", lambda n: orders.pop(0))
        model.train()
    return model, rollout, initial


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_one_update_matches_sb3_contrib(
    case: tuple[str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    env_id, overrides = case
    kwargs = {**BASE, **overrides}
    reference, rollout, initial = sb3_contrib_update(env_id, kwargs, monkeypatch)
    model = MaskablePPO(env=env_id, **kwargs)
    model.policy.load_state_dict(initial)

    def copy_rollout() -> None:
        buffer = model.rollout
        buffer.reset()
        buffer.observations.copy_(torch.as_tensor(rollout.observations).reshape(buffer.observations.shape))
        buffer.actions.copy_(torch.as_tensor(rollout.actions).reshape(buffer.actions.shape))
        for name in ("values", "log_probs", "advantages", "returns"):
            getattr(buffer, name).copy_(torch.as_tensor(getattr(rollout, name)))
        buffer.rewards[:], buffer.episode_starts[:] = rollout.rewards, rollout.episode_starts
        buffer.store_masks(torch.ones(N_ENVS, buffer.mask_dims, dtype=torch.bool))  # marks the rollout masked
        buffer.action_masks.copy_(torch.as_tensor(rollout.action_masks > 0.5))
        buffer.pos = buffer.n_steps
        model.num_timesteps += N_STEPS * N_ENVS

    # lit-sb3 draws sb3-contrib's shuffles (np.random.permutation over the env-major flattening): the same.
    orders = permutations(kwargs["n_epochs"])
    permutation = np.random.permutation
    monkeypatch.setattr(model, "collect_rollout", copy_rollout)
    monkeypatch.setattr(
        np.random, "permutation", lambda n: orders.pop(0) if n == N_STEPS * N_ENVS else permutation(n)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RLTrainer(
            max_steps=N_STEPS * N_ENVS, logger=False, enable_progress_bar=False, enable_checkpointing=False
        ).fit(model, datamodule=RLEnvDataModule(train_env=env_id, n_envs=N_ENVS, seed=0))

    theirs = reference.policy.state_dict()
    for key, value in model.policy.state_dict().items():
        torch.testing.assert_close(value, theirs[key], rtol=0, atol=2e-6, msg=key)
    logged = {k: float(v) for k, v in reference.logger.name_to_value.items() if k.startswith("train/")}
    mine = {k: v for k, v in model.last_metrics.items() if k.startswith("train/")}
    assert sorted(mine) == sorted(logged)
    for key, value in logged.items():
        assert mine[key] == pytest.approx(value, rel=1e-5, abs=1e-7), key
    if "target_kl" in overrides:
        assert 0 < mine["train/n_updates"] < kwargs["n_epochs"]
