"""The optimizers of the compiled updates (Adam, AdamW, RMSprop as tensor operations) step as torch's do.

The arithmetic is checked eagerly against torch's optimizers (fast); one slow test runs it inside a compiled
``CompiledStep`` with RMSprop, A2C's optimizer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import CompiledStep
from lit_sb3_core.sdk.compiled_optimizers import (
    check_compilable,
    optimizer_settings,
    optimizer_states,
    optimizer_update,
)
from lit_sb3_core.sdk.compiled_update import clip_by_global_norm

Factory = Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer]

OPTIMIZERS: dict[str, Factory] = {
    "adam": lambda p: torch.optim.Adam(p, lr=1e-2, eps=1e-5),
    "adamw": lambda p: torch.optim.AdamW(p, lr=1e-2, weight_decay=0.1),
    "rmsprop-a2c": lambda p: torch.optim.RMSprop(p, lr=7e-3, alpha=0.99, eps=1e-5, weight_decay=0),
    "rmsprop-momentum-centered-decay": lambda p: torch.optim.RMSprop(
        p, lr=1e-2, alpha=0.9, eps=1e-6, weight_decay=0.01, momentum=0.5, centered=True
    ),
}


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))


def _loss(forward, x, y):  # type: ignore[no-untyped-def]
    return ((forward(x) - y) ** 2).mean()


def _eager_steps(net: torch.nn.Module, optimizer: torch.optim.Optimizer, batches: list, clip: float) -> None:
    for x, y in batches:
        optimizer.zero_grad()
        _loss(net, x, y).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
        optimizer.step()


def _batches(count: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [
        (torch.randn(16, 3, generator=generator), torch.randn(16, 2, generator=generator))
        for _ in range(count)
    ]


def _assert_same(net: torch.nn.Module, reference: torch.nn.Module, ours, theirs) -> None:  # type: ignore[no-untyped-def]
    for mine, expected in zip(net.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(mine, expected, rtol=1e-5, atol=1e-6)
    ours_state, theirs_state = ours.state_dict()["state"], theirs.state_dict()["state"]
    assert ours_state.keys() == theirs_state.keys()
    for index, state in theirs_state.items():
        assert ours_state[index].keys() == state.keys(), "the state under torch's names"
        for name, value in state.items():
            torch.testing.assert_close(
                ours_state[index][name], value, rtol=1e-4, atol=1e-6, msg=lambda m, n=name: f"{n}: {m}"
            )


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS.keys())
def test_each_optimizer_steps_as_torchs_does(make: Factory) -> None:
    """Ten clipped steps written as tensor operations (run eagerly here) against torch's own ``step()``:
    the same weights and the same state, which a resumed eager run then reads."""
    net, reference = _net(), _net()
    ours, theirs = make(list(net.parameters())), make(list(reference.parameters()))
    check_compilable(ours)
    batches = _batches(10)
    params = list(net.parameters())
    for x, y in batches:
        grads = torch.autograd.grad(_loss(net, x, y), params)
        with torch.no_grad():
            grads = clip_by_global_norm(list(grads), 0.5)
            lr = torch.tensor(ours.param_groups[0]["lr"])
            for param, grad, state in zip(params, grads, optimizer_states(ours, params), strict=True):
                optimizer_update(param, grad, state, lr, optimizer_settings(ours))
    _eager_steps(reference, theirs, batches, 0.5)
    _assert_same(net, reference, ours, theirs)
    # A resumed eager run continues from the state the tensor operations wrote.
    _eager_steps(net, ours, batches[:3], 0.5)
    _eager_steps(reference, theirs, batches[:3], 0.5)
    _assert_same(net, reference, ours, theirs)


@pytest.mark.parametrize("beta2", [0.999, 0.9999])
def test_adams_bias_corrections_are_torchs_to_float32_rounding(beta2: float) -> None:
    """Early Adam steps at a large learning rate move each weight by about the learning rate, scaled by the
    bias corrections, which torch computes in double: ours must match them to float32 rounding. Computed
    plainly in float32 (``1 - beta2**step``) the first steps were off by 1e-6 (0.999) and 1e-5 (0.9999)."""
    net, reference = _net(), _net()
    ours, theirs = (
        torch.optim.Adam(list(n.parameters()), lr=0.05, betas=(0.9, beta2)) for n in (net, reference)
    )
    params = list(net.parameters())
    for x, y in _batches(3):
        grads = torch.autograd.grad(_loss(net, x, y), params)
        with torch.no_grad():
            for param, grad, state in zip(params, grads, optimizer_states(ours, params), strict=True):
                optimizer_update(param, grad, state, torch.tensor(0.05), optimizer_settings(ours))
        _eager_steps(reference, theirs, [(x, y)], clip=float("inf"))
    for mine, expected in zip(net.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(mine, expected, rtol=0, atol=1e-7)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: torch.optim.SGD(p, lr=0.1), "Adam, AdamW and RMSprop"),
        (lambda p: torch.optim.RMSprop(p, lr=0.1, maximize=True), "RMSprop with maximize"),
        (lambda p: torch.optim.RMSprop(p, lr=torch.tensor(0.1)), "tensor learning rate"),
    ],
)
def test_what_cannot_be_compiled_is_refused_with_the_fix(make: Factory, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        check_compilable(make(list(_net().parameters())))


@pytest.mark.slow
def test_a_compiled_rmsprop_step_learns_what_the_eager_one_learns(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``CompiledStep`` with A2C's RMSprop: 20 clipped steps, the same weights and state as torch's."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    net, reference = _net(), _net()
    make = OPTIMIZERS["rmsprop-a2c"]
    ours, theirs = make(list(net.parameters())), make(list(reference.parameters()))
    step = CompiledStep(net, _loss, max_grad_norm=0.5)
    batches = _batches(20)
    for x, y in batches:
        step(ours, x, y)
    _eager_steps(reference, theirs, batches, 0.5)
    _assert_same(net, reference, ours, theirs)
