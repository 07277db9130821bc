"""``WideMlpPolicy``: one wide, layer-normalised ReLU layer shared by actor and critic, then small heads.

A custom network for PPO's actor-critic policy, built by swapping the features extractor: the rest of
``ActorCriticPolicy`` (action distributions for every action space, value head, orthogonal
initialisation, optimizer settings) is inherited unchanged.
"""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.sdk import ActorCriticPolicy, BaseFeaturesExtractor, flat_feature_dim

__all__ = ["WideExtractor", "WideMlpPolicy"]


class WideExtractor(BaseFeaturesExtractor):
    """Flattened observation -> Linear(width) -> LayerNorm -> ReLU.

    Args:
        observation_space: a non-Dict space (Discrete observations arrive one-hot encoded).
        width: the size of the wide layer, which is also ``features_dim``.
    """

    def __init__(self, observation_space: spaces.Space, width: int = 256) -> None:
        super().__init__(observation_space, width)
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(flat_feature_dim(observation_space), width),
            nn.LayerNorm(width),
            nn.ReLU(),
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.net(observations)


class WideMlpPolicy(ActorCriticPolicy):
    """PPO's actor-critic policy on a :class:`WideExtractor` trunk.

    Args:
        observation_space: the environment's observation space.
        action_space: the environment's action space.
        width: size of the shared wide layer.
        net_arch: actor/critic layers after it; default ``dict(pi=[64], vf=[64])``.
        **kwargs: every other ``ActorCriticPolicy`` argument (``activation_fn``, ``ortho_init``, ...).
    """

    default_features_extractor_class = WideExtractor

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        width: int = 256,
        net_arch: Any = None,
        **kwargs: Any,
    ) -> None:
        kwargs["features_extractor_kwargs"] = {
            "width": width,
            **(kwargs.get("features_extractor_kwargs") or {}),
        }
        super().__init__(
            observation_space,
            action_space,
            net_arch={"pi": [64], "vf": [64]} if net_arch is None else net_arch,
            **kwargs,
        )
