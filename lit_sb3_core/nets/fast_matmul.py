"""fp32 ``nn.Linear`` layers through oneDNN, forward and backward: an opt-in route for CPUs where it pays.

Why: torch's CPU build does its fp32 matrix multiplies (``addmm``/``mm``) in MKL, and MKL picks its
AVX-512 kernels only on Intel CPUs; elsewhere it runs a generic path (``MKL_VERBOSE=1`` shows the calls).
torch's CPU build also carries oneDNN, whose ``brg_matmul`` kernels choose by instruction set, not vendor.
Where MKL's generic path is the slow one (a CPU with full-width AVX-512), this route runs the products at
oneDNN's speed. On the development machine (AMD EPYC Zen 4, whose AVX-512 runs on 256-bit units) it does
not pay: MKL's path already reaches the core's fp32 peak there, and each oneDNN call costs ~20 us more
(benchmarks/profiles.md); so the route is off unless asked for.

How: ``torch.ops.mkldnn._linear_pointwise`` (the oneDNN linear that torch's own Inductor CPU backend emits;
no post-op here) computes the forward, the input gradient (``grad @ W``, as a linear with the transposed
weight) and the weight gradient (``grad^T @ x``) inside a ``torch.autograd.Function``; the bias gradient is
a sum. The layers stay ``nn.Linear`` with their own parameters: ``routed(module)`` only sets, for a block
(the fast path's training batches, ``lit_sb3_core.sdk.fast_path.plain_calls``), an instance ``forward`` on
each plain ``nn.Linear`` that takes this route for fp32 CPU tensors large enough to gain, and ``F.linear``
otherwise (other dtypes, autocast, other devices, ``torch.compile`` tracing, small layers). State dicts,
hooks, optimizers, model files: unchanged. A backward that must itself be differentiated
(``create_graph=True``, TRPO's Hessian products) computes with the plain ops.

Guard: the op is private. ``available()`` checks once, against the installed torch, that the op exists and
that forward and backward match ``F.linear``'s on a small case; otherwise every layer keeps the plain path
(with one warning). ``enabled()``: ``LIT_SB3_FAST_MATMUL=1`` (or ``set_enabled(True)``) switches the route
on where it is available. No automatic switch: the vendor alone does not tell (this Zen 4 has MKL's slow
path and no gain), and a timing taken at start-up on a busy machine would make a seeded run's floating-point
results depend on the machine's load.
"""

from __future__ import annotations

import contextlib
import functools
import os
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["ENV_VAR", "MIN_FLOPS", "available", "enabled", "linear", "routed", "set_enabled"]

ENV_VAR = "LIT_SB3_FAST_MATMUL"
# Multiply-adds (batch x in x out) below which the plain path is kept: each oneDNN call costs ~20 us more
# than MKL's and the autograd.Function's Python ~10 us per layer, more than a 64-unit layer at CartPole
# batch sizes costs in all (benchmarks/profiles.md).
MIN_FLOPS = 2**21


def _onednn(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """``x @ weight.T + bias`` by oneDNN (``weight`` may be a transposed view)."""
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


class _OneDnnLinear(torch.autograd.Function):
    """``F.linear`` with forward and both matrix gradients by oneDNN."""

    @staticmethod
    def forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        return _onednn(x, weight, bias)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: torch.Tensor) -> None:
        x, weight, bias = inputs
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        x, weight = ctx.saved_tensors
        need_x, need_w, need_b = ctx.needs_input_grad
        flat_grad = grad.reshape(-1, grad.shape[-1])
        flat_x = x.reshape(-1, x.shape[-1])
        differentiable = torch.is_grad_enabled()  # create_graph=True: stay on ops autograd can follow
        grad_x = grad_w = grad_b = None
        if need_x:
            grad_x = grad.matmul(weight) if differentiable else _onednn(grad, weight.t(), None)
        if need_w:
            grad_w = flat_grad.t().mm(flat_x) if differentiable else _onednn(flat_grad.t(), flat_x.t(), None)
        if need_b and ctx.has_bias:
            grad_b = flat_grad.sum(0)
        return grad_x, grad_w, grad_b


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, weight, bias)``, through oneDNN when it is ``enabled`` and the call qualifies."""
    if (
        x.dtype is torch.float32
        and weight.dtype is torch.float32
        and x.device.type == "cpu"
        and weight.device.type == "cpu"
        and x.dim() >= 2
        and x.numel() // x.shape[-1] * weight.shape[0] * weight.shape[1] >= MIN_FLOPS
        and not torch.is_autocast_enabled("cpu")
        and not torch.compiler.is_compiling()
        and enabled()
    ):
        if (bias is not None and bias.requires_grad) or weight.requires_grad or x.requires_grad:
            if torch.is_grad_enabled():
                return _OneDnnLinear.apply(x, weight, bias)
        return _onednn(x, weight, bias)
    return F.linear(x, weight, bias)


def _linear_forward(layer: nn.Linear, x: torch.Tensor) -> torch.Tensor:
    return linear(x, layer.weight, layer.bias)


@contextlib.contextmanager
def routed(module: nn.Module) -> Iterator[None]:
    """For the block, every plain ``nn.Linear`` in ``module`` computes through ``linear``.

    Does nothing when the route is not ``enabled``. Subclasses of ``nn.Linear`` and layers whose
    ``forward`` was already replaced keep theirs.
    """
    if not enabled():
        yield
        return
    layers = [m for m in module.modules() if type(m) is nn.Linear and "forward" not in m.__dict__]
    for layer in layers:
        object.__setattr__(layer, "forward", functools.partial(_linear_forward, layer))
    try:
        yield
    finally:
        for layer in layers:
            layer.__dict__.pop("forward", None)


@functools.cache
def available() -> bool:
    """Whether the installed torch has the oneDNN linear and it matches ``F.linear`` (checked once)."""
    try:
        if not torch.backends.mkldnn.is_available():
            return False
        generator = torch.Generator().manual_seed(0)
        x = torch.randn(3, 5, 7, generator=generator, requires_grad=True)
        weight = torch.randn(4, 7, generator=generator, requires_grad=True)
        bias = torch.randn(4, generator=generator, requires_grad=True)
        upstream = torch.randn(3, 5, 4, generator=generator)
        ours = _OneDnnLinear.apply(x, weight, bias)
        theirs = F.linear(x, weight, bias)
        ours_grads = torch.autograd.grad(ours, (x, weight, bias), upstream)
        theirs_grads = torch.autograd.grad(theirs, (x, weight, bias), upstream)
        no_bias = _onednn(x.detach(), weight.detach(), None)
        pairs = [(ours, theirs), *zip(ours_grads, theirs_grads), (no_bias, F.linear(x, weight).detach())]
        if all(a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in pairs):
            return True
        reason = "its results differ from F.linear's"
    except Exception as error:  # a torch without the op, or with another signature
        reason = f"{type(error).__name__}: {error}"
    warnings.warn(
        f"lit-sb3's oneDNN route for Linear layers is off: {reason} (torch {torch.__version__}). "
        "Training continues on torch's default path.",
        RuntimeWarning,
        stacklevel=2,
    )
    return False


_override: bool | None = None


def set_enabled(value: bool | None) -> None:
    """Switch the route on or off for this process (``None``: back to ``LIT_SB3_FAST_MATMUL``)."""
    global _override
    _override = value


def enabled() -> bool:
    """Whether ``routed`` layers take the oneDNN route: asked for, and ``available`` in this torch."""
    wanted = _override
    if wanted is None:
        wanted = os.environ.get(ENV_VAR, "").strip().lower() in ("1", "true", "on", "yes")
    return wanted and available()
