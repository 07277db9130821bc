"""SAC's gradient steps on the same minibatches give Stable-Baselines3's weights, eager and compiled.

Both libraries start from the same weights (SB3's, loaded into lit-sb3), train on the same minibatches
(each side's ``replay_buffer.sample`` returns the next of a fixed list) with torch's generator seeded the
same before ``train(gradient_steps=...)``: the actor's Gaussian draws at ``s`` and ``s'`` must then be the
same numbers in the same order. After the steps every weight, ``log(alpha)`` and Adam's moments must agree:
eager to float rounding, the compiled program (``compile=True``, ``lit_sb3_core.sdk.UpdateProgram``) to the
rounding of its fused kernels.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest
import torch

from lit_sb3_core.sdk import ReplaySamples
from lit_sb3_sac import SAC

torch.set_num_threads(1)

STEPS, BATCH = 6, 32
KWARGS = {
    "learning_starts": 64, "buffer_size": 1_000, "batch_size": BATCH, "learning_rate": 3e-3,
    "seed": 0, "policy_kwargs": {"net_arch": [16, 16]},
}  # fmt: skip
CASES = {
    "auto-ent-coef": {},
    "fixed-ent-coef-delayed-targets": {"ent_coef": 0.2, "target_update_interval": 2, "tau": 0.1},
}


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


def sb3_steps(kwargs: dict[str, Any]) -> Any:
    """SB3's SAC after ``STEPS`` gradient steps on ``minibatches()``; its initial weights come back too."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    model = sb3.SAC("MlpPolicy", "Pendulum-v1", device="cpu", **copy.deepcopy(kwargs))  # SB3 writes into them
    model.learn(kwargs["learning_starts"])  # collection only: no gradient step yet
    initial = {key: value.clone() for key, value in model.policy.state_dict().items()}
    batches = [ReplayBufferSamples(*batch, discounts=None) for batch in minibatches()]
    model.replay_buffer.sample = lambda *args, **kwargs: batches.pop(0)  # type: ignore[method-assign]
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    return model, initial


@pytest.fixture(scope="module")
def compile_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Inductor's caches for this module's compiled runs, in a temporary folder (not the user's)."""
    return str(tmp_path_factory.mktemp("torch-compile"))


# compile=True must match SB3 too; compiling takes a minute or more on a loaded CPU: marked slow.
@pytest.mark.parametrize(
    "compiled", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "compiled"]
)
@pytest.mark.parametrize("overrides", CASES.values(), ids=CASES.keys())
def test_gradient_steps_match_sb3(
    overrides: dict[str, Any],
    compiled: bool,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    kwargs = {**KWARGS, **overrides}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference, initial = sb3_steps(kwargs)
        if compiled:
            monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", request.getfixturevalue("compile_cache"))
            monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
        model = SAC("MlpPolicy", "Pendulum-v1", device="cpu", compile=compiled, **kwargs)
        model.learn(kwargs["learning_starts"])
    assert model.n_updates == 0
    model.policy.load_state_dict(initial, strict=False)  # SB3 keeps log(alpha) outside its policy
    batches = [ReplaySamples(*batch) for batch in minibatches()]
    monkeypatch.setattr(model.replay_buffer, "sample", lambda *args, **kwargs: batches.pop(0))
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    assert not batches and model.n_updates == STEPS

    # Eager: lit-sb3's fused Adam and batched critics round differently from SB3 (a few 1e-6 after these
    # steps at this learning rate, as before the update was written for compiling); the compiled program's
    # fused kernels a little more. The weights moved by ~1e-2: a wrong update would be far outside.
    atol = 2e-5 if compiled else 5e-6
    theirs = reference.policy.state_dict()
    moved = max(float((theirs[key] - value).abs().max()) for key, value in initial.items())
    assert moved > 1e-3
    for key, value in model.policy.state_dict().items():
        expected = reference.log_ent_coef.detach() if key == "log_ent_coef" else theirs[key]
        torch.testing.assert_close(value, expected, rtol=0, atol=atol, msg=lambda m, key=key: f"{key}: {m}")
    ours_optimizers = [getattr(o, "optimizer", o) for o in model.optimizers()]
    their_optimizers = [reference.actor.optimizer, reference.critic.optimizer]
    if reference.ent_coef_optimizer is not None:
        their_optimizers.append(reference.ent_coef_optimizer)
    assert len(ours_optimizers) == len(their_optimizers)
    for ours, their in zip(ours_optimizers, their_optimizers, strict=True):
        for mine, reference_param in zip(
            ours.param_groups[0]["params"], their.param_groups[0]["params"], strict=True
        ):
            state, expected_state = ours.state[mine], their.state[reference_param]
            assert float(state["step"]) == float(expected_state["step"]) == STEPS
            torch.testing.assert_close(state["exp_avg"], expected_state["exp_avg"], rtol=0, atol=atol)
