"""SB3's ``common.distributions``: lit-sb3's action distributions, under SB3's names."""

from __future__ import annotations

from lit_sb3_core.nets.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    StateDependentNoiseDistribution,
    make_distribution,
)

__all__ = [
    "BernoulliDistribution",
    "CategoricalDistribution",
    "DiagGaussianDistribution",
    "Distribution",
    "MultiCategoricalDistribution",
    "StateDependentNoiseDistribution",
    "make_proba_distribution",
]

make_proba_distribution = make_distribution  # SB3's name: the distribution for an action space
