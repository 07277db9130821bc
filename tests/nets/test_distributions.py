"""The lean action distributions agree with torch.distributions (log-probabilities, entropies, samples)."""

from __future__ import annotations

import math

import pytest
import torch
from gymnasium import spaces
from torch import distributions as td

from lit_sb3_core.nets.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    MultiCategoricalDistribution,
    StateDependentNoise,
    StateDependentNoiseDistribution,
    make_distribution,
)

torch.set_num_threads(1)
BATCH = 7


@pytest.fixture(autouse=True)
def _seed() -> None:
    torch.manual_seed(0)


def test_categorical_matches_torch() -> None:
    logits = torch.randn(BATCH, 5)
    ours, ref = CategoricalDistribution(logits), td.Categorical(logits=logits)
    actions = ref.sample()
    torch.testing.assert_close(ours.log_prob(actions), ref.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), ref.entropy())
    assert torch.equal(ours.mode(), logits.argmax(-1))
    assert ours.sample().shape == (BATCH,)


def test_multicategorical_matches_independent_categoricals() -> None:
    nvec = [2, 3, 4]
    logits = torch.randn(BATCH, sum(nvec))
    ours = MultiCategoricalDistribution(logits, nvec)
    refs = [td.Categorical(logits=chunk) for chunk in torch.split(logits, nvec, dim=-1)]
    actions = torch.stack([ref.sample() for ref in refs], dim=-1)
    torch.testing.assert_close(
        ours.log_prob(actions), sum(ref.log_prob(a) for ref, a in zip(refs, actions.unbind(-1)))
    )
    torch.testing.assert_close(ours.entropy(), sum(ref.entropy() for ref in refs))
    sample = ours.sample()
    assert sample.shape == (BATCH, 3) and all(int(sample[:, i].max()) < n for i, n in enumerate(nvec))


def test_bernoulli_matches_torch() -> None:
    logits = torch.randn(BATCH, 4)
    ours, ref = BernoulliDistribution(logits), td.Independent(td.Bernoulli(logits=logits), 1)
    actions = ref.sample()
    torch.testing.assert_close(ours.log_prob(actions), ref.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), ref.entropy())
    assert set(ours.sample().unique().tolist()) <= {0.0, 1.0}


def test_diag_gaussian_matches_torch() -> None:
    mean, log_std = torch.randn(BATCH, 3), torch.randn(3)
    ours = DiagGaussianDistribution(mean, log_std)
    ref = td.Independent(td.Normal(mean, log_std.exp().expand_as(mean)), 1)
    actions = ref.sample()
    torch.testing.assert_close(ours.log_prob(actions), ref.log_prob(actions))
    torch.testing.assert_close(ours.entropy(), ref.entropy())
    assert torch.equal(ours.mode(), mean)


def _gsde(full_std: bool = True, squash: bool = False, use_expln: bool = False, learn: bool = False):
    noise = StateDependentNoise(
        2, full_std=full_std, squash_output=squash, use_expln=use_expln, learn_features=learn
    )
    mean_net, log_std = noise.make_head(latent_dim=5, log_std_init=-0.5)
    return noise, mean_net, log_std


@pytest.mark.parametrize("full_std", [True, False])
def test_gsde_log_prob_and_entropy_match_torch(full_std: bool) -> None:
    noise, mean_net, log_std = _gsde(full_std=full_std)
    assert log_std.shape == ((5, 2) if full_std else (5, 1))
    latent = torch.randn(BATCH, 5)
    mean = mean_net(latent)
    dist = noise.distribution(mean, log_std, latent)
    std_matrix = log_std.exp().expand(5, 2)
    ref = td.Independent(td.Normal(mean, torch.sqrt(latent**2 @ std_matrix**2 + noise.epsilon)), 1)
    actions = ref.sample()
    torch.testing.assert_close(dist.log_prob(actions), ref.log_prob(actions))
    torch.testing.assert_close(dist.entropy(), ref.entropy())
    assert torch.equal(dist.mode(), mean)


def test_gsde_squashed_log_prob_matches_tanh_transform() -> None:
    noise, mean_net, log_std = _gsde(squash=True)
    latent = torch.randn(BATCH, 5)
    mean = mean_net(latent)
    dist = noise.distribution(mean, log_std, latent)
    std = torch.sqrt(latent**2 @ log_std.exp() ** 2 + noise.epsilon)
    ref = td.TransformedDistribution(td.Normal(mean, std), [td.TanhTransform()])
    actions = dist.sample()
    assert actions.abs().max() < 1
    # SB3's correction adds epsilon inside the log: equal up to that epsilon.
    torch.testing.assert_close(dist.log_prob(actions), ref.log_prob(actions).sum(-1), atol=1e-3, rtol=1e-4)
    assert dist.entropy() is None
    torch.testing.assert_close(dist.mode(), torch.tanh(mean))


def test_gsde_noise_is_latent_times_the_exploration_matrix() -> None:
    noise, mean_net, log_std = _gsde()
    latent = torch.randn(3, 5)
    mean = mean_net(latent)
    noise.sample_weights(log_std, batch_size=3)  # one matrix per env: used when the batch has one row per env
    assert noise.exploration_matrices is not None and noise.exploration_matrices.shape == (3, 5, 2)
    expected = torch.stack([latent[i] @ noise.exploration_matrices[i] for i in range(3)])
    torch.testing.assert_close(noise.distribution(mean, log_std, latent).sample(), mean + expected)
    other = torch.randn(4, 5)  # any other batch size uses the shared matrix
    torch.testing.assert_close(
        noise.distribution(mean_net(other), log_std, other).sample(),
        mean_net(other) + other @ noise.exploration_mat,
    )
    # The noise is a deterministic function of the state until resampled.
    first = noise.distribution(mean, log_std, latent).sample()
    torch.testing.assert_close(noise.distribution(mean, log_std, latent).sample(), first)
    noise.sample_weights(log_std, batch_size=3)
    assert not torch.allclose(noise.distribution(mean, log_std, latent).sample(), first)


def test_gsde_weights_have_the_learned_std() -> None:
    noise = StateDependentNoise(2)
    log_std = torch.full((5, 2), math.log(0.3))
    noise.sample_weights(log_std, batch_size=4000)
    assert noise.exploration_matrices is not None
    assert abs(noise.exploration_matrices.std().item() - 0.3) < 0.01


def test_expln_is_positive_continuous_and_slow() -> None:
    noise = StateDependentNoise(1, use_expln=True)
    log_std = torch.tensor([[-2.0], [0.0], [1e-4], [3.0]])
    std = noise.get_std(log_std).squeeze(-1)
    torch.testing.assert_close(std[0], torch.exp(torch.tensor(-2.0)))
    torch.testing.assert_close(std[3], torch.log1p(torch.tensor(3.0 + noise.epsilon)) + 1)
    assert abs(std[1].item() - std[2].item()) < 1e-3  # continuous at 0
    assert (std > 0).all()


def test_learn_features_lets_gradients_reach_the_latent() -> None:
    for learn in (False, True):
        noise, _, log_std = _gsde(learn=learn)
        latent = torch.randn(BATCH, 5, requires_grad=True)
        dist = noise.distribution(torch.zeros(BATCH, 2), log_std, latent)
        dist.log_prob(torch.ones(BATCH, 2)).sum().backward()
        assert (latent.grad is not None) is learn


def test_make_distribution_picks_by_space() -> None:
    box = spaces.Box(-1, 1, (2,))
    assert make_distribution(box) is DiagGaussianDistribution
    assert make_distribution(box, use_sde=True) is StateDependentNoiseDistribution
    assert make_distribution(spaces.Discrete(2)) is CategoricalDistribution
    assert make_distribution(spaces.MultiDiscrete([2, 2])) is MultiCategoricalDistribution
    assert make_distribution(spaces.MultiBinary(2)) is BernoulliDistribution
    with pytest.raises(NotImplementedError, match="Tuple"):
        make_distribution(spaces.Tuple((box,)))


@pytest.mark.parametrize("deterministic", [False, True])
def test_categorical_actions_and_log_prob_are_get_actions_and_log_prob(deterministic: bool) -> None:
    """The rollout's one-pass draw gives exactly the actions and log-probabilities of the two calls it
    replaces, from the same generator state, and leaves the generator where they leave it."""
    logits = torch.randn(BATCH, 5)
    dist = CategoricalDistribution(logits)
    state = torch.get_rng_state()
    actions, log_prob = dist.actions_and_log_prob(deterministic)
    after_one_pass = torch.get_rng_state()
    torch.set_rng_state(state)
    expected = dist.get_actions(deterministic)
    assert torch.equal(actions, expected) and actions.shape == (BATCH,)
    assert torch.equal(log_prob, dist.log_prob(expected))
    assert torch.equal(after_one_pass, torch.get_rng_state())


def test_actions_and_log_prob_follow_a_subclass_that_draws_differently() -> None:
    """A distribution that overrides how actions are drawn or scored gets the general path (its own
    ``sample`` and ``log_prob``), as does every other distribution."""

    class AlwaysFirst(CategoricalDistribution):
        def sample(self) -> torch.Tensor:
            return torch.zeros(self.log_probs.shape[0], dtype=torch.long)

    dist = AlwaysFirst(torch.randn(BATCH, 3))
    actions, log_prob = dist.actions_and_log_prob()
    assert torch.equal(actions, torch.zeros(BATCH, dtype=torch.long))
    assert torch.equal(log_prob, dist.log_probs[:, 0])
    gaussian = DiagGaussianDistribution(torch.randn(BATCH, 2), torch.zeros(2))
    state = torch.get_rng_state()
    actions, log_prob = gaussian.actions_and_log_prob()
    torch.set_rng_state(state)
    assert torch.equal(actions, gaussian.sample())
    assert torch.equal(log_prob, gaussian.log_prob(actions))
