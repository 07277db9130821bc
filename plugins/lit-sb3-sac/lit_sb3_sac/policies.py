"""SAC policies: a squashed-Gaussian actor, ``n_critics`` Q networks and their targets (SB3's layout)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    ContinuousCritic,
    FlattenExtractor,
    NatureCNN,
    OffPolicyNetArch,
    OffPolicyPolicy,
    SquashedGaussianActor,
    actor_critic_arch,
    describe_space,
    resolve_named_class,
)

__all__ = ["SAC_POLICY_ALIASES", "CnnPolicy", "MultiInputPolicy", "SACPolicy"]


class SACPolicy(OffPolicyPolicy):
    """Actor ``actor``, critic ``critic`` and target critic ``critic_target``.

    Args:
        observation_space / action_space: the environment's spaces; actions must be a bounded Box.
        net_arch: hidden sizes, a list for actor and critics or ``dict(pi=[...], qf=[...])``.
            Default ``[256, 256]``.
        activation_fn: activation class or name. Default ReLU.
        use_sde: explore with generalized State-Dependent Exploration (gSDE, Raffin et al. 2021,
            https://arxiv.org/abs/2005.05719); ``SAC(use_sde=True)`` passes it.
        log_std_init: gSDE: initial log std of the exploration matrix entries. Default -3.
        use_expln: gSDE: ``expln`` instead of ``exp`` for the std (positive, grows slowly above 0).
        clip_mean: gSDE: clip the pre-tanh mean to [-clip_mean, clip_mean] (0: no clipping). Default 2.
            ``log_std_init``, ``use_expln``, ``clip_mean`` and ``full_std`` only apply to gSDE, as in SB3.
        features_extractor_class / features_extractor_kwargs / normalize_images: see ``OffPolicyPolicy``.
        optimizer_class / optimizer_kwargs: optimizer of the actor and of the critic (Adam by default).
        n_critics: number of Q networks (the target takes their minimum).
        share_features_extractor: the critic uses the actor's features extractor (trained by the actor
            loss only).
        full_std: gSDE: one std per (latent feature, action) pair (default); False: one per latent feature.
            (SB3's SAC actor has it; its SACPolicy does not pass it on.)
    """

    log_ent_coef: (
        nn.Parameter
    )  # log(alpha), added by the algorithm when it learns the temperature (ent_coef="auto")

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: OffPolicyNetArch = None,
        activation_fn: Any = nn.ReLU,
        use_sde: bool = False,
        log_std_init: float = -3,
        use_expln: bool = False,
        clip_mean: float = 2.0,
        features_extractor_class: Any = FlattenExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        n_critics: int = 2,
        share_features_extractor: bool = False,
        full_std: bool = True,
    ) -> None:
        if not isinstance(action_space, spaces.Box):
            raise ConfigurationError(
                f"{type(self).__name__} needs Box actions, got {describe_space(action_space)}."
            )
        super().__init__(
            observation_space,
            action_space,
            features_extractor_class=features_extractor_class,
            features_extractor_kwargs=features_extractor_kwargs,
            normalize_images=normalize_images,
            optimizer_class=optimizer_class,
            optimizer_kwargs=optimizer_kwargs,
            squash_output=True,
        )
        self.use_sde, self.log_std_init, self.full_std = use_sde, log_std_init, full_std
        self.use_expln, self.clip_mean = use_expln, clip_mean
        self.share_features_extractor = share_features_extractor
        actor_arch, critic_arch = actor_critic_arch(net_arch, [256, 256])
        activation = resolve_named_class("activation", activation_fn, field="policy_kwargs.activation_fn")
        action_dim = int(np.prod(action_space.shape))
        self.actor = SquashedGaussianActor(
            self.make_features_extractor(),
            action_dim,
            actor_arch,
            activation,
            use_sde=use_sde,
            log_std_init=log_std_init,
            full_std=full_std,
            use_expln=use_expln,
            clip_mean=clip_mean,
        )
        critic_extractor = (
            self.actor.features_extractor if share_features_extractor else self.make_features_extractor()
        )
        self.critic = self.make_critic(
            critic_extractor, action_dim, critic_arch, activation, n_critics, share_features_extractor
        )
        self.critic_target = self.critic.make_target()

    def make_critic(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module],
        n_critics: int,
        share_features_extractor: bool,
    ) -> ContinuousCritic:
        """The critic (SB3's ``make_critic``). A variant with other heads (TQC's quantiles) overrides this
        rather than replacing the critic afterwards: layers draw their initial weights from torch's
        generator in construction order, so a seed gives SB3's weights only when each network is built once."""
        return ContinuousCritic(
            features_extractor, action_dim, net_arch, activation_fn, n_critics, share_features_extractor
        )

    def train(self, mode: bool = True) -> SACPolicy:
        """Switch actor and critic; the target critic always stays in eval mode (as in SB3)."""
        super().train(mode)
        self.critic_target.train(False)
        return self

    def forward(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions in [-1, 1]: tanh of the mean (deterministic) or of a Gaussian (or gSDE) sample."""
        return self.actor(self.preprocess(obs), deterministic)

    def reset_noise(self, n_envs: int = 1) -> None:
        """gSDE: draw new exploration matrices, one per environment (see ``SquashedGaussianActor``)."""
        self.actor.reset_noise(n_envs)


class CnnPolicy(SACPolicy):
    """``SACPolicy`` with the NatureCNN features extractor, for image observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", NatureCNN)
        super().__init__(observation_space, action_space, **kwargs)


class MultiInputPolicy(SACPolicy):
    """``SACPolicy`` with the CombinedExtractor, for Dict observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(observation_space, action_space, **kwargs)


SAC_POLICY_ALIASES: dict[str, Any] = {
    "MlpPolicy": SACPolicy,
    "CnnPolicy": CnnPolicy,
    "MultiInputPolicy": MultiInputPolicy,
}
