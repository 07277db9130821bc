"""SB3's distribution objects (``lit_sb3.common.distributions``): SB3's API over lit-sb3's values."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch.distributions import Bernoulli, Categorical, Normal

from lit_sb3.common.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    MultiCategoricalDistribution,
    SquashedDiagGaussianDistribution,
    StateDependentNoiseDistribution,
    TanhBijector,
    kl_divergence,
    make_proba_distribution,
    sum_independent_dims,
)


def test_diag_gaussian_scores_as_torch_normal() -> None:
    torch.manual_seed(0)
    dist = DiagGaussianDistribution(3)
    mean_net, log_std = dist.proba_distribution_net(5, log_std_init=torch.log(torch.tensor(0.5)))
    assert mean_net.out_features == 3 and torch.allclose(log_std, torch.log(torch.full((3,), 0.5)))
    mean = mean_net(torch.randn(4, 5))
    assert dist.proba_distribution(mean, log_std) is dist
    actions = dist.get_actions()
    reference = Normal(mean, log_std.exp())
    torch.testing.assert_close(dist.log_prob(actions), reference.log_prob(actions).sum(dim=1))
    torch.testing.assert_close(dist.entropy(), reference.entropy().sum(dim=1))
    assert torch.equal(dist.get_actions(deterministic=True), mean)
    other = DiagGaussianDistribution(3).proba_distribution(mean + 1, log_std)
    kl = kl_divergence(dist, other)
    assert kl.shape == (4, 3)  # per action dimension, as SB3's
    torch.testing.assert_close(kl, torch.full((4, 3), 0.5 / 0.25), rtol=1e-5, atol=1e-5)
    actions, log_prob = dist.log_prob_from_params(mean, log_std)
    torch.testing.assert_close(log_prob, reference.log_prob(actions).sum(dim=1))


def test_squashed_gaussian_and_tanh_bijector() -> None:
    torch.manual_seed(0)
    dist = SquashedDiagGaussianDistribution(2)
    mean, log_std = torch.randn(6, 2) * 3, torch.zeros(2)
    actions, log_prob = dist.log_prob_from_params(mean, log_std)
    assert actions.abs().max() <= 1 and dist.entropy() is None
    gaussian = dist.gaussian_actions
    assert gaussian is not None and torch.equal(torch.tanh(gaussian), actions)
    expected = Normal(mean, torch.ones(2)).log_prob(gaussian).sum(1) - torch.log(1 - actions**2 + 1e-6).sum(1)
    torch.testing.assert_close(log_prob, expected)
    at_bounds = TanhBijector.inverse(torch.tensor([-1.0, 1.0]))
    assert torch.isfinite(at_bounds).all() and (at_bounds.sign() == torch.tensor([-1.0, 1.0])).all()
    torch.testing.assert_close(
        TanhBijector.inverse(TanhBijector.forward(torch.tensor([0.3]))), torch.tensor([0.3])
    )


def test_discrete_distributions_score_as_torch() -> None:
    torch.manual_seed(0)
    logits = torch.randn(5, 3)
    categorical = CategoricalDistribution(3).proba_distribution(logits)
    actions = categorical.sample()
    torch.testing.assert_close(categorical.log_prob(actions), Categorical(logits=logits).log_prob(actions))
    assert isinstance(categorical.distribution, Categorical)

    multi = MultiCategoricalDistribution([2, 3]).proba_distribution(torch.randn(5, 5))
    multi_actions = multi.sample()
    assert multi_actions.shape == (5, 2) and len(multi.distribution) == 2
    expected = sum(part.log_prob(multi_actions[:, i]) for i, part in enumerate(multi.distribution))
    torch.testing.assert_close(multi.log_prob(multi_actions), expected)
    assert kl_divergence(multi, multi).shape == (5,)

    bits = torch.randn(5, 4)
    bernoulli = BernoulliDistribution(4).proba_distribution(bits)
    flips = bernoulli.sample()
    torch.testing.assert_close(bernoulli.log_prob(flips), Bernoulli(logits=bits).log_prob(flips).sum(1))
    assert sum_independent_dims(torch.ones(5, 4)).tolist() == [4.0] * 5
    assert sum_independent_dims(torch.ones(4)).item() == 4.0


def test_state_dependent_noise_distribution() -> None:
    torch.manual_seed(0)
    dist = StateDependentNoiseDistribution(2, full_std=True)
    mean_net, log_std = dist.proba_distribution_net(3, log_std_init=-1.0)
    assert log_std.shape == (3, 2) and dist.latent_sde_dim == 3
    dist.sample_weights(log_std, batch_size=4)
    assert dist.exploration_matrices is not None and dist.exploration_matrices.shape == (4, 3, 2)
    latent = torch.rand(4, 3)
    dist.proba_distribution(mean_net(latent), log_std, latent)
    std = torch.sqrt((latent**2) @ torch.exp(log_std) ** 2 + 1e-6)
    torch.testing.assert_close(dist.distribution.scale, std)
    actions = dist.sample()
    torch.testing.assert_close(actions - dist.distribution.mean, dist.get_noise(latent))
    torch.testing.assert_close(dist.log_prob(actions), dist.distribution.log_prob(actions).sum(1))


def test_make_proba_distribution_and_errors() -> None:
    assert isinstance(make_proba_distribution(spaces.Box(-1, 1, (2,))), DiagGaussianDistribution)
    sde = make_proba_distribution(spaces.Box(-1, 1, (2,)), use_sde=True, dist_kwargs={"full_std": False})
    assert isinstance(sde, StateDependentNoiseDistribution) and not sde.full_std
    assert make_proba_distribution(spaces.Discrete(4)).action_dim == 4  # type: ignore[attr-defined]
    multi = make_proba_distribution(spaces.MultiDiscrete(np.array([2, 5])))
    assert multi.action_dims == [2, 5]  # type: ignore[attr-defined]
    assert make_proba_distribution(spaces.MultiBinary(3)).action_dims == 3  # type: ignore[attr-defined]
    with pytest.raises(NotImplementedError, match="Dict"):
        make_proba_distribution(spaces.Dict({"a": spaces.Discrete(2)}))
    for error in (AttributeError, AssertionError):  # what SB3's and sb3-contrib's classes raise
        with pytest.raises(error, match="call proba_distribution"):
            CategoricalDistribution(2).sample()
    with pytest.raises(AssertionError, match="same class"):
        kl_divergence(
            CategoricalDistribution(2).proba_distribution(torch.zeros(1, 2)), BernoulliDistribution(2)
        )


def test_squash_output_without_gsde_is_refused_as_sb3_asserts() -> None:
    from lit_sb3 import PPO

    with pytest.raises(AssertionError, match=r"use_sde=True"):
        PPO("MlpPolicy", "Pendulum-v1", use_sde=False, policy_kwargs={"squash_output": True})
