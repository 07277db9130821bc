"""Losses that several algorithms share: the quantile Huber loss of QR-DQN and TQC."""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["quantile_huber_loss"]


def quantile_huber_loss(
    current_quantiles: torch.Tensor,
    target_quantiles: torch.Tensor,
    cum_prob: torch.Tensor | None = None,
    sum_over_quantiles: bool = True,
) -> torch.Tensor:
    """The quantile regression loss with a Huber kernel (kappa = 1), as in QR-DQN and TQC.

    Dabney et al., "Distributional Reinforcement Learning with Quantile Regression", 2018: every target
    quantile is compared with every current quantile, and an overestimate of quantile level ``tau`` weighs
    ``1 - tau``, an underestimate ``tau``.

    Args:
        current_quantiles: ``(batch, n_quantiles)`` or ``(batch, n_critics, n_quantiles)``.
        target_quantiles: ``(batch, n_target)``, ``(batch, 1, n_target)`` or ``(batch, n_critics, n_target)``.
        cum_prob: quantile levels, broadcastable to the pairwise differences; default the midpoints
            ``(i + 0.5) / n_quantiles``.
        sum_over_quantiles: sum over the current quantiles (as in the paper), then average; else average all.
    """
    if current_quantiles.ndim != target_quantiles.ndim:
        raise ValueError(
            f"current_quantiles has {current_quantiles.ndim} dimensions but target_quantiles has "
            f"{target_quantiles.ndim}: they must match."
        )
    if current_quantiles.ndim not in (2, 3):
        raise ValueError(f"current_quantiles must have 2 or 3 dimensions, got {current_quantiles.ndim}.")
    if current_quantiles.shape[0] != target_quantiles.shape[0]:
        raise ValueError(
            f"current_quantiles and target_quantiles must have the same batch size (first dimension), got "
            f"{current_quantiles.shape[0]} and {target_quantiles.shape[0]}."
        )
    if cum_prob is None:
        n_quantiles = current_quantiles.shape[-1]
        cum_prob = (
            torch.arange(n_quantiles, device=current_quantiles.device, dtype=torch.float32) + 0.5
        ) / n_quantiles
        cum_prob = cum_prob.view(*([1] * (current_quantiles.ndim - 1)), -1, 1)
    # (..., n_quantiles, n_target): every target against every current quantile. One fused Huber kernel
    # and one dot product: these pairwise tensors are large (TQC: 256 x 2 x 25 x 46), and a chain of
    # elementwise ops over them cost several times more than the networks' own forward and backward.
    current = current_quantiles.unsqueeze(-1)
    target = target_quantiles.unsqueeze(-2)
    shape = torch.broadcast_shapes(current.shape, target.shape)
    huber = F.huber_loss(current.expand(shape), target.expand(shape), reduction="none", delta=1.0)
    with torch.no_grad():  # |tau - 1{target < current}|: the asymmetric quantile weight
        weight = torch.where(target < current, 1.0 - cum_prob, cum_prob).expand(shape)
    if torch.compiler.is_compiling():
        # Inductor fuses a plain sum into the Huber kernel, vectorized (0.3 ms forward and backward for
        # TQC's pairs); the flattened dot becomes a scalar loop with two integer divisions per element
        # (4.7 ms), so a compiled update (compile=True) takes the sum.
        total = (weight * huber).sum()
    else:
        total = torch.dot(weight.reshape(-1), huber.reshape(-1))
    count = huber.numel() / shape[-2] if sum_over_quantiles else huber.numel()
    return total / count
