"""SB3's action distribution objects, over lit-sb3's distribution values.

lit-sb3's distributions (``lit_sb3_core.nets.distributions``) are values: built from a head's output, they
score and sample actions. SB3's are objects made once per action space, ``DiagGaussianDistribution(
action_dim)``, that build the head (``proba_distribution_net``) and are then re-pointed at each batch's
parameters (``proba_distribution(...)`` returns the object itself). The classes here keep SB3's object
and signatures and hold a lit-sb3 value for the arithmetic (``log_prob``, ``entropy``, ``sample``,
``mode``); ``distribution`` is the matching ``torch.distributions`` object (a list of them for
MultiDiscrete), which ``kl_divergence`` compares per action dimension, as SB3's does.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from gymnasium import spaces
from torch import nn
from torch.distributions import Bernoulli, Categorical, Normal

from lit_sb3_core.errors import LitSb3Error
from lit_sb3_core.foundation.spaces import action_dim as space_action_dim
from lit_sb3_core.foundation.spaces import describe_space
from lit_sb3_core.nets import distributions as values

__all__ = [
    "BernoulliDistribution",
    "CategoricalDistribution",
    "DiagGaussianDistribution",
    "Distribution",
    "DistributionMismatchError",
    "DistributionNotReadyError",
    "MultiCategoricalDistribution",
    "SquashedDiagGaussianDistribution",
    "StateDependentNoiseDistribution",
    "TanhBijector",
    "kl_divergence",
    "make_proba_distribution",
    "sum_independent_dims",
]


class DistributionMismatchError(LitSb3Error, AssertionError):
    """``kl_divergence`` of two distributions that cannot be compared (another class, other action dims)."""


class DistributionNotReadyError(LitSb3Error, AttributeError, AssertionError):
    """A distribution asked to score or sample before ``proba_distribution(...)`` gave it parameters.

    An ``AttributeError`` and an ``AssertionError``: SB3's and sb3-contrib's classes raise one or the other.
    """


def sum_independent_dims(tensor: torch.Tensor) -> torch.Tensor:
    """Sum over the action dimension (dim 1) of a per-dimension log-probability or entropy, as SB3 does."""
    return tensor.sum(dim=1) if tensor.ndim > 1 else tensor.sum()


class Distribution(ABC):
    """SB3's distribution object: ``proba_distribution_net`` builds the head, ``proba_distribution`` sets the
    parameters of the current batch (and returns ``self``), the rest scores and samples actions."""

    def __init__(self) -> None:
        self._value: values.Distribution | None = None

    @property
    def value(self) -> values.Distribution:
        """The lit-sb3 distribution value of the current parameters."""
        if self._value is None:
            raise DistributionNotReadyError(
                f"{type(self).__name__} has no parameters yet: call proba_distribution(...) first."
            )
        return self._value

    @abstractmethod
    def proba_distribution_net(self, *args: Any, **kwargs: Any) -> nn.Module | tuple[nn.Module, nn.Parameter]:
        """The layer(s) that map a latent vector to this distribution's parameters."""

    @abstractmethod
    def proba_distribution(self, *args: Any, **kwargs: Any) -> Distribution:
        """Set the parameters of the current batch; returns ``self``."""

    @property
    @abstractmethod
    def distribution(self) -> Any:
        """The ``torch.distributions`` object of the current parameters."""

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.value.log_prob(actions)

    def entropy(self) -> torch.Tensor | None:
        return self.value.entropy()

    def sample(self) -> torch.Tensor:
        return self.value.sample()

    def mode(self) -> torch.Tensor:
        return self.value.mode()

    def get_actions(self, deterministic: bool = False) -> torch.Tensor:
        return self.mode() if deterministic else self.sample()

    def actions_from_params(self, *args: Any, deterministic: bool = False, **kwargs: Any) -> torch.Tensor:
        """Set the parameters, then return actions (the mode when ``deterministic``)."""
        self.proba_distribution(*args, **kwargs)
        return self.get_actions(deterministic=deterministic)

    def log_prob_from_params(self, *args: Any, **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Set the parameters, then return sampled actions and their log-probabilities."""
        actions = self.actions_from_params(*args, **kwargs)
        return actions, self.log_prob(actions)


class DiagGaussianDistribution(Distribution):
    """Box actions: a Gaussian with a learned, state-independent log std per action dimension."""

    def __init__(self, action_dim: int) -> None:
        super().__init__()
        self.action_dim = action_dim

    def proba_distribution_net(
        self, latent_dim: int, log_std_init: float | torch.Tensor = 0.0
    ) -> tuple[nn.Module, nn.Parameter]:
        return values.DiagGaussianDistribution.make_head(latent_dim, self.action_dim, float(log_std_init))

    def proba_distribution(
        self, mean_actions: torch.Tensor, log_std: torch.Tensor
    ) -> DiagGaussianDistribution:
        self._value = values.DiagGaussianDistribution(mean_actions, log_std)
        return self

    @property
    def gaussian(self) -> values.DiagGaussianDistribution:
        value = self.value
        assert isinstance(value, values.DiagGaussianDistribution)
        return value

    @property
    def distribution(self) -> Normal:
        return Normal(self.gaussian.mean, self.gaussian.log_std.exp())


class TanhBijector:
    """``tanh`` and its inverse, with the log-determinant correction of squashing a Gaussian sample."""

    def __init__(self, epsilon: float = 1e-6) -> None:
        self.epsilon = epsilon

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)

    @staticmethod
    def atanh(x: torch.Tensor) -> torch.Tensor:
        return 0.5 * (x.log1p() - (-x).log1p())

    @staticmethod
    def inverse(y: torch.Tensor) -> torch.Tensor:
        """``atanh(y)``, with ``y`` clipped just inside (-1, 1) so that actions at the bounds stay finite."""
        eps = torch.finfo(y.dtype).eps
        return TanhBijector.atanh(y.clamp(min=-1.0 + eps, max=1.0 - eps))

    def log_prob_correction(self, x: torch.Tensor) -> torch.Tensor:
        """``log |d tanh(x) / dx|`` per dimension (``epsilon`` keeps it finite where tanh saturates)."""
        return torch.log(1.0 - torch.tanh(x) ** 2 + self.epsilon)


class SquashedDiagGaussianDistribution(DiagGaussianDistribution):
    """A diagonal Gaussian squashed into [-1, 1] by tanh (SAC's actions); it has no closed-form entropy."""

    def __init__(self, action_dim: int, epsilon: float = 1e-6) -> None:
        super().__init__(action_dim)
        self.epsilon = epsilon
        self.gaussian_actions: torch.Tensor | None = None

    def proba_distribution(
        self, mean_actions: torch.Tensor, log_std: torch.Tensor
    ) -> SquashedDiagGaussianDistribution:
        super().proba_distribution(mean_actions, log_std)
        return self

    def log_prob(self, actions: torch.Tensor, gaussian_actions: torch.Tensor | None = None) -> torch.Tensor:
        """Log-likelihood of squashed ``actions``; pass the pre-tanh ``gaussian_actions`` when known (the
        inverse loses precision where tanh saturates)."""
        if gaussian_actions is None:
            gaussian_actions = TanhBijector.inverse(actions)
        log_prob = self.gaussian.log_prob(gaussian_actions)
        return log_prob - torch.log(1 - actions**2 + self.epsilon).sum(dim=-1)

    def entropy(self) -> torch.Tensor | None:
        return None

    def sample(self) -> torch.Tensor:
        self.gaussian_actions = self.gaussian.sample()
        return torch.tanh(self.gaussian_actions)

    def mode(self) -> torch.Tensor:
        self.gaussian_actions = self.gaussian.mode()
        return torch.tanh(self.gaussian_actions)

    def log_prob_from_params(
        self, mean_actions: torch.Tensor, log_std: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        actions = self.actions_from_params(mean_actions, log_std)
        return actions, self.log_prob(actions, self.gaussian_actions)


class CategoricalDistribution(Distribution):
    """Discrete actions: a softmax over ``action_dim`` logits."""

    def __init__(self, action_dim: int) -> None:
        super().__init__()
        self.action_dim = action_dim

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return values.CategoricalDistribution.make_head(latent_dim, self.action_dim)

    def proba_distribution(self, action_logits: torch.Tensor) -> CategoricalDistribution:
        self._value = values.CategoricalDistribution(action_logits)
        return self

    @property
    def distribution(self) -> Categorical:
        value = self.value
        assert isinstance(value, values.CategoricalDistribution)
        return Categorical(logits=value.log_probs)


class MultiCategoricalDistribution(Distribution):
    """MultiDiscrete actions: one independent categorical per dimension (``action_dims`` choices each)."""

    def __init__(self, action_dims: list[int]) -> None:
        super().__init__()
        self.action_dims = [int(n) for n in action_dims]

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return values.MultiCategoricalDistribution.make_head(latent_dim, self.action_dims)

    def proba_distribution(self, action_logits: torch.Tensor) -> MultiCategoricalDistribution:
        self._value = values.MultiCategoricalDistribution(action_logits, self.action_dims)
        return self

    @property
    def distribution(self) -> list[Categorical]:
        value = self.value
        assert isinstance(value, values.MultiCategoricalDistribution)
        return [Categorical(logits=part.log_probs) for part in value.parts]


class BernoulliDistribution(Distribution):
    """MultiBinary actions: ``action_dims`` independent coin flips."""

    def __init__(self, action_dims: int) -> None:
        super().__init__()
        self.action_dims = action_dims

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return values.BernoulliDistribution.make_head(latent_dim, self.action_dims)

    def proba_distribution(self, action_logits: torch.Tensor) -> BernoulliDistribution:
        self._value = values.BernoulliDistribution(action_logits)
        return self

    @property
    def distribution(self) -> Bernoulli:
        value = self.value
        assert isinstance(value, values.BernoulliDistribution)
        return Bernoulli(logits=value.logits)


class StateDependentNoiseDistribution(Distribution):
    """gSDE (Raffin et al. 2021): exploration noise ``latent_sde @ W`` with ``W`` resampled by
    ``sample_weights``; the settings and matrices live in lit-sb3's ``StateDependentNoise``."""

    def __init__(
        self,
        action_dim: int,
        full_std: bool = True,
        use_expln: bool = False,
        squash_output: bool = False,
        learn_features: bool = False,
        epsilon: float = 1e-6,
    ) -> None:
        super().__init__()
        self.noise = values.StateDependentNoise(
            action_dim,
            full_std=full_std,
            use_expln=use_expln,
            squash_output=squash_output,
            learn_features=learn_features,
            epsilon=epsilon,
        )
        self.action_dim, self.full_std, self.use_expln = action_dim, full_std, use_expln
        self.learn_features, self.epsilon = learn_features, epsilon
        self.bijector = TanhBijector(epsilon) if squash_output else None

    @property
    def exploration_mat(self) -> torch.Tensor | None:
        return self.noise.exploration_mat

    @property
    def exploration_matrices(self) -> torch.Tensor | None:
        return self.noise.exploration_matrices

    @property
    def latent_sde_dim(self) -> int:
        return self.noise.latent_sde_dim

    def get_std(self, log_std: torch.Tensor) -> torch.Tensor:
        return self.noise.get_std(log_std)

    def sample_weights(self, log_std: torch.Tensor, batch_size: int = 1) -> None:
        self.noise.sample_weights(log_std, batch_size)

    def proba_distribution_net(
        self,
        latent_dim: int,
        log_std_init: float | torch.Tensor = -2.0,
        latent_sde_dim: int | None = None,
    ) -> tuple[nn.Module, nn.Parameter]:
        return self.noise.make_head(latent_dim, float(log_std_init), latent_sde_dim)

    def proba_distribution(
        self, mean_actions: torch.Tensor, log_std: torch.Tensor, latent_sde: torch.Tensor
    ) -> StateDependentNoiseDistribution:
        self._value = self.noise.distribution(mean_actions, log_std, latent_sde)
        return self

    @property
    def sde(self) -> values.StateDependentNoiseDistribution:
        value = self.value
        assert isinstance(value, values.StateDependentNoiseDistribution)
        return value

    @property
    def distribution(self) -> Normal:
        return Normal(self.sde.mean, self.sde.std)

    def get_noise(self, latent_sde: torch.Tensor) -> torch.Tensor:
        latent = latent_sde if self.learn_features else latent_sde.detach()
        return self.noise.noise(latent)


def kl_divergence(dist_true: Distribution, dist_pred: Distribution) -> torch.Tensor:
    """``KL(dist_true || dist_pred)`` per action dimension (summed over a MultiDiscrete's parts), as SB3's."""
    if type(dist_true) is not type(dist_pred):
        raise DistributionMismatchError(
            f"kl_divergence needs two distributions of the same class, got {type(dist_true).__name__} and "
            f"{type(dist_pred).__name__}."
        )
    if isinstance(dist_true, MultiCategoricalDistribution):
        assert isinstance(dist_pred, MultiCategoricalDistribution)
        if dist_true.action_dims != dist_pred.action_dims:
            raise DistributionMismatchError(
                f"kl_divergence: the MultiCategorical action dims differ ({dist_true.action_dims} and "
                f"{dist_pred.action_dims})."
            )
        parts = zip(dist_true.distribution, dist_pred.distribution)
        return torch.stack([torch.distributions.kl_divergence(p, q) for p, q in parts], dim=1).sum(dim=1)
    return torch.distributions.kl_divergence(dist_true.distribution, dist_pred.distribution)


def make_proba_distribution(
    action_space: spaces.Space, use_sde: bool = False, dist_kwargs: dict[str, Any] | None = None
) -> Distribution:
    """The distribution object for an action space (gSDE for Box actions when ``use_sde``)."""
    kwargs = dist_kwargs or {}
    if isinstance(action_space, spaces.Box):
        cls = StateDependentNoiseDistribution if use_sde else DiagGaussianDistribution
        return cls(space_action_dim(action_space), **kwargs)
    if isinstance(action_space, spaces.Discrete):
        return CategoricalDistribution(int(action_space.n), **kwargs)
    if isinstance(action_space, spaces.MultiDiscrete):
        return MultiCategoricalDistribution([int(n) for n in action_space.nvec.reshape(-1)], **kwargs)
    if isinstance(action_space, spaces.MultiBinary):
        if len(action_space.shape) != 1:
            raise NotImplementedError(
                f"No probability distribution for {describe_space(action_space)}: MultiBinary actions must be 1-D."
            )
        return BernoulliDistribution(int(action_space.shape[0]), **kwargs)
    raise NotImplementedError(
        f"No probability distribution for the action space {describe_space(action_space)}: use Box, Discrete, "
        "MultiDiscrete or MultiBinary actions."
    )
