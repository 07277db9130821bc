"""The numerical pieces of a trust-region policy step, usable on their own.

* :func:`conjugate_gradient` solves ``A x = b`` for a symmetric positive-definite ``A`` given only the
  product ``v -> A v``: TRPO never forms the Fisher matrix, it multiplies by it.
* :func:`kl_divergence` is ``KL(p || q)`` for the action distributions: the SDK's own, re-exported.
* :func:`mean_kl` averages it the way sb3-contrib's TRPO does, so ``target_kl`` means the same there and here.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from lit_sb3_core.sdk import (
    BernoulliDistribution,
    DiagGaussianDistribution,
    Distribution,
    StateDependentNoiseDistribution,
    kl_divergence,
)

__all__ = ["conjugate_gradient", "kl_divergence", "mean_kl"]


def conjugate_gradient(
    matrix_vector_product: Callable[[torch.Tensor], torch.Tensor],
    b: torch.Tensor,
    max_iter: int = 10,
    residual_tol: float = 1e-10,
    x0: torch.Tensor | None = None,
) -> torch.Tensor:
    """Approximately solve ``A x = b`` by conjugate gradients (Hestenes & Stiefel, 1952).

    Args:
        matrix_vector_product: ``v -> A v`` for a symmetric positive-definite ``A``.
        b: right-hand side, a flat vector.
        max_iter: at most this many products with ``A`` (exact after ``len(b)`` in exact arithmetic).
        residual_tol: stop once the squared residual norm ``|b - A x|^2`` falls below it.
        x0: starting point (zeros when omitted).
    """
    x = torch.zeros_like(b) if x0 is None else x0.clone()
    residual = b - matrix_vector_product(x) if x0 is not None else b.clone()
    residual_norm2 = residual.dot(residual)
    if residual_norm2 < residual_tol:
        return x
    direction = residual.clone()
    for i in range(max_iter):
        a_direction = matrix_vector_product(direction)
        step = residual_norm2 / direction.dot(a_direction)
        x += step * direction
        if i == max_iter - 1:
            break
        residual -= step * a_direction
        new_residual_norm2 = residual.dot(residual)
        if new_residual_norm2 < residual_tol:
            break
        direction = residual + (new_residual_norm2 / residual_norm2) * direction
        residual_norm2 = new_residual_norm2
    return x


def mean_kl(p: Distribution, q: Distribution) -> torch.Tensor:
    """Batch-mean ``KL(p || q)`` as sb3-contrib's TRPO measures it against ``target_kl``.

    For Gaussian (also gSDE) and Bernoulli actions sb3-contrib averages over action dimensions as well as
    samples (its KL keeps one value per dimension); categorical kinds are averaged over samples only.
    """
    kl = kl_divergence(p, q)
    if isinstance(p, (DiagGaussianDistribution, StateDependentNoiseDistribution)):
        return kl.mean() / p.mean.shape[-1]
    if isinstance(p, BernoulliDistribution):
        return kl.mean() / p.logits.shape[-1]
    return kl.mean()
