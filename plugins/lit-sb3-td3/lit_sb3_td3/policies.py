"""TD3 policies: a deterministic actor, ``n_critics`` Q networks and target copies of both (SB3's layout)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    CombinedExtractor,
    ContinuousCritic,
    DeterministicActor,
    FlattenExtractor,
    NatureCNN,
    OffPolicyNetArch,
    OffPolicyPolicy,
    actor_critic_arch,
    describe_space,
    freeze,
    resolve_named_class,
)

__all__ = ["TD3_POLICY_ALIASES", "CnnPolicy", "MultiInputPolicy", "TD3Policy"]


class TD3Policy(OffPolicyPolicy):
    """Actor ``actor`` and ``actor_target``, critic ``critic`` and ``critic_target``.

    Args:
        observation_space / action_space: the environment's spaces; actions must be a bounded Box.
        net_arch: hidden sizes, a list for actor and critics or ``dict(pi=[...], qf=[...])``.
            Default ``[400, 300]`` (``[256, 256]`` after a NatureCNN), as in SB3.
        activation_fn: activation class or name. Default ReLU.
        features_extractor_class / features_extractor_kwargs / normalize_images: see ``OffPolicyPolicy``.
        optimizer_class / optimizer_kwargs: optimizer of the actor and of the critic (Adam by default).
        n_critics: number of Q networks (the target takes their minimum; DDPG uses 1).
        share_features_extractor: the critic uses the actor's features extractor.
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: OffPolicyNetArch = None,
        activation_fn: Any = nn.ReLU,
        features_extractor_class: Any = FlattenExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        n_critics: int = 2,
        share_features_extractor: bool = False,
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
        default = [256, 256] if self.features_extractor_class is NatureCNN else [400, 300]
        actor_arch, critic_arch = actor_critic_arch(net_arch, default)
        activation = resolve_named_class("activation", activation_fn, field="policy_kwargs.activation_fn")
        action_dim = int(np.prod(action_space.shape))
        self.share_features_extractor = share_features_extractor
        self.actor = DeterministicActor(self.make_features_extractor(), action_dim, actor_arch, activation)
        # Built, then loaded with the actor's weights (not copied): layers draw their initial weights from
        # torch's generator in construction order, and SB3 builds the target, so the critic a seed gives
        # is SB3's only if the target draws too.
        self.actor_target = DeterministicActor(
            self.make_features_extractor(), action_dim, actor_arch, activation
        )
        self.actor_target.load_state_dict(self.actor.state_dict())
        freeze(self.actor_target)
        critic_extractor = (
            self.actor.features_extractor if share_features_extractor else self.make_features_extractor()
        )
        self.critic = ContinuousCritic(
            critic_extractor, action_dim, critic_arch, activation, n_critics, share_features_extractor
        )
        # Shared: the target critic reads the target actor's extractor, as in SB3 (so each target update
        # moves that extractor twice toward the actor's, once with the critic and once with the actor).
        self.critic_target = self.critic.make_target(
            self.actor_target.features_extractor if share_features_extractor else None
        )

    def train(self, mode: bool = True) -> TD3Policy:
        """Switch actor and critic; the target networks always stay in eval mode (as in SB3)."""
        super().train(mode)
        self.actor_target.train(False)
        self.critic_target.train(False)
        return self

    def forward(self, obs: Any, deterministic: bool = True) -> torch.Tensor:
        """Actions in [-1, 1] (exploration noise is the algorithm's ``action_noise``)."""
        return self.actor(self.preprocess(obs))


class CnnPolicy(TD3Policy):
    """``TD3Policy`` with the NatureCNN features extractor, for image observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", NatureCNN)
        super().__init__(observation_space, action_space, **kwargs)


class MultiInputPolicy(TD3Policy):
    """``TD3Policy`` with the CombinedExtractor, for Dict observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(observation_space, action_space, **kwargs)


TD3_POLICY_ALIASES: dict[str, Any] = {
    "MlpPolicy": TD3Policy,
    "CnnPolicy": CnnPolicy,
    "MultiInputPolicy": MultiInputPolicy,
}
