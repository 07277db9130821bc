"""A2C: optimizer choice, an update identical to Stable-Baselines3's, clear errors, and learning CartPole."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3_a2c import A2C, RMSpropTFLike
from lit_sb3_core import evaluate_policy, load, tuned_hyperparameters
from lit_sb3_core.errors import ConfigurationError


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


def _seeded_env(env_id: str, seed: int) -> gym.Env:
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env


# optimizer -----------------------------------------------------------------------------------------
def test_default_optimizer_is_sb3_rmsprop() -> None:
    model = A2C(env="CartPole-v1", rms_prop_eps=1e-4)
    optimizer = model.configure_optimizers()
    assert type(optimizer) is torch.optim.RMSprop
    group = optimizer.param_groups[0]
    assert (group["lr"], group["alpha"], group["eps"], group["weight_decay"]) == (7e-4, 0.99, 1e-4, 0)
    # The injected optimizer is not written into the saved hyperparameters.
    assert model.hparams["policy_kwargs"] is None


def test_use_rms_prop_false_gives_adam() -> None:
    optimizer = A2C(env="CartPole-v1", use_rms_prop=False).configure_optimizers()
    assert type(optimizer) is torch.optim.Adam
    assert optimizer.param_groups[0]["eps"] == 1e-5


@pytest.mark.parametrize("optimizer_class", ["rmsprop_tf_like", "RMSpropTFLike", RMSpropTFLike])
def test_rmsprop_tf_like_option(optimizer_class: Any) -> None:
    model = A2C(env="CartPole-v1", policy_kwargs={"optimizer_class": optimizer_class})
    json.dumps(dict(model.hparams))  # a class given by the user is stored as its import string
    optimizer = model.configure_optimizers()
    assert type(optimizer) is RMSpropTFLike
    assert optimizer.param_groups[0]["eps"] == 1e-8  # RMSpropTFLike's own default, as in SB3
    tuned = A2C(
        env="CartPole-v1",
        policy_kwargs={"optimizer_class": optimizer_class, "optimizer_kwargs": {"eps": 1e-5}},
    ).configure_optimizers()
    assert tuned.param_groups[0]["eps"] == 1e-5


def test_rmsprop_tf_like_state_survives_save_and_load(tmp_path: Path) -> None:
    model = A2C(env="CartPole-v1", n_steps=8, seed=0, policy_kwargs={"optimizer_class": "rmsprop_tf_like"})
    model.learn(64)
    path = tmp_path / "a2c.zip"
    model.save(path)
    loaded = load(path)
    assert isinstance(loaded, A2C)
    loaded.learn(64, env="CartPole-v1", reset_num_timesteps=False)
    optimizer = loaded.trainer.optimizers[0]
    assert type(optimizer) is RMSpropTFLike
    steps = {float(state["step"]) for state in optimizer.state.values()}
    assert steps == {16.0}, "the loaded optimizer state (8 updates) was not continued"


# the update ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env_id", "extra"), [("CartPole-v1", {}), ("Pendulum-v1", {}), ("Pendulum-v1", {"use_sde": True})]
)
def test_one_update_matches_stable_baselines3(env_id: str, extra: dict[str, Any]) -> None:
    """Same weights and rollout in, same weights and losses out as SB3's A2C.train()."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.logger import Logger

    hyperparameters = {
        "n_steps": 16,
        "ent_coef": 0.01,
        "vf_coef": 0.4,
        "max_grad_norm": 0.3,
        "gamma": 0.95,
        **extra,
    }
    model = A2C(env=env_id, seed=3, normalize_advantage=True, **hyperparameters)
    initial = copy.deepcopy(model.policy.state_dict())
    model.learn(16)  # exactly one rollout of 16 steps and one update
    assert model.n_updates == 1

    reference = sb3.A2C("MlpPolicy", env_id, device="cpu", normalize_advantage=True, **hyperparameters)
    reference.policy.load_state_dict(initial)
    reference.set_logger(Logger(folder=None, output_formats=[]))
    ours, theirs = model.rollout, reference.rollout_buffer
    theirs.observations[:] = ours.observations.numpy().reshape(theirs.observations.shape)
    theirs.actions[:] = ours.actions.numpy().reshape(theirs.actions.shape)
    for name in ("values", "log_probs", "advantages", "returns"):
        getattr(theirs, name)[:] = getattr(ours, name).numpy()
    theirs.pos, theirs.full, theirs.generator_ready = 16, True, False
    reference.train()

    for key, value in reference.policy.state_dict().items():
        torch.testing.assert_close(
            model.policy.state_dict()[key], value, rtol=1e-5, atol=1e-6, msg=lambda m, key=key: f"{key}: {m}"
        )
    logged = reference.logger.name_to_value
    for key in ("train/policy_loss", "train/value_loss", "train/entropy_loss", "train/explained_variance"):
        assert model.last_metrics[key] == pytest.approx(logged[key], rel=1e-4, abs=1e-6), key
    assert ("train/std" in model.last_metrics) == (env_id == "Pendulum-v1")


# errors --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"rms_prop_eps": -1.0}, "rms_prop_eps"),
        ({"max_grad_norm": 0.0}, "max_grad_norm"),
        ({"n_steps": 0}, "n_steps"),
        ({"env": "CartPole-v1", "use_sde": True}, "gSDE needs Box actions"),
        ({"env": "Pendulum-v1", "policy_kwargs": {"use_sde": True}}, "policy_kwargs cannot hold use_sde"),
        ({"gae_lambda": 1.5}, "gae_lambda"),
    ],
)
def test_bad_hyperparameters_are_explained(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        A2C(**kwargs)


def test_unknown_optimizer_name_is_explained() -> None:
    with pytest.raises(ConfigurationError, match="rmsprop_tf_like"):
        A2C(env="CartPole-v1", policy_kwargs={"optimizer_class": "rmsprop_tflike_typo"})


def test_tuned_hyperparameters_construct() -> None:
    for env_id in A2C.tuned_hyperparameters:
        split = tuned_hyperparameters("a2c", env_id)  # refuses keys neither A2C nor the datamodule takes
        json.dumps(dict(A2C(**split["model"]).hparams))
        assert split["data"].get("n_envs", 1) >= 1 and split["trainer"]["max_steps"] > 0
    assert A2C.tuned_hyperparameters["CartPole-v1"] == {"n_envs": 8, "n_timesteps": 500_000, "ent_coef": 0.0}
    assert tuned_hyperparameters("a2c", "Pendulum-v1")["data"] == {"n_envs": 8, "normalize": True}


# learning ------------------------------------------------------------------------------------------
def _tuned(env_id: str) -> tuple[dict[str, Any], int, int]:
    tuned = dict(A2C.tuned_hyperparameters[env_id])
    return tuned, int(tuned.pop("n_envs")), int(tuned.pop("n_timesteps"))


def test_learns_cartpole_quickly() -> None:
    """rl-zoo3's CartPole hyperparameters, a fifth of their budget: far above a random policy (~22)."""
    kwargs, n_envs, _ = _tuned("CartPole-v1")
    model = A2C(env="CartPole-v1", seed=1, **kwargs)
    before, _ = evaluate_policy(model, _seeded_env("CartPole-v1", 100), n_eval_episodes=10)
    model.learn(100_000, n_envs=n_envs)
    after, _ = evaluate_policy(model, _seeded_env("CartPole-v1", 100), n_eval_episodes=10)
    assert model.last_metrics["rollout/ep_rew_mean"] > 100
    assert after >= 200 and after > before + 100, (before, after)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_solves_cartpole_with_rl_zoo_budget(seed: int) -> None:
    kwargs, n_envs, n_timesteps = _tuned("CartPole-v1")
    model = A2C(env="CartPole-v1", seed=seed, **kwargs).learn(n_timesteps, n_envs=n_envs)
    mean_reward, _ = evaluate_policy(model, _seeded_env("CartPole-v1", 1000 + seed), n_eval_episodes=20)
    assert mean_reward >= 475, mean_reward
    assert np.isfinite(model.last_metrics["train/value_loss"])
