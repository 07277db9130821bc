"""Action distributions for policy-gradient algorithms, written lean for small-batch CPU speed.

``torch.distributions`` validates arguments and builds several objects per call; a policy update calls a
distribution a few thousand times per second, so these classes do the arithmetic directly. Each class
has two halves: ``make_head`` builds the network layer(s) that produce its parameters (once, at policy
construction), and the constructor turns the head's output into a distribution value that can sample and
score actions.

gSDE (generalized State-Dependent Exploration, Raffin et al. 2021, https://arxiv.org/abs/2005.05719) also
needs state that outlives one call, the sampled exploration matrices: ``StateDependentNoise`` holds it on
the policy and makes ``StateDependentNoiseDistribution`` values. PPO/A2C use it unsquashed by default; SAC's
actor (``lit_sb3_core.nets.off_policy_policies.SquashedGaussianActor(use_sde=True)``) uses the tanh-squashed
variant with learned features and ``sample_and_log_prob``.

What each value holds (read these to build losses, e.g. distillation or a KL penalty): ``log_probs``
(Categorical: log-softmax of the logits, one row per sample), ``parts`` (MultiCategorical: one
Categorical per action dimension), ``logits`` (Bernoulli), ``mean`` and ``log_std`` (DiagGaussian; the
log std broadcast to the mean's shape), ``mean``, ``std`` and ``latent_sde`` (gSDE). ``kl_divergence(old,
new)`` is ``KL(old || new)`` per sample for any two values of the same class.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError

__all__ = [
    "BernoulliDistribution",
    "CategoricalDistribution",
    "DiagGaussianDistribution",
    "Distribution",
    "MultiCategoricalDistribution",
    "StateDependentNoise",
    "StateDependentNoiseDistribution",
    "kl_divergence",
    "make_distribution",
]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Distribution(ABC):
    """A batch of action distributions; ``log_prob``, ``entropy`` and ``kl_divergence`` return one value per
    batch row (summed over independent action dimensions).

    A distribution of your own subclasses this and implements the four abstract methods, and
    ``kl_divergence`` if an algorithm needs the KL (TRPO, PPG, distillation).
    """

    @abstractmethod
    def log_prob(self, actions: torch.Tensor) -> torch.Tensor: ...

    @abstractmethod
    def entropy(self) -> torch.Tensor | None: ...

    @abstractmethod
    def sample(self) -> torch.Tensor: ...

    @abstractmethod
    def mode(self) -> torch.Tensor: ...

    def get_actions(self, deterministic: bool = False) -> torch.Tensor:
        return self.mode() if deterministic else self.sample()

    def actions_and_log_prob(self, deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """``get_actions(deterministic)`` and their ``log_prob``: what a rollout stores for each step. A
        distribution may compute both in one pass (the categorical one gathers at the indices it drew)."""
        actions = self.get_actions(deterministic)
        return actions, self.log_prob(actions)

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        """``KL(self || other)`` per sample; ``other`` is a value of the same class (see ``kl_divergence``)."""
        raise NotImplementedError(
            f"{type(self).__name__} has no KL divergence: implement kl_divergence(self, other) -> Tensor "
            "(one value per sample) on it."
        )


class CategoricalDistribution(Distribution):
    """Discrete actions: a softmax over ``n`` logits.

    The log-probabilities are one ``log_softmax``. torch.distributions.Categorical (SB3's) computes
    ``logits - logsumexp(logits)``: ~8x the CPU time on the few rows of a rollout step (15 vs 2 us), and a
    third of its values differ from these in the last bit, one reason A2C and PPO follow SB3's runs to
    float rounding rather than bit for bit (tests/compat/test_sb3_update_parity.py).
    """

    def __init__(self, logits: torch.Tensor) -> None:
        self.log_probs = torch.log_softmax(logits, dim=-1)

    @staticmethod
    def make_head(latent_dim: int, n: int) -> nn.Module:
        return nn.Linear(latent_dim, n)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.log_probs.gather(-1, actions.long().reshape(-1, 1)).squeeze(-1)

    def entropy(self) -> torch.Tensor:
        return -(self.log_probs.exp() * self.log_probs).sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.multinomial(self.log_probs.exp(), 1).squeeze(-1)

    def mode(self) -> torch.Tensor:
        return self.log_probs.argmax(-1)

    def actions_and_log_prob(self, deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """The drawn (or most likely) indices gather their log-probabilities as they are, one column each:
        the numbers ``sample``/``mode`` and ``log_prob`` give, in three operators fewer per rollout step. A
        subclass that changes how actions are drawn or scored takes the general path."""
        cls = type(self)
        if (cls.sample, cls.mode, cls.log_prob, cls.get_actions) != _CATEGORICAL_DRAWS:
            return super().actions_and_log_prob(deterministic)
        log_probs = self.log_probs
        if deterministic:
            index = log_probs.argmax(-1, keepdim=True)
        else:
            index = torch.multinomial(log_probs.exp(), 1)
        return index.squeeze(-1), log_probs.gather(-1, index).squeeze(-1)

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        other_log_probs = cast(CategoricalDistribution, other).log_probs
        return (self.log_probs.exp() * (self.log_probs - other_log_probs)).sum(-1)


# The methods CategoricalDistribution.actions_and_log_prob's one pass stands for.
_CATEGORICAL_DRAWS = (
    CategoricalDistribution.sample,
    CategoricalDistribution.mode,
    CategoricalDistribution.log_prob,
    Distribution.get_actions,
)


class MultiCategoricalDistribution(Distribution):
    """MultiDiscrete actions: one independent categorical per dimension."""

    def __init__(self, logits: torch.Tensor, nvec: list[int]) -> None:
        self.parts = [CategoricalDistribution(chunk) for chunk in torch.split(logits, nvec, dim=-1)]

    @staticmethod
    def make_head(latent_dim: int, nvec: list[int]) -> nn.Module:
        return nn.Linear(latent_dim, int(sum(nvec)))

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        columns = actions.long().unbind(-1)
        return torch.stack([part.log_prob(col) for part, col in zip(self.parts, columns)], dim=-1).sum(-1)

    def entropy(self) -> torch.Tensor:
        return torch.stack([part.entropy() for part in self.parts], dim=-1).sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.stack([part.sample() for part in self.parts], dim=-1)

    def mode(self) -> torch.Tensor:
        return torch.stack([part.mode() for part in self.parts], dim=-1)

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        parts = cast(MultiCategoricalDistribution, other).parts
        return torch.stack([a.kl_divergence(b) for a, b in zip(self.parts, parts)], dim=-1).sum(-1)


class BernoulliDistribution(Distribution):
    """MultiBinary actions: independent coin flips."""

    def __init__(self, logits: torch.Tensor) -> None:
        self.logits = logits

    @staticmethod
    def make_head(latent_dim: int, n: int) -> nn.Module:
        return nn.Linear(latent_dim, n)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return -nn.functional.binary_cross_entropy_with_logits(
            self.logits, actions.float(), reduction="none"
        ).sum(-1)

    def entropy(self) -> torch.Tensor:
        p = torch.sigmoid(self.logits)
        return nn.functional.binary_cross_entropy_with_logits(self.logits, p, reduction="none").sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.bernoulli(torch.sigmoid(self.logits))

    def mode(self) -> torch.Tensor:
        return (self.logits > 0).float()

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        q = cast(BernoulliDistribution, other).logits
        prob = torch.sigmoid(self.logits)
        logsigmoid = nn.functional.logsigmoid
        per_bit = prob * (logsigmoid(self.logits) - logsigmoid(q)) + (1 - prob) * (
            logsigmoid(-self.logits) - logsigmoid(-q)
        )
        return per_bit.sum(-1)


class DiagGaussianDistribution(Distribution):
    """Box actions: a Gaussian with a state-independent, learned log standard deviation per dimension."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    @staticmethod
    def make_head(
        latent_dim: int, action_dim: int, log_std_init: float = 0.0
    ) -> tuple[nn.Module, nn.Parameter]:
        return nn.Linear(latent_dim, action_dim), nn.Parameter(torch.full((action_dim,), float(log_std_init)))

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        z = (actions - self.mean) * torch.exp(-self.log_std)
        return (-0.5 * z * z - self.log_std - _LOG_SQRT_2PI).sum(-1)

    def entropy(self) -> torch.Tensor:
        return (0.5 + _LOG_SQRT_2PI + self.log_std).sum(-1)

    def sample(self) -> torch.Tensor:
        return self.mean + torch.randn_like(self.mean) * self.log_std.exp()

    def mode(self) -> torch.Tensor:
        return self.mean

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        q = cast(DiagGaussianDistribution, other)
        return _gaussian_kl(self.mean, self.log_std, q.mean, q.log_std).sum(-1)


def _gaussian_kl(
    mean_p: torch.Tensor, log_std_p: torch.Tensor, mean_q: torch.Tensor, log_std_q: torch.Tensor
) -> torch.Tensor:
    """Elementwise KL between univariate Gaussians N(mean_p, std_p^2) and N(mean_q, std_q^2)."""
    variance_ratio = torch.exp(2 * (log_std_p - log_std_q))
    mean_term = ((mean_p - mean_q) * torch.exp(-log_std_q)).pow(2)
    return 0.5 * (variance_ratio + mean_term - 1) - (log_std_p - log_std_q)


class StateDependentNoise:
    """The persistent half of gSDE: its settings and the current exploration matrices.

    Exploration noise is ``latent_sde @ W`` with ``W ~ N(0, std^2)`` drawn by ``sample_weights`` and kept
    until the next call, so the noise is a smooth function of the state between resamplings. As in SB3
    the matrices are not part of the policy's saved state.

    Args:
        action_dim: number of action dimensions.
        full_std: learn one std per (latent feature, action) pair instead of one per latent feature.
        use_expln: ``expln`` instead of ``exp`` to map log std to std (stays > 0, grows slowly above 0).
        squash_output: tanh-squash actions into [-1, 1] (the policy rescales them to the action bounds).
        learn_features: let the noise's gradient flow into the latent features (else they are detached).
        epsilon: numerical floor on the variance and in the tanh correction.
    """

    def __init__(
        self,
        action_dim: int,
        full_std: bool = True,
        use_expln: bool = False,
        squash_output: bool = False,
        learn_features: bool = False,
        epsilon: float = 1e-6,
    ) -> None:
        self.action_dim = action_dim
        self.full_std = full_std
        self.use_expln = use_expln
        self.squash_output = squash_output
        self.learn_features = learn_features
        self.epsilon = epsilon
        self.latent_sde_dim = 0
        self.exploration_mat: torch.Tensor | None = None
        self.exploration_matrices: torch.Tensor | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> StateDependentNoise:
        """A copy whose matrices are detached: a sample drawn for a gradient step is a graph node, which torch
        cannot deep-copy, so ``copy.deepcopy(policy)`` would fail after a gSDE update."""
        clone = copy.copy(self)
        memo[id(self)] = clone
        for name in ("exploration_mat", "exploration_matrices"):
            value = getattr(self, name)
            setattr(clone, name, None if value is None else value.detach().clone())
        return clone

    def make_head(
        self, latent_dim: int, log_std_init: float = -2.0, latent_sde_dim: int | None = None
    ) -> tuple[nn.Module, nn.Parameter]:
        """The mean layer and the log-std parameter (latent_sde_dim x action_dim, or x 1); samples W once."""
        mean_net = nn.Linear(latent_dim, self.action_dim)
        self.latent_sde_dim = latent_dim if latent_sde_dim is None else latent_sde_dim
        columns = self.action_dim if self.full_std else 1
        log_std = nn.Parameter(torch.ones(self.latent_sde_dim, columns) * log_std_init, requires_grad=True)
        self.sample_weights(log_std)
        return mean_net, log_std

    def get_std(self, log_std: torch.Tensor) -> torch.Tensor:
        """The (latent_sde_dim, action_dim) standard deviations of the weights W."""
        if self.use_expln:
            # exp below 0, log1p(x) + 1 above: positive, continuous, and slow to blow up.
            positive = log_std > 0
            safe = log_std * positive + self.epsilon
            std = torch.exp(log_std) * ~positive + (torch.log1p(safe) + 1.0) * positive
        else:
            std = torch.exp(log_std)
        if self.full_std:
            return std
        return std.expand(self.latent_sde_dim, self.action_dim)

    def sample_weights(self, log_std: torch.Tensor, batch_size: int = 1) -> None:
        """Draw new exploration matrices: one shared, and one per environment for ``batch_size`` envs."""
        std = self.get_std(log_std)
        self.exploration_mat = torch.randn_like(std) * std
        self.exploration_matrices = (
            torch.randn((batch_size, *std.shape), dtype=std.dtype, device=std.device) * std
        )

    def distribution(
        self, mean_actions: torch.Tensor, log_std: torch.Tensor, latent_sde: torch.Tensor
    ) -> StateDependentNoiseDistribution:
        return StateDependentNoiseDistribution(mean_actions, self.get_std(log_std), latent_sde, self)

    def noise(self, latent_sde: torch.Tensor) -> torch.Tensor:
        """``latent_sde @ W``: one matrix per env when the batch has one row per env, else the shared one."""
        assert self.exploration_mat is not None and self.exploration_matrices is not None
        if self.exploration_mat.device != latent_sde.device:  # the policy moved since the last resampling
            self.exploration_mat = self.exploration_mat.to(latent_sde.device)
            self.exploration_matrices = self.exploration_matrices.to(latent_sde.device)
        if len(latent_sde) == 1 or len(latent_sde) != len(self.exploration_matrices):
            return latent_sde @ self.exploration_mat
        return torch.bmm(latent_sde.unsqueeze(1), self.exploration_matrices).squeeze(1)


class StateDependentNoiseDistribution(Distribution):
    """gSDE actions: mean + latent_sde @ W, a Gaussian of variance ``latent_sde^2 @ std^2`` per dimension.

    With ``squash_output`` the Gaussian sample goes through tanh; ``log_prob`` then includes the change of
    variables and ``entropy`` is ``None`` (no closed form; the loss estimates it from log-probabilities).
    """

    def __init__(
        self, mean: torch.Tensor, std: torch.Tensor, latent_sde: torch.Tensor, noise: StateDependentNoise
    ) -> None:
        self.noise = noise
        self.mean = mean
        self.latent_sde = latent_sde if noise.learn_features else latent_sde.detach()
        variance = (self.latent_sde * self.latent_sde) @ (std * std)
        self.std = torch.sqrt(variance + noise.epsilon)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        if self.noise.squash_output:
            # atanh of the action, clamped so that actions at the bounds stay finite.
            eps = torch.finfo(actions.dtype).eps
            clamped = actions.clamp(-1.0 + eps, 1.0 - eps)
            gaussian = 0.5 * (clamped.log1p() - (-clamped).log1p())
        else:
            gaussian = actions
        return self.log_prob_gaussian(gaussian)

    def log_prob_gaussian(self, gaussian_actions: torch.Tensor) -> torch.Tensor:
        """Log-likelihood of the action made from the pre-squash value ``gaussian_actions``.

        The Gaussian log-density, minus ``log(1 - tanh(x)^2 + epsilon)`` per dimension with squashing (the
        change of variables through tanh; epsilon keeps it finite where tanh saturates).
        """
        z = (gaussian_actions - self.mean) / self.std
        log_prob = (-0.5 * z * z - torch.log(self.std) - _LOG_SQRT_2PI).sum(-1)
        if self.noise.squash_output:
            correction = torch.log(1.0 - torch.tanh(gaussian_actions) ** 2 + self.noise.epsilon)
            log_prob = log_prob - correction.sum(-1)
        return log_prob

    def sample_and_log_prob(self) -> tuple[torch.Tensor, torch.Tensor]:
        """A sample and its log-likelihood, scored on the Gaussian value before tanh (SAC's actor loss).

        Scoring the pre-squash value skips ``log_prob``'s atanh, which loses precision where tanh
        saturates. Gradients reach the mean, the features (``learn_features``) and, through the
        exploration matrix when it was drawn with gradients enabled, the log std (reparameterisation).
        """
        gaussian = self.mean + self.noise.noise(self.latent_sde)
        actions = torch.tanh(gaussian) if self.noise.squash_output else gaussian
        return actions, self.log_prob_gaussian(gaussian)

    def entropy(self) -> torch.Tensor | None:
        if self.noise.squash_output:
            return None
        return (0.5 + _LOG_SQRT_2PI + torch.log(self.std)).sum(-1)

    def sample(self) -> torch.Tensor:
        actions = self.mean + self.noise.noise(self.latent_sde)
        return torch.tanh(actions) if self.noise.squash_output else actions

    def mode(self) -> torch.Tensor:
        return torch.tanh(self.mean) if self.noise.squash_output else self.mean

    def kl_divergence(self, other: Distribution) -> torch.Tensor:
        # A Gaussian with state-dependent std; a tanh squash is a bijection and leaves the KL unchanged.
        q = cast(StateDependentNoiseDistribution, other)
        return _gaussian_kl(self.mean, torch.log(self.std), q.mean, torch.log(q.std)).sum(-1)


def kl_divergence(old: Distribution, new: Distribution) -> torch.Tensor:
    """``KL(old || new)`` for each sample of a batch, summed over independent action dimensions.

    Both are values of the same distribution class (the old and the new policy on the same observations:
    TRPO's trust region, a PPG or distillation penalty); ``old`` usually comes from a ``torch.no_grad()``
    pass so gradients flow into ``new`` only.

    Raises:
        ConfigurationError: the two are of different classes, or the class has no ``kl_divergence``.
    """
    if type(old) is not type(new):
        raise ConfigurationError(
            f"kl_divergence(old, new) needs two distributions of the same class, got {type(old).__name__} "
            f"and {type(new).__name__}: evaluate the old and the new policy on the same observations."
        )
    try:
        return old.kl_divergence(new)
    except NotImplementedError as exc:
        raise ConfigurationError(str(exc)) from None


def make_distribution(action_space: spaces.Space, use_sde: bool = False) -> type[Distribution]:
    """The distribution class for an action space (the policy builds its head from it)."""
    if isinstance(action_space, spaces.Box):
        return StateDependentNoiseDistribution if use_sde else DiagGaussianDistribution
    if isinstance(action_space, spaces.Discrete):
        return CategoricalDistribution
    if isinstance(action_space, spaces.MultiDiscrete):
        return MultiCategoricalDistribution
    if isinstance(action_space, spaces.MultiBinary):
        return BernoulliDistribution
    raise NotImplementedError(f"No distribution for action space {type(action_space).__name__}.")


def _nvec(space: spaces.MultiDiscrete) -> list[int]:
    return [int(n) for n in np.asarray(space.nvec).reshape(-1)]
