"""SB3's ``common.distributions``: SB3's distribution objects (``DiagGaussianDistribution(action_dim)``,
``proba_distribution_net``, ``proba_distribution``, ...) over lit-sb3's distribution values."""

from __future__ import annotations

from lit_sb3_core.sb3.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    SquashedDiagGaussianDistribution,
    StateDependentNoiseDistribution,
    TanhBijector,
    kl_divergence,
    make_proba_distribution,
    sum_independent_dims,
)

__all__ = [
    "BernoulliDistribution",
    "CategoricalDistribution",
    "DiagGaussianDistribution",
    "Distribution",
    "MultiCategoricalDistribution",
    "SquashedDiagGaussianDistribution",
    "StateDependentNoiseDistribution",
    "TanhBijector",
    "kl_divergence",
    "make_proba_distribution",
    "sum_independent_dims",
]
