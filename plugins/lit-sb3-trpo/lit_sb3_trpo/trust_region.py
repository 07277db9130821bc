"""The numerical pieces of a trust-region policy step, usable on their own.

* :func:`conjugate_gradient` solves ``A x = b`` for a symmetric positive-definite ``A`` given only the
  product ``v -> A v``: TRPO never forms the Fisher matrix, it multiplies by it.
* :func:`kl_divergence` is ``KL(p || q)`` for the action distributions of ``lit_sb3_core.sdk``.
* :func:`mean_kl` averages it the way sb3-contrib's TRPO does, so ``target_kl`` means the same there and here.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    StateDependentNoiseDistribution,
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


def _gaussian_kl(
    mean_p: torch.Tensor, log_std_p: torch.Tensor, mean_q: torch.Tensor, log_std_q: torch.Tensor
) -> torch.Tensor:
    """Elementwise KL between univariate Gaussians N(mean_p, std_p^2) and N(mean_q, std_q^2)."""
    variance_ratio = torch.exp(2 * (log_std_p - log_std_q))
    mean_term = ((mean_p - mean_q) * torch.exp(-log_std_q)).pow(2)
    return 0.5 * (variance_ratio + mean_term - 1) - (log_std_p - log_std_q)


def _kl_elements(p: Distribution, q: Distribution) -> torch.Tensor:
    """KL per sample, or per sample and action dimension for factorised Gaussian/Bernoulli actions."""
    if type(p) is not type(q):
        raise TypeError(
            f"KL between different distribution types: {type(p).__name__} and {type(q).__name__}."
        )
    if isinstance(p, CategoricalDistribution):
        return (p.log_probs.exp() * (p.log_probs - q.log_probs)).sum(-1)  # type: ignore[attr-defined]
    if isinstance(p, MultiCategoricalDistribution):
        return torch.stack([_kl_elements(a, b) for a, b in zip(p.parts, q.parts)], dim=-1).sum(-1)  # type: ignore[attr-defined]
    if isinstance(p, DiagGaussianDistribution):
        return _gaussian_kl(p.mean, p.log_std, q.mean, q.log_std)  # type: ignore[attr-defined]
    if isinstance(p, StateDependentNoiseDistribution):
        # gSDE: a Gaussian with state-dependent std; a tanh squash is a bijection and leaves the KL unchanged.
        return _gaussian_kl(p.mean, torch.log(p.std), q.mean, torch.log(q.std))  # type: ignore[attr-defined]
    if isinstance(p, BernoulliDistribution):
        q_logits = q.logits  # type: ignore[attr-defined]
        prob = torch.sigmoid(p.logits)
        return prob * (F.logsigmoid(p.logits) - F.logsigmoid(q_logits)) + (1 - prob) * (
            F.logsigmoid(-p.logits) - F.logsigmoid(-q_logits)
        )
    custom = getattr(p, "kl_divergence", None)
    if callable(custom):
        return custom(q)
    raise ConfigurationError(
        f"TRPO needs KL(p || q) for {type(p).__name__}: give that distribution class a method "
        "kl_divergence(self, other) -> Tensor (one value per sample)."
    )


def kl_divergence(p: Distribution, q: Distribution) -> torch.Tensor:
    """``KL(p || q)`` for each sample of a batch (summed over independent action dimensions)."""
    kl = _kl_elements(p, q)
    if isinstance(p, (DiagGaussianDistribution, StateDependentNoiseDistribution, BernoulliDistribution)):
        return kl.sum(-1)
    return kl


def mean_kl(p: Distribution, q: Distribution) -> torch.Tensor:
    """Batch-mean ``KL(p || q)`` as sb3-contrib's TRPO measures it against ``target_kl``.

    For Gaussian (also gSDE) and Bernoulli actions sb3-contrib averages over action dimensions as well as
    samples (its KL keeps one value per dimension); categorical kinds are averaged over samples only.
    """
    return _kl_elements(p, q).mean()
