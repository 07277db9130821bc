"""``UpdateProgram``: an update of several networks run as one compiled program learns what the eager
update learns (SAC: critics, actor, temperature and target update in one program).

The equivalence runs compile with inductor (a C++ build: a minute or more of CPU cold), so they are marked
slow; what cannot be compiled is refused before any compiling, and those checks run by default.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import safetensors.torch
import torch

from lit_sb3 import SAC
from lit_sb3_core import RLEnvDataModule, RLTrainer
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import UpdateProgram


def _policy() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _update(steps: Any, x: torch.Tensor) -> torch.Tensor:
    return steps.minimize(0, lambda: x.sum())


def _program(policy: torch.nn.Module, world_size: int = 1) -> UpdateProgram:
    algorithm = SimpleNamespace(require_policy=lambda: policy, world_size=world_size)
    return UpdateProgram(algorithm, _update, compiled=True)


@pytest.mark.parametrize(
    ("optimizer", "message"),
    [
        (lambda p: torch.optim.SGD(p, lr=0.1), "Adam, AdamW and RMSprop"),
        (lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True), "amsgrad"),
        (
            lambda p: torch.optim.Adam([torch.nn.Parameter(torch.zeros(2))], lr=0.1),
            "parameters of the policy",
        ),
    ],
)
def test_what_it_cannot_compile_is_refused_with_the_fix(optimizer, message) -> None:  # type: ignore[no-untyped-def]
    policy = _policy()
    with pytest.raises(ConfigurationError, match=message):
        _program(policy)([optimizer(policy.parameters())], torch.zeros(4, 3))


def test_ddp_and_float16_autocast_are_refused_with_the_fix() -> None:
    policy = _policy()
    optimizer = torch.optim.Adam(policy.parameters())
    with pytest.raises(ConfigurationError, match="compile=False under DDP"):
        _program(policy, world_size=2)([optimizer], torch.zeros(4, 3))
    # float16 gradients need a loss scaler, which the program has not; bf16 is compiled in (below).
    with torch.autocast("cpu", dtype=torch.float16), pytest.raises(ConfigurationError, match="bf16-mixed"):
        _program(policy)([optimizer], torch.zeros(4, 3))


def test_sac_refuses_what_it_cannot_compile() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        SAC("MlpPolicy", compile="yes")
    with pytest.raises(ConfigurationError, match="use_sde=False, or compile=False"):
        SAC("MlpPolicy", use_sde=True, compile=True)
    model = SAC(
        "MlpPolicy",
        "Pendulum-v1",
        learning_starts=10,
        batch_size=8,
        compile=True,
        device="cpu",
        policy_kwargs={"net_arch": [8], "optimizer_class": torch.optim.SGD},
    )
    with pytest.raises(ConfigurationError, match=r"optimizer_class=torch\.optim\.Adam"):
        model.learn(12)


def _sac(compile: bool, **overrides: Any) -> SAC:
    """The equivalence runs pass ``TANH``: with it a run's gradients are continuous in its weights, so two
    runs whose weights differ by float rounding get gradients that differ by rounding too. With ReLU a hidden
    unit on its kink for one sample opens in one run and stays shut in the other, and that sample's gradient
    through it (~1e-3) is in one run only: measured here, a gradient-carrying preactivation of 7.5e-8 at the
    20th step (critic 1, layer 1), when the two runs' critic weights were 3e-8 apart (TQC's test failed so,
    3de3711)."""
    kwargs: dict[str, Any] = {
        "learning_starts": 100,
        "buffer_size": 2_000,
        "batch_size": 64,
        "learning_rate": "lin_1e-3",
        "target_update_interval": 2,
        "seed": 0,
        "device": "cpu",
        "policy_kwargs": {"net_arch": [32, 32]},
        **overrides,
    }
    return SAC("MlpPolicy", "Pendulum-v1", compile=compile, **kwargs)


TANH = {"policy_kwargs": {"net_arch": [32, 32], "activation_fn": torch.nn.Tanh}}


def _compile_cache(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(folder))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)


def _assert_same_weights_and_state(compiled: SAC, eager: SAC, updates: int) -> None:
    assert compiled.n_updates == eager.n_updates == updates
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    for ours_optimizer, theirs_optimizer in zip(compiled.optimizers(), eager.optimizers(), strict=True):
        ours_state = ours_optimizer.optimizer.state_dict()["state"]
        theirs_state = theirs_optimizer.optimizer.state_dict()["state"]
        assert ours_state.keys() == theirs_state.keys()
        for index, state in theirs_state.items():
            assert set(ours_state[index]) == set(state)
            assert float(ours_state[index]["step"]) == float(state["step"]) == updates
            torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-6)


@pytest.mark.slow
def test_a_compiled_sac_learns_what_the_eager_one_learns(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Same seed: ``learn(130)`` (30 gradient steps inside Lightning's loop, a decaying learning rate, a
    learned temperature, targets updated every second step: two programs), then 150 more gradient steps
    from the same replay buffer (``train(gradient_steps=150)``, torch's generator seeded alike): the same
    weights, Adam states, Lightning step counts and logged losses within float rounding.

    The long stretch runs outside ``learn`` on purpose: inside it, the actions the policy collects feed
    rounding differences back into the data, which grow the way any chaotic system's do. Each model is
    built right before its run (building one seeds torch's generator, which the run's sampling continues).
    """
    _compile_cache(monkeypatch, tmp_path / "cache")
    eager = _sac(False, **TANH)
    eager.learn(130)
    compiled = _sac(True, **TANH)
    compiled.learn(130)
    _assert_same_weights_and_state(compiled, eager, 30)
    assert compiled.trainer.global_step == eager.trainer.global_step == 3 * 30  # 3 optimizers
    for key, value in eager.last_metrics.items():
        if key.startswith("train/"):
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-4, abs=1e-6), key
    for model in (eager, compiled):
        torch.manual_seed(1)  # the actor's draws
        np.random.seed(1)  # the minibatch indices: numpy's global generator, as SB3's buffers
        model.train(gradient_steps=150)
    _assert_same_weights_and_state(compiled, eager, 180)


@pytest.mark.slow
def test_a_compiled_sacs_model_file_is_the_eager_ones_and_resumes_eagerly(
    monkeypatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """After compiled updates the model file holds what the eager file holds (the same entries, the same
    Adam state names and step counts): loaded with compile=False, torch's Adam goes on from that state."""
    _compile_cache(monkeypatch, tmp_path / "cache")
    files = {}
    for compile in (True, False):
        model = _sac(compile, learning_rate=1e-3, target_update_interval=1)
        model.learn(150)
        model.save(tmp_path / str(compile))
        with zipfile.ZipFile(tmp_path / f"{compile}.zip") as archive:
            metadata = json.loads(archive.read("metadata.json"))
            optimizers = safetensors.torch.load(archive.read("optimizers.safetensors"))
        files[compile] = (metadata, optimizers)
    (compiled_metadata, compiled_state), (eager_metadata, eager_state) = files[True], files[False]
    assert compiled_metadata.keys() == eager_metadata.keys()
    assert compiled_metadata["hyperparameters"]["compile"] is True
    assert compiled_state.keys() == eager_state.keys()
    for key, value in eager_state.items():
        torch.testing.assert_close(compiled_state[key], value, rtol=1e-3, atol=1e-5, msg=key)
        if key.endswith("/step"):
            assert float(value) == 50

    resumed = SAC.load(tmp_path / "True", env="Pendulum-v1", device="cpu", compile=False)
    assert resumed.compile_update is False
    resumed.learn(60, reset_num_timesteps=False)
    assert resumed.n_updates == 110
    for optimizer in resumed.optimizers():
        assert all(float(state["step"]) == 110 for state in optimizer.optimizer.state.values())


def _fit_bf16(model: SAC, steps: int) -> None:
    RLTrainer(
        max_steps=steps,
        precision="bf16-mixed",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    ).fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", seed=0))


@pytest.mark.slow
def test_a_compiled_sac_under_bf16_autocast_learns_what_the_eager_one_learns(
    monkeypatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """``precision="bf16-mixed"`` with ``compile=True``: autocast is compiled into the program (the products
    in bf16, weights, gradients and Adam in float32). Same seed, 30 gradient steps inside Lightning's loop:
    the weights, losses and Adam's step counts of the eager bf16 run within bf16 rounding, and far from the
    float32 program's (the products really ran in bf16).
    """
    _compile_cache(monkeypatch, tmp_path / "cache")
    runs = {}
    for name, compile, bf16 in (("eager", False, True), ("compiled", True, True), ("fp32", True, False)):
        model = _sac(compile)
        if bf16:
            _fit_bf16(model, 130)
        else:
            model.learn(130)
        assert all(p.dtype == torch.float32 for p in model.policy.parameters()), "fp32 weights under autocast"
        runs[name] = model
    eager, compiled, fp32 = runs["eager"], runs["compiled"], runs["fp32"]
    assert compiled.n_updates == eager.n_updates == 30
    assert compiled.trainer.global_step == eager.trainer.global_step == 3 * 30
    to_bf16 = to_fp32 = 0.0
    for name, theirs in eager.policy.state_dict().items():
        ours = compiled.policy.state_dict()[name]
        # Adam moves each weight by about the learning rate per step: a gradient of a few bf16 ulps whose
        # sign flips moves it the other way, so weights agree to a few steps' size (lr 1e-3).
        torch.testing.assert_close(ours, theirs, rtol=0, atol=2e-3, msg=name)
        to_bf16 = max(to_bf16, float((ours - theirs).abs().max()))
        to_fp32 = max(to_fp32, float((ours - fp32.policy.state_dict()[name]).abs().max()))
    assert to_bf16 < to_fp32, (to_bf16, to_fp32)
    for optimizer in compiled.optimizers():
        assert all(float(state["step"]) == 30 for state in optimizer.optimizer.state.values())
    for key, value in eager.last_metrics.items():
        if key.startswith("train/") and key != "train/learning_rate":
            assert compiled.last_metrics[key] == pytest.approx(value, rel=1e-2, abs=1e-3), key
    differs = [
        key
        for key, value in eager.last_metrics.items()
        if key.endswith("_loss") and fp32.last_metrics[key] != pytest.approx(value, rel=1e-5)
    ]
    assert differs, "bf16 and float32 programs gave the same losses: autocast did not reach the program"


class _NormalizedPair(torch.nn.Module):
    """Two networks: ``first`` batch-normalized (its running statistics are buffers), ``second`` plain."""

    def __init__(self) -> None:
        super().__init__()
        # No bias before the norm: the norm cancels it, so its gradient would be rounding noise.
        self.first = torch.nn.Sequential(
            torch.nn.Linear(3, 8, bias=False),
            torch.nn.BatchNorm1d(8, momentum=0.5),
            torch.nn.ReLU(),
            torch.nn.Linear(8, 1),
        )
        self.second = torch.nn.Linear(3, 1)


def _normalized_update(steps: Any, policy: _NormalizedPair, x: torch.Tensor) -> tuple[Any, Any]:
    """Loss 0 in train mode (updates the running statistics in place), loss 1 through ``first`` in eval mode
    (reads the statistics just written)."""
    policy.first.train()
    first = steps.minimize(0, lambda: policy.first(x).square().mean())
    policy.first.eval()
    second = steps.minimize(1, lambda: (policy.first(x).detach() * policy.second(x)).mean())
    return first, second


@pytest.mark.slow
def test_a_loss_may_update_buffers_in_place(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Batch-norm statistics written by a loss in train mode (buffers, mutated in place inside the gradient
    transform), read by the next loss in eval mode: the compiled program writes and reads them as eager
    code does, the mode switches compiled in."""
    _compile_cache(monkeypatch, tmp_path)

    def optimizer_step(optimizer, loss, max_grad_norm=None, inputs=None):  # type: ignore[no-untyped-def]
        optimizer.zero_grad()
        loss.backward(inputs=inputs)
        optimizer.step()

    runs = []
    for compiled in (False, True):
        torch.manual_seed(0)
        policy = _NormalizedPair()
        optimizers = [
            torch.optim.Adam(policy.first.parameters(), lr=0.1),
            torch.optim.Adam(policy.second.parameters(), lr=0.1),
        ]
        algorithm = SimpleNamespace(
            require_policy=lambda policy=policy: policy, optimizer_step=optimizer_step
        )
        program = UpdateProgram(
            algorithm, lambda steps, x, policy=policy: _normalized_update(steps, policy, x), compiled=compiled
        )
        generator = torch.Generator().manual_seed(1)
        losses = [program(optimizers, torch.randn(16, 3, generator=generator) + i) for i in range(4)]
        assert not policy.first.training  # the program's mode switches happened
        runs.append((policy.state_dict(), losses))
    (eager_state, eager_losses), (compiled_state, compiled_losses) = runs
    assert (
        int(compiled_state["first.1.num_batches_tracked"])
        == int(eager_state["first.1.num_batches_tracked"])
        == 4
    )
    for name, value in eager_state.items():
        torch.testing.assert_close(compiled_state[name], value, rtol=1e-4, atol=1e-5, msg=name)
    assert float((eager_state["first.1.running_mean"]).abs().max()) > 0.1  # the statistics moved
    for ours, theirs in zip(compiled_losses, eager_losses, strict=True):
        torch.testing.assert_close(torch.stack(ours), torch.stack(theirs).detach(), rtol=1e-4, atol=1e-6)
