"""Action distributions for policy-gradient algorithms, written lean for small-batch CPU speed.

``torch.distributions`` validates arguments and builds several objects per call; a policy update calls a
distribution a few thousand times per second, so these classes do the arithmetic directly. Each class
has two halves: ``make_head`` builds the network layer(s) that produce its parameters (once, at policy
construction), and ``from_latent`` turns a latent batch into a distribution value that can sample and
score actions.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

__all__ = [
    "Distribution",
    "CategoricalDistribution",
    "MultiCategoricalDistribution",
    "BernoulliDistribution",
    "DiagGaussianDistribution",
    "make_distribution",
]

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


class Distribution(ABC):
    """A batch of action distributions; ``log_prob`` and ``entropy`` return one value per batch row."""

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


class CategoricalDistribution(Distribution):
    """Discrete actions: a softmax over ``n`` logits."""

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


class DiagGaussianDistribution(Distribution):
    """Box actions: a Gaussian with a state-independent, learned log standard deviation per dimension."""

    def __init__(self, mean: torch.Tensor, log_std: torch.Tensor) -> None:
        self.mean = mean
        self.log_std = log_std.expand_as(mean)

    @staticmethod
    def make_head(latent_dim: int, action_dim: int, log_std_init: float = 0.0) -> tuple[nn.Module, nn.Parameter]:
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


def make_distribution(action_space: spaces.Space) -> type[Distribution]:
    """The distribution class for an action space (the policy builds its head from it)."""
    if isinstance(action_space, spaces.Box):
        return DiagGaussianDistribution
    if isinstance(action_space, spaces.Discrete):
        return CategoricalDistribution
    if isinstance(action_space, spaces.MultiDiscrete):
        return MultiCategoricalDistribution
    if isinstance(action_space, spaces.MultiBinary):
        return BernoulliDistribution
    raise NotImplementedError(f"No distribution for action space {type(action_space).__name__}.")


def _nvec(space: spaces.MultiDiscrete) -> list[int]:
    return [int(n) for n in np.asarray(space.nvec).reshape(-1)]
