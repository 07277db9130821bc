"""One training iteration on the same rollout ends with sb3-contrib's weights and metrics.

sb3-contrib collects a rollout; lit-sb3 trains on a copy of it (through ``RLTrainer``, so Lightning's
manual optimization, gradient clipping and the learning-rate schedule are all in the loop) from the same
initial weights, with the same minibatch rotation. Every weight and every logged training metric must
agree to float precision: the sequence minibatching, masking, losses and optimizer are sb3-contrib's.
Then whole runs of several iterations from one seed, nothing handed over: the rollouts too are sb3-contrib's.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
import torch

from lit_sb3 import RLEnvDataModule, RLTrainer
from lit_sb3_ppo_recurrent import RecurrentPPO
from lit_sb3_ppo_recurrent.buffers import RecurrentRolloutBuffer

torch.set_num_threads(1)

N_ENVS, N_STEPS = 2, 32
BASE = {
    "n_steps": N_STEPS, "n_epochs": 4, "learning_rate": 1e-3, "gamma": 0.98, "gae_lambda": 0.8,
    "ent_coef": 0.01, "seed": 0, "policy_kwargs": {"lstm_hidden_size": 16},
}  # fmt: skip
CASES = {
    "whole-rollout": {"batch_size": N_STEPS * N_ENVS},
    "minibatches-clip-vf": {"batch_size": 24, "clip_range_vf": 0.1},
    "shared-lstm": {
        "batch_size": 32,
        "policy_kwargs": {"lstm_hidden_size": 16, "shared_lstm": True, "enable_critic_lstm": False},
    },
}  # fmt: skip


def _sb3_contrib_iteration(kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """sb3-contrib's model after one rollout and one ``train()``, and a copy of that rollout."""
    contrib = pytest.importorskip("sb3_contrib")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    model = contrib.RecurrentPPO(
        "MlpLstmPolicy",
        env_util.make_vec_env("CartPoleNoVel-v1", n_envs=N_ENVS, seed=0),
        device="cpu",
        **kwargs,
    )
    total, callback = model._setup_learn(N_STEPS * N_ENVS, None)
    callback.on_training_start(locals(), globals())
    model.collect_rollouts(model.env, callback, model.rollout_buffer, N_STEPS)
    model._update_current_progress_remaining(model.num_timesteps, total)
    rollout = copy.deepcopy(model.rollout_buffer)
    assert rollout.episode_starts[1:].sum() >= 2  # episodes end inside the rollout
    with monkeypatch.context() as patch:
        patch.setattr(np.random, "randint", lambda *args, **kwargs: 0)  # its minibatch rotation
        model.train()
    return model, rollout


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_one_iteration_matches_sb3_contrib(case: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    kwargs = {**BASE, **case}
    reference, rollout = _sb3_contrib_iteration(kwargs, monkeypatch)
    model = RecurrentPPO(env="CartPoleNoVel-v1", **kwargs)
    initial = copy.deepcopy(model.policy.state_dict())

    def copy_rollout() -> None:
        buffer = model.rollout
        buffer.reset()
        buffer.observations.copy_(torch.as_tensor(rollout.observations))
        buffer.actions.copy_(torch.as_tensor(rollout.actions).reshape(buffer.actions.shape))
        for name in ("values", "log_probs", "advantages", "returns"):
            getattr(buffer, name).copy_(torch.as_tensor(getattr(rollout, name)))
        buffer.rewards[:], buffer.episode_starts[:] = rollout.rewards, rollout.episode_starts
        names = ("hidden_states_pi", "cell_states_pi", "hidden_states_vf", "cell_states_vf")
        for i, name in enumerate(names):  # (n_steps, n_layers, n_envs, hidden) there
            buffer.lstm_storage[i].copy_(torch.as_tensor(getattr(rollout, name)).transpose(1, 2))
        buffer.pos = buffer.n_steps
        model.num_timesteps += N_STEPS * N_ENVS

    monkeypatch.setattr(model, "collect_rollout", copy_rollout)
    monkeypatch.setattr(RecurrentRolloutBuffer, "random_split", lambda self: 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = RLTrainer(
            max_steps=N_STEPS * N_ENVS, logger=False, enable_progress_bar=False, enable_checkpointing=False
        )
        trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPoleNoVel-v1", n_envs=N_ENVS, seed=0))

    theirs = reference.policy.state_dict()
    for key, value in model.policy.state_dict().items():
        assert not torch.equal(value, initial[key]) or key == "log_std", f"{key} did not train"
        torch.testing.assert_close(value, theirs[key], rtol=0, atol=1e-6, msg=key)
    logged = reference.logger.name_to_value
    for key, value in model.last_metrics.items():
        if key.startswith("train/"):
            assert value == pytest.approx(float(logged[key]), rel=1e-4, abs=1e-6), key


# Whole runs from one seed -----------------------------------------------------------------------------
# Nothing handed over: the seed gives sb3-contrib's initial weights, torch's generator samples the same
# actions, and each epoch's minibatch rotation comes from numpy's global generator as sb3-contrib draws it.
# Every rollout (observations, episode starts, actions, truncation-bootstrapped rewards, values, log-probs,
# stored LSTM states, advantages) and the weights after several iterations must agree. This covers what one
# update on a copied rollout cannot: the LSTM state carried across steps and iterations, its reset at
# episode starts, the bootstrap of truncated episodes from the critic's state, the end-of-rollout bootstrap,
# the schedules' progress and the random streams.
LOCKSTEP = {
    "n_steps": 16, "batch_size": 24, "n_epochs": 3, "gamma": 0.98, "gae_lambda": 0.8, "ent_coef": 0.0,
    "seed": 3, "policy_kwargs": {"lstm_hidden_size": 16, "net_arch": {"pi": [16], "vf": [16]}},
}  # fmt: skip
LOCKSTEP_ITERATIONS = 3


def test_several_iterations_from_one_seed_are_sb3_contribs(monkeypatch: pytest.MonkeyPatch) -> None:
    contrib = pytest.importorskip("sb3_contrib")
    env_util = pytest.importorskip("stable_baselines3.common.env_util")
    import gymnasium as gym

    def factory() -> gym.Env:  # short episodes: both terminations and truncations inside each rollout
        return gym.make("CartPoleNoVel-v1", max_episode_steps=12)

    kwargs = {**LOCKSTEP, "learning_rate": 1e-3, "clip_range": 0.2}
    budget = LOCKSTEP_ITERATIONS * LOCKSTEP["n_steps"] * N_ENVS
    reference = contrib.RecurrentPPO(
        "MlpLstmPolicy",
        env_util.make_vec_env(factory, n_envs=N_ENVS, seed=LOCKSTEP["seed"]),
        device="cpu",
        **kwargs,
    )
    initial = copy.deepcopy(reference.policy.state_dict())
    theirs: list[Any] = []
    train = reference.train

    def record_then_train() -> None:
        theirs.append(copy.deepcopy(reference.rollout_buffer))
        train()

    monkeypatch.setattr(reference, "train", record_then_train)
    reference.learn(budget)

    model = RecurrentPPO(**kwargs)
    datamodule = RLEnvDataModule(train_env=factory, n_envs=N_ENVS, seed=LOCKSTEP["seed"])
    ours: list[Any] = []
    train_on_rollout = model.train_on_rollout

    def record_then_train_ours() -> dict[str, float]:
        ours.append(copy.deepcopy(model.rollout))
        return train_on_rollout()

    monkeypatch.setattr(model, "train_on_rollout", record_then_train_ours)
    ours_initial: dict[str, torch.Tensor] = {}
    on_fit_start = model.on_fit_start

    def keep_initial_weights() -> None:
        on_fit_start()
        ours_initial.update(copy.deepcopy(model.policy.state_dict()))

    monkeypatch.setattr(model, "on_fit_start", keep_initial_weights)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        RLTrainer(max_steps=budget, logger=False, enable_progress_bar=False, enable_checkpointing=False).fit(
            model, datamodule=datamodule
        )

    assert len(ours) == len(theirs) == LOCKSTEP_ITERATIONS
    for key, value in initial.items():
        assert torch.equal(ours_initial[key], value), f"initial {key}"
    truncated = 0

    def close(actual: Any, expected: Any, what: str) -> None:
        expected = torch.as_tensor(np.asarray(expected), dtype=torch.float32).reshape(actual.shape)
        torch.testing.assert_close(torch.as_tensor(actual).float(), expected, rtol=0, atol=1e-5, msg=what)

    for iteration, (mine, ref) in enumerate(zip(ours, theirs)):
        shape = mine.values.shape
        np.testing.assert_array_equal(mine.episode_starts, ref.episode_starts)
        np.testing.assert_array_equal(mine.actions.numpy(), ref.actions.reshape(shape))
        close(mine.observations, ref.observations, f"observations, iteration {iteration}")
        close(torch.as_tensor(mine.rewards), ref.rewards, f"rewards, iteration {iteration}")
        for name, stored in (("values", mine.values), ("log_probs", mine.log_probs)):
            close(stored, getattr(ref, name), f"{name}, iteration {iteration}")
        for name, stored in (("advantages", mine.advantages), ("returns", mine.returns)):
            close(stored, getattr(ref, name), f"{name}, iteration {iteration}")
        for i, name in enumerate(
            ("hidden_states_pi", "cell_states_pi", "hidden_states_vf", "cell_states_vf")
        ):
            close(
                mine.lstm_storage[i], np.swapaxes(getattr(ref, name), 1, 2), f"{name}, iteration {iteration}"
            )
        truncated += int((np.abs(ref.rewards - 1.0) > 1e-6).sum())  # a truncation adds gamma * V(final obs)
    assert truncated > 0, "no truncated episode: the test would not cover their bootstrap"
    for key, value in model.policy.state_dict().items():
        torch.testing.assert_close(value, reference.policy.state_dict()[key], rtol=0, atol=1e-5, msg=key)
