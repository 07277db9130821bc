"""Optimizer steps without ``Optimizer.step``'s Python machinery: Adam/AdamW (fused) and RMSprop (foreach).

``torch.optim.Adam(fused=True).step()`` spends most of its time around the kernel: the profiler record,
the ``_use_grad_for_differentiable`` wrapper, step hooks, ``_init_group``'s per-parameter checks and the
grouping by device and dtype. For the small networks of RL that is two thirds of a step (about 260 us of
which the fused kernel is 80 on this project's CPU, see benchmarks/profiles.md), paid for every gradient
step of DQN, PPO and each of SAC's three optimizers. ``direct_step`` calls the same fused kernel
(``torch._fused_adam_`` / ``torch._fused_adamw_``) on the optimizer's own state, so the arithmetic is the
same and ``optimizer.state_dict()`` stays what torch writes; RMSprop (A2C's optimizer) goes through torch's
functional ``rmsprop`` with ``foreach``, what its ``step`` calls. It declines (returns False, having changed
nothing) whenever the plain ``step()`` could behave differently: the first step (the state is created
there), hooks, a gradient scaler, capturable or differentiable mode, a tensor learning rate, mixed
devices or dtypes, parameters without a gradient.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["direct_step"]

_ADAMS = (torch.optim.Adam, torch.optim.AdamW)


def _plain_group(group: dict[str, Any]) -> bool:
    return (
        bool(group.get("fused"))
        and not group.get("capturable", False)
        and not group.get("differentiable", False)
        and isinstance(group["lr"], float)
        and not isinstance(group["betas"][0], torch.Tensor)
        and not isinstance(group["betas"][1], torch.Tensor)
    )


def _hooked(optimizer: torch.optim.Optimizer) -> bool:
    from torch.optim import optimizer as torch_optimizer

    return bool(
        optimizer._optimizer_step_pre_hooks
        or optimizer._optimizer_step_post_hooks
        or torch_optimizer._global_optimizer_pre_hooks
        or torch_optimizer._global_optimizer_post_hooks
        or "step" in vars(optimizer)  # step replaced on the instance (an LR scheduler's counter, a patch)
    )


@torch.no_grad()
def direct_step(optimizer: torch.optim.Optimizer) -> bool:
    """Step ``optimizer`` (Adam, AdamW, RMSprop) without ``step()``; False (nothing done) where ``step()``
    must run."""
    if _hooked(optimizer):
        return False
    if type(optimizer) in _ADAMS:
        return _adam_step(optimizer)
    if type(optimizer) is torch.optim.RMSprop:
        return _rmsprop_step(optimizer)
    return False


def _gradients_and_states(
    optimizer: torch.optim.Optimizer, group: dict[str, Any], device: Any, dtype: Any
) -> tuple[list, list, list, Any, Any] | None:
    """Parameters, gradients and states of ``group``, or None where ``step()`` must run: a parameter
    without a gradient (step() skips it), one without state (step() creates it), sparse gradients, or a
    second device or dtype."""
    params, grads, states = [], [], []
    for param in group["params"]:
        grad = param.grad
        if grad is None or grad.is_sparse:
            return None
        state = optimizer.state.get(param)
        if not state:
            return None
        if device is None:
            device, dtype = param.device, param.dtype
        elif param.device != device or param.dtype != dtype:
            return None
        params.append(param)
        grads.append(grad)
        states.append(state)
    return params, grads, states, device, dtype


def _rmsprop_step(optimizer: torch.optim.Optimizer) -> bool:
    from torch.optim.rmsprop import rmsprop

    plan = []
    device = dtype = None
    for group in optimizer.param_groups:
        if not group.get("foreach") or group.get("capturable") or group.get("differentiable"):
            return False
        if not isinstance(group["lr"], float):
            return False
        found = _gradients_and_states(optimizer, group, device, dtype)
        if found is None:
            return False
        params, grads, states, device, dtype = found
        plan.append((group, params, grads, states))
    for group, params, grads, states in plan:
        if not params:
            continue
        rmsprop(
            params,
            grads,
            [state["square_avg"] for state in states],
            [state["grad_avg"] for state in states] if group["centered"] else [],
            [state["momentum_buffer"] for state in states] if group["momentum"] > 0 else [],
            [state["step"] for state in states],
            foreach=True,
            maximize=group["maximize"],
            lr=group["lr"],
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            centered=group["centered"],
        )
    return True


def _adam_step(optimizer: torch.optim.Optimizer) -> bool:
    plan = []
    device = dtype = None
    for group in optimizer.param_groups:
        if not _plain_group(group):
            return False
        found = _gradients_and_states(optimizer, group, device, dtype)
        if found is None:
            return False
        params, grads, states, device, dtype = found
        plan.append(
            (
                group,
                params,
                grads,
                [state["exp_avg"] for state in states],
                [state["exp_avg_sq"] for state in states],
                [state["max_exp_avg_sq"] for state in states] if group["amsgrad"] else [],
                [state["step"] for state in states],
            )
        )
    for group, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps in plan:
        if not params:
            continue
        decoupled = group.get("decoupled_weight_decay", type(optimizer) is torch.optim.AdamW)
        kernel = torch._fused_adamw_ if decoupled else torch._fused_adam_
        torch._foreach_add_(steps, 1)
        beta1, beta2 = group["betas"]
        kernel(
            params,
            grads,
            exp_avgs,
            exp_avg_sqs,
            max_exp_avg_sqs,
            steps,
            amsgrad=group["amsgrad"],
            lr=group["lr"],
            beta1=beta1,
            beta2=beta2,
            weight_decay=group["weight_decay"],
            eps=group["eps"],
            maximize=group["maximize"],
            grad_scale=None,
            found_inf=None,
        )
    return True
