"""Conjugate gradients and the KL divergences TRPO's trust region is measured with."""

from __future__ import annotations

import pytest
import torch

from lit_sb3_core.sdk import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    MultiCategoricalDistribution,
)
from lit_sb3_trpo.trust_region import conjugate_gradient, kl_divergence, mean_kl


def _spd_system(n: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    m = torch.randn(n, n, generator=generator, dtype=torch.float64)
    return m @ m.T + n * torch.eye(n, dtype=torch.float64), torch.randn(
        n, generator=generator, dtype=torch.float64
    )


def test_conjugate_gradient_solves_spd_system() -> None:
    a, b = _spd_system(12)
    x = conjugate_gradient(lambda v: a @ v, b, max_iter=12, residual_tol=1e-20)
    torch.testing.assert_close(x, torch.linalg.solve(a, b), rtol=1e-8, atol=1e-10)


def test_conjugate_gradient_from_a_start_point_and_few_iterations() -> None:
    a, b = _spd_system(30, seed=1)
    exact = torch.linalg.solve(a, b)
    x0 = torch.full_like(b, 0.1)
    x = conjugate_gradient(lambda v: a @ v, b, max_iter=30, residual_tol=1e-20, x0=x0)
    torch.testing.assert_close(x, exact, rtol=1e-8, atol=1e-10)

    # Each iteration lowers the A-norm error; 3 iterations are not yet exact but better than 1.
    def error(k: int) -> float:
        e = conjugate_gradient(lambda v: a @ v, b, max_iter=k) - exact
        return float(e @ a @ e)

    assert error(3) < error(1) and error(3) > 1e-12


def test_conjugate_gradient_counts_matrix_products_and_stops_early() -> None:
    a = torch.diag(torch.tensor([2.0, 2.0, 2.0], dtype=torch.float64))  # one distinct eigenvalue
    calls = []

    def product(v: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return a @ v

    x = conjugate_gradient(product, torch.tensor([1.0, -1.0, 4.0], dtype=torch.float64), max_iter=10)
    torch.testing.assert_close(x, torch.tensor([0.5, -0.5, 2.0], dtype=torch.float64))
    assert len(calls) == 1, "converges in one step when A is a multiple of the identity"
    assert torch.equal(conjugate_gradient(product, torch.zeros(3), max_iter=10), torch.zeros(3))


def test_kl_matches_torch_distributions() -> None:
    torch.manual_seed(0)
    dist = torch.distributions
    logits_p, logits_q = torch.randn(5, 4), torch.randn(5, 4)
    expected = dist.kl_divergence(dist.Categorical(logits=logits_p), dist.Categorical(logits=logits_q))
    torch.testing.assert_close(
        kl_divergence(CategoricalDistribution(logits_p), CategoricalDistribution(logits_q)), expected
    )

    mean_p, mean_q, log_std_p, log_std_q = (
        torch.randn(5, 3),
        torch.randn(5, 3),
        torch.randn(3),
        torch.randn(3),
    )
    per_dim = dist.kl_divergence(dist.Normal(mean_p, log_std_p.exp()), dist.Normal(mean_q, log_std_q.exp()))
    p, q = DiagGaussianDistribution(mean_p, log_std_p), DiagGaussianDistribution(mean_q, log_std_q)
    torch.testing.assert_close(kl_divergence(p, q), per_dim.sum(-1))
    torch.testing.assert_close(mean_kl(p, q), per_dim.mean())  # sb3-contrib's convention

    per_bit = dist.kl_divergence(dist.Bernoulli(logits=logits_p), dist.Bernoulli(logits=logits_q))
    b_p, b_q = BernoulliDistribution(logits_p), BernoulliDistribution(logits_q)
    torch.testing.assert_close(kl_divergence(b_p, b_q), per_bit.sum(-1))
    torch.testing.assert_close(mean_kl(b_p, b_q), per_bit.mean())

    nvec = [2, 2]
    m_p, m_q = MultiCategoricalDistribution(logits_p, nvec), MultiCategoricalDistribution(logits_q, nvec)
    parts = [
        dist.kl_divergence(dist.Categorical(logits=a), dist.Categorical(logits=b))
        for a, b in zip(logits_p.split(nvec, -1), logits_q.split(nvec, -1))
    ]
    torch.testing.assert_close(kl_divergence(m_p, m_q), parts[0] + parts[1])


def test_kl_of_a_distribution_with_itself_is_zero_and_mismatch_is_refused() -> None:
    p = CategoricalDistribution(torch.randn(4, 3))
    assert torch.allclose(kl_divergence(p, p), torch.zeros(4), atol=1e-7)
    with pytest.raises(ValueError, match="two distributions of the same class"):
        kl_divergence(p, BernoulliDistribution(torch.randn(4, 3)))
