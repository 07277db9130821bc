"""CrossQ's gradient steps on the same minibatches give sb3-contrib's weights; a seed gives its initial
weights and its run.

Lockstep: both libraries start from the same weights (a seed gives sb3-contrib's; they are loaded anyway),
train on the same minibatches (each side's ``replay_buffer.sample`` returns the next of a fixed list) with
torch's generator seeded the same before ``train(gradient_steps=...)``, so the actor's draws at ``s'``
and ``s`` are the same numbers in the same order. After the steps every weight, every Batch Renorm
statistic, ``log(alpha)`` and Adam's moments must agree to float rounding.

Adam's ``eps`` is 1e-3 here instead of 1e-8: the bias of a hidden unit that is active on the whole batch
is cancelled by the Batch Renorm after it, so its true gradient is 0 and what autograd returns is rounding
noise (1e-8), which Adam with ``eps=1e-8`` turns into full-size steps of either sign. The larger ``eps``
keeps those steps as small as the noise; every other gradient is orders of magnitude larger, so the
updates still move the weights by ~1e-2.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
import pytest
import torch

from lit_sb3_core.sdk import ReplaySamples
from lit_sb3_crossq import CrossQ

torch.set_num_threads(1)

STEPS, BATCH = 12, 32
OPTIMIZER = {"betas": (0.5, 0.999), "eps": 1e-3}  # sb3-contrib's betas, and see the module docstring
KWARGS = {
    "learning_starts": 64, "buffer_size": 1_000, "batch_size": BATCH, "learning_rate": 3e-3, "seed": 0,
    "policy_delay": 2, "policy_kwargs": {"net_arch": [16, 16], "optimizer_kwargs": OPTIMIZER},
}  # fmt: skip
CASES = {
    "warm-up": {},  # the Batch Renorm layers normalize as plain batch norm (100k warm-up passes)
    # Renormalizing from the 5th training pass of each layer on (critics: 5th step; actor: 10th).
    "renormalizing-gsde": {"use_sde": True, "policy_kwargs": {**KWARGS["policy_kwargs"], "renorm_warmup_steps": 3}},
    "fixed-ent-coef-3-critics": {
        "ent_coef": 0.1, "policy_delay": 3, "policy_kwargs": {**KWARGS["policy_kwargs"], "n_critics": 3},
    },
}  # fmt: skip


def sb3_contrib() -> Any:
    return pytest.importorskip("sb3_contrib")


def minibatches() -> list[tuple[torch.Tensor, ...]]:
    """``STEPS`` Pendulum-shaped minibatches: observations, actions in [-1, 1], next observations, dones,
    rewards."""
    generator = torch.Generator().manual_seed(1)

    def uniform(*shape: int, low: float = -1.0, high: float = 1.0) -> torch.Tensor:
        return low + (high - low) * torch.rand(*shape, generator=generator)

    return [
        (
            uniform(BATCH, 3),
            uniform(BATCH, 1),
            uniform(BATCH, 3),
            (torch.rand(BATCH, 1, generator=generator) < 0.1).float(),
            uniform(BATCH, 1, low=-16.0, high=0.0),
        )
        for _ in range(STEPS)
    ]


def sb3_steps(kwargs: dict[str, Any]) -> tuple[Any, dict[str, torch.Tensor]]:
    """sb3-contrib's CrossQ after ``STEPS`` gradient steps on ``minibatches()``, and its initial weights."""
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    model = sb3_contrib().CrossQ("MlpPolicy", "Pendulum-v1", device="cpu", **copy.deepcopy(kwargs))
    model.learn(kwargs["learning_starts"])  # collection only: no gradient step yet
    initial = {key: value.clone() for key, value in model.policy.state_dict().items()}
    batches = [ReplayBufferSamples(*batch, discounts=None) for batch in minibatches()]
    model.replay_buffer.sample = lambda *args, **kwargs: batches.pop(0)  # type: ignore[method-assign]
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    return model, initial


def assert_optimizers_match(model: CrossQ, reference: Any, steps: dict[int, int], atol: float = 2e-6) -> None:
    """Adam's step counts (per optimizer index) and first moments against sb3-contrib's."""
    ours = [getattr(optimizer, "optimizer", optimizer) for optimizer in model.optimizers()]
    theirs = [reference.actor.optimizer, reference.critic.optimizer]
    if reference.ent_coef_optimizer is not None:
        theirs.append(reference.ent_coef_optimizer)
    assert len(ours) == len(theirs)
    for index, (mine, their) in enumerate(zip(ours, theirs, strict=True)):
        assert (
            mine.defaults["betas"] == their.defaults["betas"]
            and mine.defaults["eps"] == their.defaults["eps"]
        )
        for param, reference_param in zip(
            mine.param_groups[0]["params"], their.param_groups[0]["params"], strict=True
        ):
            state, expected = mine.state[param], their.state[reference_param]
            assert float(state["step"]) == float(expected["step"]) == steps[index]
            torch.testing.assert_close(state["exp_avg"], expected["exp_avg"], rtol=1e-4, atol=atol)


def assert_steps_match_sb3_contrib(
    kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch, atol: float = 2e-6, compile: bool = False
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference, initial = sb3_steps(kwargs)
        model = CrossQ("MlpPolicy", "Pendulum-v1", device="cpu", compile=compile, **copy.deepcopy(kwargs))
        model.learn(kwargs["learning_starts"])
    assert model.n_updates == 0
    ours_initial = model.policy.state_dict()
    for key, value in initial.items():  # the same seed built the same networks
        assert torch.equal(ours_initial[key], value), key
    batches = [ReplaySamples(*batch) for batch in minibatches()]
    monkeypatch.setattr(model.replay_buffer, "sample", lambda *args, **kwargs: batches.pop(0))
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    assert not batches and model.n_updates == STEPS

    theirs = reference.policy.state_dict()
    moved = max(float((theirs[key].float() - value.float()).abs().max()) for key, value in initial.items())
    assert moved > 1e-2
    for key, value in model.policy.state_dict().items():
        expected = reference.log_ent_coef.detach() if key == "log_ent_coef" else theirs[key]
        torch.testing.assert_close(value, expected, rtol=0, atol=atol, msg=lambda m, key=key: f"{key}: {m}")
    renorm_steps = {key: int(value) for key, value in theirs.items() if key.endswith(".steps")}
    assert renorm_steps["critic.qf0.0.steps"] == STEPS  # one training pass of the critics per step
    actor_updates = STEPS // kwargs["policy_delay"]
    assert renorm_steps["actor.latent_pi.0.steps"] == actor_updates
    assert_optimizers_match(model, reference, {0: actor_updates, 1: STEPS, 2: actor_updates}, atol=atol)


@pytest.mark.parametrize("overrides", CASES.values(), ids=CASES.keys())
def test_gradient_steps_match_sb3_contrib(overrides: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    assert_steps_match_sb3_contrib({**KWARGS, **overrides}, monkeypatch)


COMPILED_CASES = {
    "warm-up": {},
    "renormalizing": {"policy_kwargs": {**KWARGS["policy_kwargs"], "renorm_warmup_steps": 3}},
}


@pytest.mark.slow  # inductor compiles two programs per case (with and without the actor): minutes cold
@pytest.mark.parametrize("overrides", COMPILED_CASES.values(), ids=COMPILED_CASES.keys())
def test_compiled_gradient_steps_match_sb3_contrib(
    overrides: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """``compile=True``: the same lockstep against sb3-contrib, within the compiled program's rounding.

    Not the fixed-temperature case with 3 critics: one of its actions saturates tanh (pre-tanh above 8), where
    ``log(1 - tanh^2 + 1e-6)`` turns inductor's tanh, one ulp off ATen's, into a log-probability 0.11 apart;
    the uncompiled program matches eager there. (gSDE is not compiled.)"""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert_steps_match_sb3_contrib({**KWARGS, **overrides}, monkeypatch, atol=1e-5, compile=True)


def test_default_optimizers_are_sb3_contribs() -> None:
    """Adam with beta1 = 0.5 for actor and critics, torch's defaults for the temperature."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = sb3_contrib().CrossQ("MlpPolicy", "Pendulum-v1", device="cpu")
    model = CrossQ("MlpPolicy", "Pendulum-v1", device="cpu")
    model.learn(1)  # the optimizers exist once a trainer has run
    ours = [getattr(optimizer, "optimizer", optimizer) for optimizer in model.optimizers()]
    theirs = [reference.actor.optimizer, reference.critic.optimizer, reference.ent_coef_optimizer]
    for mine, their in zip(ours, theirs, strict=True):
        assert type(mine) is type(their)
        for name in ("lr", "betas", "eps", "weight_decay", "amsgrad"):
            assert mine.defaults[name] == their.defaults[name], name


def test_a_seed_reproduces_sb3_contribs_run() -> None:
    """Same seed, same settings: the same random warm-up transitions, then, from the policy updated after
    every step, the same actions, observations and weights to float rounding (with Adam's default eps the
    rounding noise of the zero gradients, see the module docstring, grows to 1e-2 within these steps)."""
    kwargs = {**KWARGS, "learning_starts": 48}
    steps = 80  # 48 uniformly random actions, then 32 from the policy with an update after each
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = sb3_contrib().CrossQ("MlpPolicy", "Pendulum-v1", device="cpu", **copy.deepcopy(kwargs))
        reference.learn(steps)
        model = CrossQ("MlpPolicy", "Pendulum-v1", device="cpu", **copy.deepcopy(kwargs))
        model.learn(steps)
    theirs_obs = reference.replay_buffer.observations[:steps, 0]
    theirs_actions = reference.replay_buffer.actions[:steps, 0]
    mine_obs = np.asarray(model.replay_buffer.observations)[:steps].reshape(steps, -1)
    mine_actions = np.asarray(model.replay_buffer.actions)[:steps].reshape(steps, -1)
    np.testing.assert_array_equal(mine_actions[:48], theirs_actions[:48])
    np.testing.assert_array_equal(mine_obs[:49], theirs_obs[:49])
    np.testing.assert_allclose(mine_actions[48:], theirs_actions[48:], rtol=0, atol=1e-5)
    np.testing.assert_allclose(mine_obs, theirs_obs, rtol=0, atol=1e-5)
    assert model.n_updates == reference._n_updates == steps - 48
    theirs = reference.policy.state_dict()
    for key, value in model.policy.state_dict().items():
        if key != "log_ent_coef":
            torch.testing.assert_close(
                value, theirs[key], rtol=0, atol=1e-5, msg=lambda m, key=key: f"{key}: {m}"
            )
