"""Squashed gSDE (SAC's actor): sampling with log-likelihoods, gradients, and the actor that uses it."""

from __future__ import annotations

import math

import pytest
import torch
from gymnasium import spaces
from torch import distributions as td

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.nets.distributions import StateDependentNoise
from lit_sb3_core.nets.off_policy_policies import SquashedGaussianActor
from lit_sb3_core.nets.torch_layers import FlattenExtractor

BATCH = 64


def _squashed(log_std_init: float = -0.5, full_std: bool = True):
    noise = StateDependentNoise(2, full_std=full_std, squash_output=True, learn_features=True)
    mean_net, log_std = noise.make_head(latent_dim=5, log_std_init=log_std_init)
    return noise, mean_net, log_std


@pytest.mark.parametrize("full_std", [True, False])
def test_sample_and_log_prob_matches_a_direct_computation(full_std: bool) -> None:
    noise, mean_net, log_std = _squashed(full_std=full_std)
    latent = torch.randn(BATCH, 5)
    mean = mean_net(latent)
    actions, log_prob = noise.distribution(mean, log_std, latent).sample_and_log_prob()

    # The same sample by hand: the pre-squash value uses the shared exploration matrix.
    assert noise.exploration_mat is not None
    gaussian = mean + latent @ noise.exploration_mat
    torch.testing.assert_close(actions, torch.tanh(gaussian))
    std = torch.sqrt(latent**2 @ log_std.exp().expand(5, 2) ** 2 + noise.epsilon)
    direct = td.Normal(mean, std).log_prob(gaussian).sum(-1) - torch.log(
        1 - torch.tanh(gaussian) ** 2 + noise.epsilon
    ).sum(-1)
    torch.testing.assert_close(log_prob, direct)
    # torch's tanh-transformed Normal agrees up to the epsilon inside the log-determinant, which only
    # matters where tanh saturates; so does scoring the squashed action through atanh.
    moderate = (gaussian.abs() < 2.5).all(-1)
    assert moderate.sum() > BATCH // 2
    reference = td.TransformedDistribution(td.Normal(mean, std), [td.TanhTransform(cache_size=1)])
    torch.testing.assert_close(
        log_prob[moderate], reference.log_prob(actions).sum(-1)[moderate], atol=1e-3, rtol=1e-4
    )
    dist = noise.distribution(mean, log_std, latent)
    torch.testing.assert_close(dist.log_prob(actions)[moderate], log_prob[moderate], atol=1e-3, rtol=1e-4)


def test_sample_and_log_prob_stays_exact_where_tanh_saturates() -> None:
    noise, _, log_std = _squashed(log_std_init=-3.0)
    latent = torch.randn(BATCH, 5)
    mean = torch.full((BATCH, 2), 20.0)  # tanh(20) is 1 in float32: atanh cannot recover 20
    dist = noise.distribution(mean, log_std, latent)
    actions, log_prob = dist.sample_and_log_prob()
    gaussian = mean + latent @ noise.exploration_mat
    std = torch.sqrt(latent**2 @ log_std.exp() ** 2 + noise.epsilon)
    expected = td.Normal(mean, std).log_prob(gaussian).sum(-1) - 2 * math.log(noise.epsilon)
    assert torch.isfinite(log_prob).all()
    torch.testing.assert_close(log_prob, expected, atol=1e-3, rtol=1e-4)
    assert (actions.abs() <= 1).all()


def test_gradients_reach_mean_features_and_log_std_through_the_draw() -> None:
    noise, mean_net, log_std = _squashed()
    latent = torch.randn(BATCH, 5, requires_grad=True)
    noise.sample_weights(log_std)  # with gradients enabled: a reparameterised draw
    actions, log_prob = noise.distribution(mean_net(latent), log_std, latent).sample_and_log_prob()
    (actions.sum() + log_prob.sum()).backward()
    assert latent.grad is not None and latent.grad.abs().sum() > 0
    assert mean_net.weight.grad is not None and mean_net.weight.grad.abs().sum() > 0
    assert log_std.grad is not None and log_std.grad.abs().sum() > 0
    # The actions alone reach log std only through the exploration matrix: a draw without gradients cuts it.
    log_std.grad = None
    with torch.no_grad():
        noise.sample_weights(log_std)
    actions, _ = noise.distribution(mean_net(latent), log_std, latent).sample_and_log_prob()
    actions.sum().backward()
    assert log_std.grad is None


def _actor(**kwargs) -> SquashedGaussianActor:
    extractor = FlattenExtractor(spaces.Box(-1, 1, (3,)))
    return SquashedGaussianActor(extractor, 2, [16, 16], use_sde=True, **kwargs)


def test_actor_noise_is_fixed_until_reset() -> None:
    torch.manual_seed(0)
    actor = _actor()
    obs = torch.randn(4, 3)
    first = actor(obs)
    torch.testing.assert_close(actor(obs), first)  # the same state gets the same exploration
    assert not torch.equal(actor(obs, deterministic=True), first)
    actor.reset_noise()
    assert not torch.allclose(actor(obs), first)
    # One matrix per environment: a batch with one row per env uses its own.
    actor.reset_noise(4)
    same_obs = obs[:1].expand(4, 3)
    per_env = actor(same_obs)
    assert not torch.allclose(per_env[0], per_env[1])


def test_actor_mean_is_clipped_and_log_std_starts_at_log_std_init() -> None:
    actor = _actor(log_std_init=-2.0, clip_mean=0.5)
    torch.testing.assert_close(actor.log_std, torch.full((16, 2), -2.0))
    with torch.no_grad():
        actor.mu[0].bias.fill_(10.0)
    deterministic = actor(torch.randn(8, 3), deterministic=True)
    torch.testing.assert_close(deterministic, torch.full((8, 2), math.tanh(0.5)))
    torch.testing.assert_close(actor.get_std(), torch.full((16, 2), math.exp(-2.0)))
    assert isinstance(_actor(clip_mean=0.0).mu, torch.nn.Linear)
    assert _actor(full_std=False).log_std.shape == (16, 1)


def test_actor_redraws_noise_from_loaded_log_std() -> None:
    actor = _actor()
    state = actor.state_dict()
    state["log_std"] = torch.full_like(state["log_std"], -12.0)
    actor.load_state_dict(state)
    assert actor.sde_noise is not None and actor.sde_noise.exploration_mat is not None
    assert actor.sde_noise.exploration_mat.abs().max() < 1e-3  # std e^-12, not the initial e^-3
    assert actor.sde_noise.exploration_mat.grad_fn is None


def test_actor_without_gsde_refuses_noise_calls_and_bad_settings() -> None:
    plain = SquashedGaussianActor(FlattenExtractor(spaces.Box(-1, 1, (3,))), 2, [16])
    for call in (plain.reset_noise, plain.get_std):
        with pytest.raises(RuntimeError, match="use_sde=True"):
            call()
    with pytest.raises(ConfigurationError, match="clip_mean"):
        _actor(clip_mean="2")


def test_a_gradient_step_on_noise_drawn_while_collecting_is_refused() -> None:
    """Subclasses of SAC must redraw the noise before each gradient step; forgetting it fails loudly."""
    actor = _actor()
    obs = torch.randn(8, 3)
    with torch.inference_mode():
        actor.reset_noise(2)  # as collection does
        actor.action_log_prob(obs)  # scoring without gradients is fine
    with pytest.raises(RuntimeError, match="before every gradient step"):
        actor.action_log_prob(obs)
    actor.reset_noise()
    actions, log_prob = actor.action_log_prob(obs)
    (actions.sum() + log_prob.sum()).backward()
    assert actor.log_std.grad is not None


def test_a_given_gaussian_draw_is_the_draw_the_actor_would_make() -> None:
    """``action_log_prob(obs, noise)``: the standard normal draw from outside (a compiled update's input)
    gives the sample and log-likelihood the actor's own draw gives from the same generator state; with
    gSDE, whose noise is its exploration matrices, a draw is refused with the fix."""
    torch.manual_seed(0)
    actor = SquashedGaussianActor(FlattenExtractor(spaces.Box(-1, 1, (3,))), 2, [8])
    obs = torch.randn(BATCH, 3)
    torch.manual_seed(1)
    drawn = actor.action_log_prob(obs)
    torch.manual_seed(1)
    given = actor.action_log_prob(obs, torch.randn(BATCH, 2))
    for ours, theirs in zip(given, drawn, strict=True):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    other = actor.action_log_prob(obs, torch.zeros(BATCH, 2))  # the mean, squashed
    torch.testing.assert_close(other[0], actor(obs, deterministic=True))

    sde_actor = SquashedGaussianActor(FlattenExtractor(spaces.Box(-1, 1, (3,))), 2, [8], use_sde=True)
    sde_actor.reset_noise()
    with pytest.raises(ConfigurationError, match="pass no noise"):
        sde_actor.action_log_prob(obs, torch.zeros(BATCH, 2))
