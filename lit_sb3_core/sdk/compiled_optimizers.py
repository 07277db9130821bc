"""The optimizers a compiled update applies, written as tensor operations: Adam, AdamW and RMSprop.

A compiled update (``CompiledStep``, ``UpdateProgram``) takes its gradients with ``torch.func`` and cannot
call ``optimizer.step()`` inside the program, so each supported optimizer's arithmetic is written here as
torch's single-tensor path computes it. Its state lives in the optimizer's own ``state`` under torch's names
(Adam: ``step``, ``exp_avg``, ``exp_avg_sq``; RMSprop: ``step``, ``square_avg``, ``momentum_buffer``,
``grad_avg``), created as torch's first step would, so ``optimizer.state_dict()``, checkpoints and a resumed
eager run read it as torch wrote it. The constant settings enter a program as values (a change recompiles),
the learning rate as a tensor (schedules do not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from lit_sb3_core.errors import ConfigurationError

__all__ = [
    "OptimizerSettings",
    "ParameterState",
    "check_compilable",
    "optimizer_settings",
    "optimizer_states",
    "optimizer_update",
]

# ("adam", beta1, beta2, eps, weight_decay, decoupled) or ("rmsprop", alpha, eps, weight_decay, momentum, centered)
OptimizerSettings = tuple[Any, ...]
# One parameter's state tensors in the order its update takes them (Adam: step, exp_avg, exp_avg_sq;
# RMSprop: step, square_avg, then momentum_buffer with momentum, then grad_avg when centered).
ParameterState = tuple[torch.Tensor, ...]

_COMPILABLE = (torch.optim.Adam, torch.optim.AdamW, torch.optim.RMSprop)
_UNSUPPORTED_OPTIONS = ("amsgrad", "maximize", "capturable", "differentiable")


def check_compilable(optimizer: torch.optim.Optimizer) -> None:
    """Raise ``ConfigurationError`` (naming the fix) unless ``optimizer`` is an Adam, AdamW or RMSprop that
    the compiled programs run: one parameter group, no amsgrad, maximize, capturable or differentiable
    mode, a float learning rate."""
    name = type(optimizer).__name__
    if type(optimizer) not in _COMPILABLE or len(optimizer.param_groups) != 1:
        raise ConfigurationError(
            f"compile=True compiles Adam, AdamW and RMSprop updates with one parameter group; this optimizer "
            f"is {name} with {len(optimizer.param_groups)} group(s). Use optimizer_class=torch.optim.Adam "
            "(or torch.optim.RMSprop) or train with compile=False."
        )
    group = optimizer.param_groups[0]
    unsupported = [option for option in _UNSUPPORTED_OPTIONS if group.get(option)]
    if unsupported or isinstance(group["lr"], torch.Tensor):
        what = ", ".join(unsupported) or "a tensor learning rate"
        raise ConfigurationError(
            f"compile=True does not compile {name} with {what}: drop it from optimizer_kwargs or train "
            "with compile=False."
        )


def optimizer_settings(optimizer: torch.optim.Optimizer) -> OptimizerSettings:
    """The optimizer's constant settings, which enter a compiled program as values."""
    group = optimizer.param_groups[0]
    if type(optimizer) is torch.optim.RMSprop:
        return (
            "rmsprop",
            float(group["alpha"]),
            float(group["eps"]),
            float(group["weight_decay"]),
            float(group["momentum"]),
            bool(group["centered"]),
        )
    beta1, beta2 = group["betas"]
    decoupled = bool(group.get("decoupled_weight_decay", type(optimizer) is torch.optim.AdamW))
    return "adam", float(beta1), float(beta2), float(group["eps"]), float(group["weight_decay"]), decoupled


def optimizer_states(
    optimizer: torch.optim.Optimizer, params: Sequence[torch.Tensor]
) -> list[ParameterState]:
    """Each parameter's state under torch's names, created as torch's first step would: the compiled update
    writes it in place."""
    settings = optimizer_settings(optimizer)
    names = ["step", "exp_avg", "exp_avg_sq"]
    if settings[0] == "rmsprop":
        _, _, _, _, momentum, centered = settings
        names = ["step", "square_avg"] + ["momentum_buffer"] * (momentum > 0) + ["grad_avg"] * centered
    state = optimizer.state
    for param in params:
        if not state.get(param):
            state[param] = {
                name: torch.zeros((), dtype=torch.float32, device=param.device)
                if name == "step"
                else torch.zeros_like(param, memory_format=torch.preserve_format)
                for name in names
            }
    return [tuple(state[param][name] for name in names) for param in params]


def optimizer_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    state: ParameterState,
    lr: torch.Tensor,
    settings: OptimizerSettings,
) -> None:
    """One update of one parameter, in place, as the optimizer's single-tensor path computes it."""
    if settings[0] == "rmsprop":
        _rmsprop_update(param, grad, state, lr, settings)
    else:
        _adam_update(param, grad, state, lr, settings)


def _adam_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    state: ParameterState,
    lr: torch.Tensor,
    settings: OptimizerSettings,
) -> None:
    """``torch.optim.Adam``/``AdamW``."""
    _, beta1, beta2, eps, weight_decay, decoupled = settings
    count, exp_avg, exp_avg_sq = state
    if weight_decay != 0:
        if decoupled:
            param.mul_(1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param
    count.add_(1)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = _one_minus_power(beta1, count)
    bias_correction2_sqrt = torch.sqrt(_one_minus_power(beta2, count))
    denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
    param.sub_(lr * exp_avg / (bias_correction1 * denom))


def _one_minus_power(beta: float, count: torch.Tensor) -> torch.Tensor:
    """``1 - beta**count`` to float32 rounding, as torch's step computes it in double. Written plainly in
    float32 it loses ``beta``'s representation error 1/(1 - beta) times over (beta2 = 0.999: 2e-5 relative at
    the first step, 0.9999: 2e-4), which made the first compiled Adam steps 1e-5 (1e-4) of their size off
    torch's."""
    if beta == 0:
        return torch.ones_like(count)
    return -torch.expm1(count * math.log(beta))


def _rmsprop_update(
    param: torch.Tensor,
    grad: torch.Tensor,
    state: ParameterState,
    lr: torch.Tensor,
    settings: OptimizerSettings,
) -> None:
    """``torch.optim.RMSprop`` (A2C's optimizer in SB3), with its momentum and centered variants."""
    _, alpha, eps, weight_decay, momentum, centered = settings
    count, square_avg, *rest = state
    count.add_(1)
    if weight_decay != 0:
        grad = grad + weight_decay * param
    square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
    if centered:
        grad_avg = rest[-1]
        grad_avg.lerp_(grad, 1 - alpha)
        avg = (square_avg - grad_avg * grad_avg).sqrt() + eps
    else:
        avg = square_avg.sqrt() + eps
    if momentum > 0:
        buffer = rest[0]
        buffer.mul_(momentum).addcdiv_(grad, avg)
        param.sub_(lr * buffer)
    else:
        param.sub_(lr * grad / avg)
