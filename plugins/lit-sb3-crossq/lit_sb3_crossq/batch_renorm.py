"""Batch Renormalization, the normalization layer of CrossQ's networks.

Ioffe, "Batch Renormalization: Towards Reducing Minibatch Dependence in Batch-Normalized Models", NeurIPS
2017, https://arxiv.org/abs/1702.03275.

Batch normalization normalizes with the statistics of the current minibatch while training, but with
running averages when acting. Batch Renorm removes that mismatch: in training mode it normalizes with the
minibatch statistics *corrected toward the running ones*,

    x_hat = (x - mu_B) / sigma_B * r + d,   r = sigma_B / sigma,   d = (mu_B - mu) / sigma,

where ``mu``/``sigma`` are the running mean and standard deviation, ``r`` is clipped to
``[1/r_max, r_max]``, ``d`` to ``[-d_max, d_max]``, and neither carries a gradient. Unclipped, this is
exactly normalization by the running statistics; the gradients still see the batch's. During the first
``warmup_steps + 1`` training forward passes ``r = 1`` and ``d = 0``: plain batch norm, while the running
statistics settle. In eval mode the layer normalizes with the running statistics alone.

Conventions are sb3-contrib's, so that a seed and the same minibatches give its numbers (the CrossQ
parity test): the minibatch variance is the unbiased one, in the normalization and in the running
variance; ``momentum`` is the weight of the new batch, ``running <- (1 - momentum) * running + momentum *
batch``; the renormalization writes ``x_hat = (x - mu) / sqrt(var + eps)`` with the corrected ``mu = mu_B -
d * sigma_B / r`` and ``var = sigma_B^2 / r^2`` (``eps`` added there, not to the batch variance); and it
starts once ``steps > warmup_steps``, after ``warmup_steps + 1`` passes of plain batch norm. The warm-up is thus
``torch.nn.BatchNorm1d`` up to its biased normalization variance. The state names (``ra_mean``, ``ra_var``,
``steps``, ``scale``, ``bias``) are sb3-contrib's too, so parameters line up.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch import nn

__all__ = ["BatchRenorm", "set_training"]


class BatchRenorm(nn.Module):
    """Batch Renormalization over the features of ``(batch, num_features)`` inputs.

    Args:
        num_features: size of the feature dimension.
        eps: added to variances before the square root.
        momentum: weight of the current batch in the running averages (sb3-contrib's CrossQ: 0.01).
        affine: learn a per-feature scale and bias applied after normalizing.
        warmup_steps: plain batch norm for the first ``warmup_steps + 1`` training forward passes, then
            renormalization (sb3-contrib's count: it renormalizes once ``steps > warmup_steps``).
        r_max / d_max: clip of the scale correction ``r`` (to ``[1/r_max, r_max]``) and of the shift
            correction ``d`` (to ``[-d_max, d_max]``); sb3-contrib's values.
    """

    # running statistics and the step count: buffers registered in __init__
    ra_mean: torch.Tensor
    ra_var: torch.Tensor
    steps: torch.Tensor

    def __init__(
        self,
        num_features: int,
        eps: float = 0.001,
        momentum: float = 0.01,
        affine: bool = True,
        warmup_steps: int = 100_000,
        r_max: float = 3.0,
        d_max: float = 5.0,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.warmup_steps = warmup_steps
        self.r_max = r_max
        self.d_max = d_max
        self.register_buffer("ra_mean", torch.zeros(num_features))
        self.register_buffer("ra_var", torch.ones(num_features))
        self.register_buffer("steps", torch.tensor(0, dtype=torch.long))
        if affine:
            self.scale = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
        else:
            self.register_parameter("scale", None)
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 2 or x.shape[1] != self.num_features:
            raise ValueError(
                f"BatchRenorm({self.num_features}) expects inputs of shape (batch, {self.num_features}), "
                f"got {tuple(x.shape)}."
            )
        # Each branch gives y = source * weight + shift with per-feature weight and shift, so the batch
        # itself only goes through one fused multiply-add (and, in training, the centring).
        if self.training:
            source, weight, shift = self._renormalize(x)
        else:
            # Running statistics only: a sample's output does not depend on the rest of its batch.
            source, weight = x, torch.rsqrt(self.ra_var + self.eps)
            shift = -self.ra_mean * weight
        if self.affine:
            weight, shift = weight * self.scale, shift * self.scale + self.bias
        return torch.addcmul(shift, source, weight)

    def _renormalize(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The normalization as ``(x - mu_B, weight, shift)``; updates the running statistics."""
        n = x.shape[0]
        if n < 2:
            raise ValueError(
                "BatchRenorm needs at least 2 samples per batch in training mode (a single sample has no "
                "variance); use a larger batch, or put the layer in eval mode."
            )
        # Centring by hand: torch.var_mean over dim 0 is an order of magnitude slower on CPU.
        batch_mean = x.mean(dim=0)
        centered = x - batch_mean
        batch_var = centered.square().sum(dim=0) / (n - 1)
        with torch.no_grad():
            running_std = torch.sqrt(self.ra_var + self.eps)
            r = (torch.sqrt(batch_var + self.eps) / running_std).clamp(1.0 / self.r_max, self.r_max)
            d = ((batch_mean - self.ra_mean) / running_std).clamp(-self.d_max, self.d_max)
            renormalizing = self.steps > self.warmup_steps  # a tensor: no host sync on accelerators
            r = torch.where(renormalizing, r, 1.0)
            d = torch.where(renormalizing, d, 0.0)
            stats_dtype = self.ra_mean.dtype
            self.ra_mean.lerp_(batch_mean.detach().to(stats_dtype), self.momentum)
            self.ra_var.lerp_(batch_var.detach().to(stats_dtype), self.momentum)
            self.steps.add_(1)  # in place, no attribute set: a compiled update may then walk the module again
        # (x - mu) / sqrt(var + eps) with mu = mu_B - d * sigma_B / r and var = sigma_B^2 / r^2, so that
        # unclipped it is (x - running mean) / running std. sigma_B is floored above 0: a constant feature
        # (a dead ReLU) would otherwise get an infinite gradient through sqrt, and d = 0 does not cancel it.
        weight = torch.rsqrt(batch_var / r.square() + self.eps)
        shift = d * torch.sqrt(batch_var.clamp_min(torch.finfo(batch_var.dtype).tiny)) / r * weight
        return centered, weight, shift

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
            f"warmup_steps={self.warmup_steps}, r_max={self.r_max}, d_max={self.d_max}"
        )


def set_training(modules: Iterable[nn.Module], mode: bool) -> None:
    """Switch exactly these (leaf) modules between batch statistics (train) and running statistics (eval)."""
    for module in modules:
        module.training = mode
