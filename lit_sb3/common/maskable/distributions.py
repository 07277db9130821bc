"""``sb3_contrib.common.maskable.distributions``: sb3-contrib's maskable distribution objects.

``MaskableCategorical`` is a ``torch.distributions.Categorical`` whose invalid actions get the logit
``HUGE_NEG`` of lit-sb3's MaskablePPO (probability exactly 0); ``apply_masking(None)`` restores the
original logits, and the entropy counts the valid actions only. The ``Maskable*Distribution`` objects have
SB3's distribution API (``proba_distribution_net``, ``proba_distribution``, ``apply_masking``, ...) and
broadcast actions against the batch as torch's distributions do.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn
from torch.distributions import Categorical

from lit_sb3_core.foundation.spaces import describe_space
from lit_sb3_core.sb3.distributions import DistributionNotReadyError
from lit_sb3_ppo_mask.distributions import HUGE_NEG

__all__ = [
    "MaskableBernoulliDistribution",
    "MaskableCategorical",
    "MaskableCategoricalDistribution",
    "MaskableDistribution",
    "MaskableMultiCategoricalDistribution",
    "make_masked_proba_distribution",
]

MaybeMasks = torch.Tensor | np.ndarray | list[Any] | None


class MaskableCategorical(Categorical):
    """A categorical distribution that ``apply_masking`` restricts to the actions a mask allows."""

    def __init__(
        self,
        probs: torch.Tensor | None = None,
        logits: torch.Tensor | None = None,
        validate_args: bool | None = None,
        masks: MaybeMasks = None,
    ) -> None:
        self.masks: torch.Tensor | None = None
        super().__init__(probs, logits, validate_args)
        self._original_logits = self.logits
        self._validate = validate_args
        self.apply_masking(masks)

    def apply_masking(self, masks: MaybeMasks) -> None:
        """Give the actions where ``masks`` is False probability 0 (``None``: every action allowed again)."""
        logits = self._original_logits
        if masks is None:
            self.masks = None
        else:
            self.masks = torch.as_tensor(masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
            logits = torch.where(
                self.masks, logits, torch.tensor(HUGE_NEG, dtype=logits.dtype, device=logits.device)
            )
        self.__dict__.pop("probs", None)  # a cached softmax of the previous logits
        super().__init__(logits=logits, validate_args=self._validate)

    def entropy(self) -> torch.Tensor:
        if self.masks is None:
            return super().entropy()
        p_log_p = torch.where(self.masks, self.logits * self.probs, torch.zeros_like(self.probs))
        return -p_log_p.sum(-1)


class MaskableDistribution:
    """sb3-contrib's maskable distribution API; ``proba_distribution`` must come before everything else."""

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        raise NotImplementedError

    def proba_distribution(self, action_logits: torch.Tensor) -> MaskableDistribution:
        raise NotImplementedError

    def apply_masking(self, masks: MaybeMasks) -> None:
        raise NotImplementedError

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def entropy(self) -> torch.Tensor:
        raise NotImplementedError

    def sample(self) -> torch.Tensor:
        raise NotImplementedError

    def mode(self) -> torch.Tensor:
        raise NotImplementedError

    def get_actions(self, deterministic: bool = False) -> torch.Tensor:
        return self.mode() if deterministic else self.sample()

    def actions_from_params(self, action_logits: torch.Tensor, deterministic: bool = False) -> torch.Tensor:
        self.proba_distribution(action_logits)
        return self.get_actions(deterministic=deterministic)

    def log_prob_from_params(self, action_logits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        actions = self.actions_from_params(action_logits)
        return actions, self.log_prob(actions)

    def _not_ready(self) -> DistributionNotReadyError:
        return DistributionNotReadyError(
            f"{type(self).__name__} has no parameters yet: call proba_distribution(action_logits) first."
        )


class MaskableCategoricalDistribution(MaskableDistribution):
    """Discrete actions with masking: one ``MaskableCategorical`` over ``action_dim`` logits."""

    def __init__(self, action_dim: int) -> None:
        self.action_dim = action_dim
        self._distribution: MaskableCategorical | None = None

    @property
    def distribution(self) -> MaskableCategorical:
        if self._distribution is None:
            raise self._not_ready()
        return self._distribution

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return nn.Linear(latent_dim, self.action_dim)

    def proba_distribution(self, action_logits: torch.Tensor) -> MaskableCategoricalDistribution:
        """Logits of any shape whose size is a multiple of ``action_dim`` (realigned to ``(-1, action_dim)``)."""
        self._distribution = MaskableCategorical(logits=action_logits.view(-1, self.action_dim))
        return self

    def apply_masking(self, masks: MaybeMasks) -> None:
        self.distribution.apply_masking(masks)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(actions)

    def entropy(self) -> torch.Tensor:
        return self.distribution.entropy()

    def sample(self) -> torch.Tensor:
        return self.distribution.sample()

    def mode(self) -> torch.Tensor:
        return torch.argmax(self.distribution.probs, dim=1)


class MaskableMultiCategoricalDistribution(MaskableDistribution):
    """MultiDiscrete actions with masking: one ``MaskableCategorical`` per dimension (``distributions``)."""

    def __init__(self, action_dims: list[int]) -> None:
        self.action_dims = [int(n) for n in action_dims]
        self.distributions: list[MaskableCategorical] = []

    def _parts(self) -> list[MaskableCategorical]:
        if not self.distributions:
            raise self._not_ready()
        return self.distributions

    def proba_distribution_net(self, latent_dim: int) -> nn.Module:
        return nn.Linear(latent_dim, sum(self.action_dims))

    def proba_distribution(self, action_logits: torch.Tensor) -> MaskableMultiCategoricalDistribution:
        """Logits realigned to ``(-1, sum(action_dims))``, one block per dimension."""
        flat = action_logits.view(-1, sum(self.action_dims))
        self.distributions = [
            MaskableCategorical(logits=part) for part in torch.split(flat, self.action_dims, dim=1)
        ]
        return self

    def apply_masking(self, masks: MaybeMasks) -> None:
        parts = self._parts()
        if masks is None:
            for part in parts:
                part.apply_masking(None)
            return
        flat = torch.as_tensor(masks, dtype=torch.bool, device=parts[0].logits.device).reshape(
            -1, sum(self.action_dims)
        )
        for part, part_masks in zip(parts, torch.split(flat, self.action_dims, dim=1)):
            part.apply_masking(part_masks)

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        columns = actions.view(-1, len(self.action_dims)).unbind(dim=1)
        parts = self._parts()
        return torch.stack([part.log_prob(column) for part, column in zip(parts, columns)], dim=1).sum(dim=1)

    def entropy(self) -> torch.Tensor:
        return torch.stack([part.entropy() for part in self._parts()], dim=1).sum(dim=1)

    def sample(self) -> torch.Tensor:
        return torch.stack([part.sample() for part in self._parts()], dim=1)

    def mode(self) -> torch.Tensor:
        return torch.stack([torch.argmax(part.probs, dim=1) for part in self._parts()], dim=1)


class MaskableBernoulliDistribution(MaskableMultiCategoricalDistribution):
    """MultiBinary actions with masking: a two-way masked categorical per bit (masks ``(may be 0, may be 1)``)."""

    def __init__(self, action_dim: int) -> None:
        super().__init__([2] * action_dim)
        self.action_dim = action_dim


def make_masked_proba_distribution(action_space: spaces.Space) -> MaskableDistribution:
    """The maskable distribution for a Discrete, MultiDiscrete or (1-D) MultiBinary action space."""
    if isinstance(action_space, spaces.Discrete):
        return MaskableCategoricalDistribution(int(action_space.n))
    if isinstance(action_space, spaces.MultiDiscrete):
        return MaskableMultiCategoricalDistribution([int(n) for n in action_space.nvec.reshape(-1)])
    if isinstance(action_space, spaces.MultiBinary) and len(action_space.shape) == 1:
        return MaskableBernoulliDistribution(int(action_space.shape[0]))
    raise NotImplementedError(
        f"No maskable distribution for the action space {describe_space(action_space)}: action masking needs "
        "Discrete, MultiDiscrete or 1-D MultiBinary actions."
    )
