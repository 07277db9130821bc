"""DQN policies: an online Q network and its target copy, as Stable-Baselines3's ``DQNPolicy``."""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    CombinedExtractor,
    FlattenExtractor,
    NatureCNN,
    OffPolicyPolicy,
    QNetwork,
    describe_space,
    freeze,
    resolve_named_class,
)

__all__ = ["DQN_POLICY_ALIASES", "CnnPolicy", "DQNPolicy", "MultiInputPolicy"]


class DQNPolicy(OffPolicyPolicy):
    """Q network ``q_net`` and target network ``q_net_target`` (each with its own features extractor).

    Args:
        observation_space / action_space: the environment's spaces; actions must be Discrete.
        net_arch: hidden layer sizes of the Q network. Default ``[64, 64]`` (``[]`` after a NatureCNN).
        activation_fn: activation class or name. Default ReLU.
        features_extractor_class / features_extractor_kwargs: see ``OffPolicyPolicy``.
        normalize_images: divide uint8 images by 255.
        optimizer_class / optimizer_kwargs: optimizer over ``q_net`` (Adam by default).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: list[int] | None = None,
        activation_fn: Any = nn.ReLU,
        features_extractor_class: Any = FlattenExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise ConfigurationError(
                f"{type(self).__name__} needs Discrete actions, got {describe_space(action_space)}."
            )
        super().__init__(
            observation_space,
            action_space,
            features_extractor_class=features_extractor_class,
            features_extractor_kwargs=features_extractor_kwargs,
            normalize_images=normalize_images,
            optimizer_class=optimizer_class,
            optimizer_kwargs=optimizer_kwargs,
        )
        if net_arch is None:
            net_arch = [] if self.features_extractor_class is NatureCNN else [64, 64]
        self.net_arch = list(net_arch)
        self.activation_fn = resolve_named_class(
            "activation", activation_fn, field="policy_kwargs.activation_fn"
        )
        self.q_net = self.make_q_net()
        self.q_net_target = self.make_q_net()
        self.q_net_target.load_state_dict(self.q_net.state_dict())
        freeze(self.q_net_target)

    def make_q_net(self) -> QNetwork:
        return QNetwork(self.make_features_extractor(), self.n_actions, self.net_arch, self.activation_fn)

    def train(self, mode: bool = True) -> DQNPolicy:
        """Switch the online network; the target network always stays in eval mode (as in SB3)."""
        super().train(mode)
        self.q_net_target.train(False)
        return self

    def q_values(self, obs: Any) -> torch.Tensor:
        """``Q(s, .)`` for a batch of raw observations."""
        return self.q_net(self.preprocess(obs))

    def forward(self, obs: Any, deterministic: bool = True) -> torch.Tensor:
        """Greedy actions (epsilon-greedy exploration is the algorithm's job)."""
        return self.q_values(obs).argmax(dim=1)


class CnnPolicy(DQNPolicy):
    """``DQNPolicy`` with the NatureCNN features extractor, for image observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", NatureCNN)
        super().__init__(observation_space, action_space, **kwargs)


class MultiInputPolicy(DQNPolicy):
    """``DQNPolicy`` with the CombinedExtractor, for Dict observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(observation_space, action_space, **kwargs)


DQN_POLICY_ALIASES: dict[str, Any] = {
    "MlpPolicy": DQNPolicy,
    "CnnPolicy": CnnPolicy,
    "MultiInputPolicy": MultiInputPolicy,
}
