"""TQC policies: SAC's squashed-Gaussian actor with ``n_critics`` quantile critics (sb3-contrib's layout).

Each critic network maps ``(s, a)`` to ``n_quantiles`` atoms of the return distribution ``Z(s, a)``
instead of one Q-value; everything else (the actor, features extractors, target critic, action scaling)
is SAC's policy, which ``TQCPolicy`` subclasses.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.sdk import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    ContinuousCritic,
    NatureCNN,
    OffPolicyNetArch,
    check_positive_int,
    create_mlp,
    freeze,
)
from lit_sb3_sac.policies import SACPolicy

__all__ = ["TQC_POLICY_ALIASES", "CnnPolicy", "MultiInputPolicy", "QuantileCritic", "TQCPolicy"]


class QuantileCritic(ContinuousCritic):
    """``n_critics`` networks, each giving ``n_quantiles`` atoms of ``Z(s, a)`` at levels ``(i + 0.5) / N``.

    A ``ContinuousCritic`` whose heads output ``n_quantiles`` values instead of one, so target updates
    (including a features extractor borrowed from the actor) work as for SAC's critics.

    Args:
        features_extractor: its own, or the actor's when ``share_features_extractor`` (then the critic
            loss does not train it, as in sb3-contrib).
        action_dim: flat action size.
        net_arch: hidden layer sizes of each network.
        activation_fn: activation class.
        n_critics: number of networks.
        n_quantiles: atoms per network.
        share_features_extractor: the extractor belongs to the actor.
    """

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
        n_critics: int = 2,
        n_quantiles: int = 25,
        share_features_extractor: bool = False,
    ) -> None:
        check_positive_int("n_quantiles", n_quantiles)

        def quantile_head(
            in_dim: int, _: int, arch: Sequence[int], activation: type[nn.Module]
        ) -> nn.Sequential:
            return create_mlp(in_dim, n_quantiles, arch, activation)

        super().__init__(
            features_extractor,
            action_dim,
            net_arch,
            activation_fn,
            n_critics,
            share_features_extractor,
            make_mlp=quantile_head,
        )
        self.n_quantiles = n_quantiles
        self.quantiles_total = n_critics * n_quantiles

    def make_target(self, features_extractor: BaseFeaturesExtractor | None = None) -> QuantileCritic:
        """A frozen copy initialised to this critic's weights, with its own copy of the features extractor
        (or borrowing ``features_extractor``)."""
        borrowed = features_extractor is not None
        extractor = features_extractor if features_extractor is not None else copy.deepcopy(self.extractor)
        target = QuantileCritic(
            extractor,
            self.action_dim,
            self.net_arch,
            self.activation_fn,
            self.n_critics,
            self.n_quantiles,
            share_features_extractor=borrowed,
        )
        for mine, theirs in zip(self.q_networks, target.q_networks):
            theirs.load_state_dict(mine.state_dict())
        return freeze(target)

    def forward(self, obs: Any, actions: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        """Quantiles ``(batch, n_critics, n_quantiles)`` for observations (preprocessed or raw)."""
        q_input = torch.cat([self.features(obs), actions], dim=1)
        return self.q_values(q_input).transpose(0, 1)


class TQCPolicy(SACPolicy):
    """Actor ``actor`` (SAC's), quantile critic ``critic`` and its target ``critic_target``.

    Args:
        observation_space / action_space: the environment's spaces; actions must be a bounded Box.
        net_arch: hidden sizes, a list for actor and critics or ``dict(pi=[...], qf=[...])``.
            Default ``[256, 256]``.
        activation_fn: activation class or name. Default ReLU.
        n_quantiles: atoms of the return distribution per critic network. Default 25.
        n_critics: number of critic networks. Default 2 (as sb3-contrib; the paper uses 5).
        share_features_extractor: the critic uses the actor's features extractor (trained by the actor
            loss only).
        **kwargs: the rest of ``SACPolicy``'s arguments (features extractor, optimizer, gSDE settings).
    """

    critic: QuantileCritic  # SAC's critics, with quantile heads
    critic_target: QuantileCritic

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: OffPolicyNetArch = None,
        activation_fn: Any = nn.ReLU,
        n_quantiles: int = 25,
        n_critics: int = 2,
        share_features_extractor: bool = False,
        **kwargs: Any,
    ) -> None:
        check_positive_int("n_quantiles", n_quantiles)
        # Read by make_critic, which SACPolicy's constructor calls (a plain attribute may be set before
        # nn.Module's __init__).
        self.n_quantiles = n_quantiles
        super().__init__(
            observation_space,
            action_space,
            net_arch=net_arch,
            activation_fn=activation_fn,
            n_critics=n_critics,
            share_features_extractor=share_features_extractor,
            **kwargs,
        )

    def make_critic(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module],
        n_critics: int,
        share_features_extractor: bool,
    ) -> QuantileCritic:
        """SAC's critic with quantile heads, built once (sb3-contrib's construction order: a seed gives its
        initial weights)."""
        return QuantileCritic(
            features_extractor,
            action_dim,
            net_arch,
            activation_fn,
            n_critics,
            self.n_quantiles,
            share_features_extractor,
        )


class CnnPolicy(TQCPolicy):
    """``TQCPolicy`` with the NatureCNN features extractor, for image observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", NatureCNN)
        super().__init__(observation_space, action_space, **kwargs)


class MultiInputPolicy(TQCPolicy):
    """``TQCPolicy`` with the CombinedExtractor, for Dict observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(observation_space, action_space, **kwargs)


TQC_POLICY_ALIASES: dict[str, Any] = {
    "MlpPolicy": TQCPolicy,
    "CnnPolicy": CnnPolicy,
    "MultiInputPolicy": MultiInputPolicy,
}
