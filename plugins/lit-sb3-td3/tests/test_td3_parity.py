"""TD3's gradient steps on the same minibatches give Stable-Baselines3's weights, eager and compiled.

Both libraries start from the same weights (SB3's, loaded into lit-sb3) and train on the same minibatches
(each side's ``replay_buffer.sample`` returns the next of a fixed list) with torch's generator seeded the
same before ``train(gradient_steps=...)``, so the target policy smoothing draws are the same numbers. With
``policy_delay=2`` every second step also moves the actor and the targets (compiled: a second program).
After the steps every weight and Adam's moments must agree: eager to float rounding, the compiled program
(``compile=True``, ``lit_sb3_core.sdk.UpdateProgram``) to the rounding of its fused kernels.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest
import torch

from lit_sb3_core.sdk import ReplaySamples
from lit_sb3_td3 import TD3

torch.set_num_threads(1)

STEPS, BATCH = 6, 32
KWARGS = {
    "learning_starts": 64, "buffer_size": 1_000, "batch_size": BATCH, "learning_rate": 3e-3, "tau": 0.1,
    "seed": 0, "policy_kwargs": {"net_arch": [16, 16]},
}  # fmt: skip


def minibatches() -> list[tuple[torch.Tensor, ...]]:
    """``STEPS`` Pendulum-shaped minibatches: observations, actions, next observations, dones, rewards."""
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


def sb3_steps() -> tuple[Any, dict[str, torch.Tensor]]:
    """SB3's TD3 after ``STEPS`` gradient steps on ``minibatches()``, and its initial weights."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.type_aliases import ReplayBufferSamples

    model = sb3.TD3("MlpPolicy", "Pendulum-v1", device="cpu", **copy.deepcopy(KWARGS))
    model.learn(KWARGS["learning_starts"])  # collection only: no gradient step yet
    initial = {key: value.clone() for key, value in model.policy.state_dict().items()}
    batches = [ReplayBufferSamples(*batch, discounts=None) for batch in minibatches()]
    model.replay_buffer.sample = lambda *args, **kwargs: batches.pop(0)  # type: ignore[method-assign]
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    return model, initial


# compile=True must match SB3 too; compiling takes a minute or more on a loaded CPU: marked slow.
@pytest.mark.parametrize(
    "compiled", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["eager", "compiled"]
)
def test_gradient_steps_match_sb3(compiled: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference, initial = sb3_steps()
        if compiled:
            monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # not the user's folder
            monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
        model = TD3("MlpPolicy", "Pendulum-v1", device="cpu", compile=compiled, **copy.deepcopy(KWARGS))
        model.learn(KWARGS["learning_starts"])
    assert model.n_updates == 0
    model.policy.load_state_dict(initial)
    batches = [ReplaySamples(*batch) for batch in minibatches()]
    monkeypatch.setattr(model.replay_buffer, "sample", lambda *args, **kwargs: batches.pop(0))
    torch.manual_seed(123)
    model.train(gradient_steps=STEPS, batch_size=BATCH)
    assert not batches and model.n_updates == STEPS

    atol = 2e-5 if compiled else 5e-6  # the compiled program's fused kernels round differently
    theirs = reference.policy.state_dict()
    assert max(float((theirs[key] - value).abs().max()) for key, value in initial.items()) > 1e-3
    for key, value in model.policy.state_dict().items():
        torch.testing.assert_close(
            value, theirs[key], rtol=0, atol=atol, msg=lambda m, key=key: f"{key}: {m}"
        )
    ours_optimizers = [getattr(o, "optimizer", o) for o in model.optimizers()]
    for ours, their, steps in zip(
        ours_optimizers,
        [reference.actor.optimizer, reference.critic.optimizer],
        [STEPS // 2, STEPS],
        strict=True,
    ):
        for mine, reference_param in zip(
            ours.param_groups[0]["params"], their.param_groups[0]["params"], strict=True
        ):
            state, expected_state = ours.state[mine], their.state[reference_param]
            assert float(state["step"]) == float(expected_state["step"]) == steps
            torch.testing.assert_close(state["exp_avg"], expected_state["exp_avg"], rtol=0, atol=atol)
