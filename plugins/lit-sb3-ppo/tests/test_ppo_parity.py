"""One PPO update on the same data gives Stable-Baselines3's weights and every one of its ``train/*`` values.

SB3 collects a rollout and trains on it; lit-sb3 trains on a copy of that rollout (through ``RLTrainer``, so
Lightning's manual optimization, gradient clipping and the schedules are in the loop) from the same initial
weights, with the same minibatch order (both draw it with ``np.random.permutation``; both are handed the same
numbers). Each logged ``train/*`` key must exist on both sides and agree: the per-minibatch means
(``policy_gradient_loss``, ``value_loss``, ``entropy_loss``, ``clip_fraction``) over every epoch,
``approx_kl`` over the last epoch only, ``loss`` of the last minibatch, ``n_updates`` counting epochs
(including one cut short by ``target_kl``), ``explained_variance`` of the rollout, ``std``, the clip ranges
and the learning rate.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
import torch

from lit_sb3_core.sdk import RLEnvDataModule, RLTrainer
from lit_sb3_ppo import PPO

torch.set_num_threads(1)

N_ENVS, N_STEPS = 2, 32
BASE = {
    "n_steps": N_STEPS, "batch_size": 16, "n_epochs": 3, "learning_rate": 1e-3, "gamma": 0.98,
    "gae_lambda": 0.9, "seed": 0, "policy_kwargs": {"net_arch": [16, 16]},
}  # fmt: skip
CASES = {
    "discrete": ("CartPole-v1", {"ent_coef": 0.01}),
    "box-clip-vf": ("Pendulum-v1", {"clip_range_vf": 0.1, "ent_coef": 0.01}),
    "target-kl": ("CartPole-v1", {"target_kl": 0.001, "learning_rate": 3e-3, "n_epochs": 4}),  # stops in epoch 3
    "whole-rollout": ("Pendulum-v1", {"batch_size": N_STEPS * N_ENVS, "n_epochs": 2}),
}  # fmt: skip


def sb3_permutations(n_epochs: int, seed: int = 7) -> list[np.ndarray]:
    """One shuffle per epoch, over SB3's env-major flattening of the rollout (index env * n_steps + step)."""
    rng = np.random.RandomState(seed)
    return [rng.permutation(N_STEPS * N_ENVS) for _ in range(n_epochs)]


def sb3_update(env_id: str, kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Any]:
    """SB3's model after one rollout and one ``train()``, a copy of the rollout and the initial weights."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    model = sb3.PPO("MlpPolicy", make_vec_env(env_id, n_envs=N_ENVS, seed=0), device="cpu", **kwargs)
    total, callback = model._setup_learn(N_STEPS * N_ENVS, None)
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, callback, model.rollout_buffer, N_STEPS)
    model._update_current_progress_remaining(model.num_timesteps, total)
    rollout, initial = copy.deepcopy(model.rollout_buffer), copy.deepcopy(model.policy.state_dict())
    orders = sb3_permutations(kwargs["n_epochs"])
    with monkeypatch.context() as patch:
        patch.setattr(np.random, "permutation", lambda n: orders.pop(0))
        model.train()
    return model, rollout, initial


def train_on(model: PPO, env_id: str, rollout: Any, n_epochs: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One lit-sb3 iteration through RLTrainer on a copy of SB3's rollout, in SB3's minibatch order."""

    def copy_rollout() -> None:
        buffer = model.rollout
        buffer.reset()
        buffer.observations.copy_(torch.as_tensor(rollout.observations).reshape(buffer.observations.shape))
        buffer.actions.copy_(torch.as_tensor(rollout.actions).reshape(buffer.actions.shape))
        for name in ("values", "log_probs", "advantages", "returns"):
            getattr(buffer, name).copy_(torch.as_tensor(getattr(rollout, name)))
        buffer.rewards[:], buffer.episode_starts[:] = rollout.rewards, rollout.episode_starts
        buffer.pos = buffer.n_steps
        model.num_timesteps += N_STEPS * N_ENVS

    # lit-sb3 draws SB3's shuffles (np.random.permutation over the env-major flattening): hand it the same.
    orders = sb3_permutations(n_epochs)
    permutation = np.random.permutation

    def same_order(n: Any) -> np.ndarray:
        return orders.pop(0) if n == N_STEPS * N_ENVS else permutation(n)

    monkeypatch.setattr(model, "collect_rollout", copy_rollout)
    monkeypatch.setattr(np.random, "permutation", same_order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = RLTrainer(
            max_steps=N_STEPS * N_ENVS, logger=False, enable_progress_bar=False, enable_checkpointing=False
        )
        trainer.fit(model, datamodule=RLEnvDataModule(train_env=env_id, n_envs=N_ENVS, seed=0))


@pytest.fixture(scope="module")
def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Inductor's caches for this module's compiled runs, in a temporary folder (not the user's)."""
    return str(tmp_path_factory.mktemp("torch-compile"))


# compile=True (PPO's update as one compiled program, lit_sb3_core.sdk.CompiledStep) must match SB3 too:
# the compile takes a minute or more per case on a loaded CPU, so those runs are marked slow.
@pytest.mark.parametrize(
    "compiled", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "compiled"]
)
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_one_update_matches_sb3(
    case: tuple[str, dict[str, Any]],
    compiled: bool,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    env_id, overrides = case
    kwargs = {**BASE, **overrides}
    reference, rollout, initial = sb3_update(env_id, kwargs, monkeypatch)
    if compiled:
        monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", request.getfixturevalue("compile_cache"))
        monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    model = PPO(env=env_id, compile=compiled, **kwargs)
    model.policy.load_state_dict(initial)
    train_on(model, env_id, rollout, kwargs["n_epochs"], monkeypatch)

    # The compiled program reorders float arithmetic (fused kernels): rounding-level differences only.
    atol, rel = (2e-5, 1e-4) if compiled else (2e-6, 1e-5)
    theirs = reference.policy.state_dict()
    for key, value in model.policy.state_dict().items():
        torch.testing.assert_close(value, theirs[key], rtol=0, atol=atol, msg=key)
    logged = {k: float(v) for k, v in reference.logger.name_to_value.items() if k.startswith("train/")}
    mine = {k: v for k, v in model.last_metrics.items() if k.startswith("train/")}
    assert sorted(mine) == sorted(logged)
    for key, value in logged.items():
        assert mine[key] == pytest.approx(value, rel=rel, abs=1e-7), key
    if "target_kl" in overrides:  # the case must stop early, or it tests nothing more than "discrete"
        assert 0 < mine["train/n_updates"] < kwargs["n_epochs"]
