"""RMSprop as TensorFlow (and the original Stable Baselines' A2C) computes it.

PyTorch's ``torch.optim.RMSprop`` divides by ``sqrt(v) + eps`` and starts the running average ``v`` of
squared gradients at zero. TensorFlow divides by ``sqrt(v + eps)`` and starts ``v`` at one. The two give
noticeably different first updates and a different effective step size when gradients are small, which
is why rl-zoo3 trains A2C on Atari with this variant (``policy_kwargs=dict(optimizer_class="rmsprop_tf_like",
optimizer_kwargs=dict(eps=1e-5))``). Otherwise the arguments are those of ``torch.optim.RMSprop``.

Update for a parameter ``p`` with gradient ``g`` (``v`` starts at 1, ``m`` and ``b`` at 0)::

    g <- g + weight_decay * p
    v <- alpha * v + (1 - alpha) * g^2
    m <- alpha * m + (1 - alpha) * g                       (centered only)
    d <- sqrt(v - m^2 + eps)        (centered)   or   sqrt(v + eps)
    b <- momentum * b + g / d;  p <- p - lr * b           (momentum > 0)
    p <- p - lr * g / d                                    (otherwise)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch
from torch.optim import Optimizer

from lit_sb3_core.sdk import check_number

__all__ = ["RMSpropTFLike"]


class RMSpropTFLike(Optimizer):
    """RMSprop with epsilon inside the square root and the squared-gradient average started at one.

    Args:
        params: parameters (or parameter groups) to optimize.
        lr: learning rate.
        alpha: smoothing constant of the running averages.
        eps: added to the averaged squared gradient *before* the square root.
        weight_decay: L2 penalty added to the gradient.
        momentum: momentum factor (0 disables momentum).
        centered: normalise by an estimate of the gradient's variance instead of its second moment.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor] | Iterable[dict[str, Any]],
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
    ) -> None:
        for what, name, value in (
            ("learning rate", "lr", lr),
            ("alpha", "alpha", alpha),
            ("epsilon", "eps", eps),
            ("weight_decay", "weight_decay", weight_decay),
            ("momentum", "momentum", momentum),
        ):
            # "Invalid <what>" is how torch's optimizers (and SB3's RMSpropTFLike) word it: code matches on it
            check_number(f"RMSpropTFLike({name}=...)", value, minimum=0, hint=f"Invalid {what}.")
        defaults = {
            "lr": lr,
            "alpha": alpha,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "centered": centered,
        }
        super().__init__(params, defaults)

    def _init_state(self, param: torch.Tensor, group: dict[str, Any]) -> dict[str, Any]:
        state = self.state[param]
        state["step"] = torch.zeros((), dtype=torch.float32)
        # TensorFlow starts the average at one; PyTorch's RMSprop starts it at zero.
        state["square_avg"] = torch.ones_like(param, memory_format=torch.preserve_format)
        if group["momentum"] > 0:
            state["momentum_buffer"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        if group["centered"]:
            state["grad_avg"] = torch.zeros_like(param, memory_format=torch.preserve_format)
        return state

    @torch.no_grad()
    def step(self, closure: Callable[[], float] | None = None) -> float | None:  # type: ignore[override]
        """Apply one update to every parameter that has a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
            weight_decay, momentum = group["weight_decay"], group["momentum"]
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if grad.is_sparse:
                    raise RuntimeError("RMSpropTFLike does not support sparse gradients.")
                state = self.state[param]
                if len(state) == 0:
                    state = self._init_state(param, group)
                state["step"] += 1
                if weight_decay != 0:
                    grad = grad.add(param, alpha=weight_decay)
                square_avg = state["square_avg"]
                square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
                if group["centered"]:
                    grad_avg = state["grad_avg"]
                    grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
                    denom = square_avg.addcmul(grad_avg, grad_avg, value=-1).add_(eps).sqrt_()
                else:
                    denom = square_avg.add(eps).sqrt_()
                if momentum > 0:
                    buffer = state["momentum_buffer"]
                    buffer.mul_(momentum).addcdiv_(grad, denom)
                    param.add_(buffer, alpha=-lr)
                else:
                    param.addcdiv_(grad, denom, value=-lr)
        return loss
