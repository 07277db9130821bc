"""Actor-critic policies whose action distribution takes action masks (MaskablePPO's MlpPolicy, ...).

They are core's ``ActorCriticPolicy`` (same trunk, initialisation and ``policy_kwargs``) with a masked
categorical head: every method that builds the action distribution takes an optional ``action_masks``
argument, a boolean tensor ``(batch, mask_dims)`` laid out as ``lit_sb3_ppo_mask.action_masks`` describes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ActorCriticPolicy,
    BaseFeaturesExtractor,
    CombinedExtractor,
    NatureCNN,
    NetArch,
    describe_space,
)
from lit_sb3_ppo_mask.distributions import (
    MaskableCategoricalDistribution,
    MaskableMultiCategoricalDistribution,
)

__all__ = [
    "MASKABLE_ALIASES",
    "MaskableActorCriticCnnPolicy",
    "MaskableActorCriticPolicy",
    "MaskableMultiInputActorCriticPolicy",
    "mask_dims",
]

MaskableDistribution = MaskableCategoricalDistribution | MaskableMultiCategoricalDistribution


def _nvec(action_space: spaces.Space) -> list[int] | None:
    """Choices per sub-action (``None`` for Discrete); MultiBinary bits are two-way choices."""
    if isinstance(action_space, spaces.MultiDiscrete):
        return [int(n) for n in np.asarray(action_space.nvec).reshape(-1)]
    if isinstance(action_space, spaces.MultiBinary):
        return [2] * int(np.prod(action_space.shape))
    return None


def mask_dims(action_space: spaces.Space) -> int:
    """Length of one action mask for ``action_space``: n, sum(nvec) or 2 * n bits."""
    if isinstance(action_space, spaces.Discrete):
        return int(action_space.n)
    nvec = _nvec(action_space)
    if nvec is None:
        raise ConfigurationError(
            f"Action masking needs Discrete, MultiDiscrete or MultiBinary actions, not "
            f"{describe_space(action_space)}."
        )
    return sum(nvec)


class MaskableActorCriticPolicy(ActorCriticPolicy):
    """Actor-critic policy with invalid action masking, for MaskablePPO.

    Args:
        observation_space: observation space of the environment.
        action_space: Discrete, MultiDiscrete or MultiBinary.
        net_arch: hidden sizes; a list for both branches or ``dict(pi=[...], vf=[...])``.
            Default ``dict(pi=[64, 64], vf=[64, 64])``, no hidden layer after NatureCNN.
        activation_fn: activation class or name. Default ``nn.Tanh``.
        ortho_init: orthogonal initialisation with SB3's gains.
        features_extractor_class / features_extractor_kwargs: how observations become features.
        share_features_extractor: one extractor for actor and critic.
        normalize_images: divide uint8 image observations by 255.
        optimizer_class / optimizer_kwargs: optimizer MaskablePPO builds (default Adam, ``eps=1e-5``).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: NetArch = None,
        activation_fn: Any = nn.Tanh,
        ortho_init: bool = True,
        features_extractor_class: Any = None,
        features_extractor_kwargs: dict[str, Any] | None = None,
        share_features_extractor: bool = True,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.mask_dims = mask_dims(action_space)  # refuses Box actions before any layer is built
        self.mask_nvec = _nvec(action_space)
        super().__init__(
            observation_space,
            action_space,
            net_arch=net_arch,
            activation_fn=activation_fn,
            ortho_init=ortho_init,
            features_extractor_class=features_extractor_class,
            features_extractor_kwargs=features_extractor_kwargs,
            share_features_extractor=share_features_extractor,
            normalize_images=normalize_images,
            optimizer_class=optimizer_class,
            optimizer_kwargs=optimizer_kwargs,
        )

    def build_action_head(self, latent_dim: int, log_std_init: float) -> None:
        self.log_std = None
        if self.mask_nvec is None:
            self.action_net = MaskableCategoricalDistribution.make_head(latent_dim, self.mask_dims)
        else:
            self.action_net = MaskableMultiCategoricalDistribution.make_head(latent_dim, self.mask_nvec)

    def distribution(
        self, latent_pi: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> MaskableDistribution:
        logits = self.action_net(latent_pi)
        if action_masks is not None:
            action_masks = self._as_mask_tensor(action_masks, logits)
        if self.mask_nvec is None:
            return MaskableCategoricalDistribution(logits, action_masks)
        return MaskableMultiCategoricalDistribution(logits, self.mask_nvec, action_masks)

    def _as_mask_tensor(self, action_masks: Any, logits: torch.Tensor) -> torch.Tensor:
        masks = torch.as_tensor(action_masks, device=logits.device)
        if masks.dtype != torch.bool:
            masks = masks.bool()
        if masks.numel() != logits.shape[0] * self.mask_dims:
            raise ValueError(
                f"Action masks of shape {tuple(masks.shape)} do not fit a batch of {logits.shape[0]} "
                f"observation(s): expected ({logits.shape[0]}, {self.mask_dims}) booleans for "
                f"{describe_space(self.action_space)}."
            )
        return masks.reshape(logits.shape[0], self.mask_dims)

    def latents(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        pi_features, vf_features = self.extract_features(obs)
        if self.share_features_extractor:
            return self.mlp_extractor(pi_features)
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def _latent_pi(self, obs: Any) -> torch.Tensor:
        pi_features, _ = self.extract_features(obs)
        return self.mlp_extractor.forward_actor(pi_features)

    def forward(
        self, obs: Any, deterministic: bool = False, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample allowed actions; return ``(actions, values, log_prob)`` as collected into a rollout."""
        latent_pi, latent_vf = self.latents(obs)
        dist = self.distribution(latent_pi, action_masks)
        actions = dist.get_actions(deterministic)
        return actions, self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions)

    def evaluate_actions(
        self, obs: Any, actions: torch.Tensor, action_masks: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Values, log-likelihood and (masked) entropy of given actions: what the PPO loss needs."""
        latent_pi, latent_vf = self.latents(obs)
        dist = self.distribution(latent_pi, action_masks)
        return self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs: Any, action_masks: torch.Tensor | None = None) -> MaskableDistribution:
        return self.distribution(self._latent_pi(obs), action_masks)

    def predict_actions(
        self, obs: Any, deterministic: bool = False, action_masks: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Actions only (what ``model.predict`` needs)."""
        return self.get_distribution(obs, action_masks).get_actions(deterministic)


class MaskableActorCriticCnnPolicy(MaskableActorCriticPolicy):
    """CnnPolicy: a NatureCNN extractor (512 features, no hidden layers after it)."""

    default_features_extractor_class: ClassVar[type[BaseFeaturesExtractor]] = NatureCNN


class MaskableMultiInputActorCriticPolicy(MaskableActorCriticPolicy):
    """MultiInputPolicy: Dict observations through a CombinedExtractor."""

    default_features_extractor_class: ClassVar[type[BaseFeaturesExtractor]] = CombinedExtractor


# MaskablePPO's policy aliases, as sb3-contrib names them.
MASKABLE_ALIASES: dict[str, Any] = {
    "MlpPolicy": MaskableActorCriticPolicy,
    "CnnPolicy": MaskableActorCriticCnnPolicy,
    "MultiInputPolicy": MaskableMultiInputActorCriticPolicy,
}


class MaskedDeterministicPolicy(nn.Module):
    """The most likely allowed action: what ``MaskablePPO.export`` writes.

    ``forward(obs, action_masks) -> actions``, with ``action_masks`` ``(batch, mask_dims)`` booleans.
    """

    def __init__(self, policy: MaskableActorCriticPolicy) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, obs: Any, action_masks: torch.Tensor) -> torch.Tensor:
        return self.policy.predict_actions(obs, deterministic=True, action_masks=action_masks)
