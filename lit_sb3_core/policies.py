"""Policy building blocks: feature extractors, the MLP extractor and the actor-critic policy.

Policies are plain ``nn.Module``s that live inside an algorithm (a LightningModule), so Lightning moves
them between devices and DDP wraps them. Their constructor arguments (``policy_kwargs``) follow SB3's
names: ``net_arch``, ``activation_fn``, ``ortho_init``, ``log_std_init``, ``features_extractor_class``,
``features_extractor_kwargs``, ``share_features_extractor``, ``normalize_images``, ``optimizer_class``,
``optimizer_kwargs``. Classes may be given as objects or as strings ("tanh", "torch.nn:ReLU") so configs
and saved hyperparameters stay plain JSON.
"""

from __future__ import annotations

import importlib
from typing import Any, Union

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
)
from lit_sb3_core.spaces import flat_feature_dim, preprocess_obs

__all__ = [
    "BaseFeaturesExtractor",
    "FlattenExtractor",
    "MlpExtractor",
    "ActorCriticPolicy",
    "resolve_class",
    "class_to_string",
    "NetArch",
    "ACTOR_CRITIC_ALIASES",
]

NetArch = Union[list[int], dict[str, list[int]], None]

_ACTIVATIONS: dict[str, type[nn.Module]] = {
    "tanh": nn.Tanh,
    "relu": nn.ReLU,
    "elu": nn.ELU,
    "leaky_relu": nn.LeakyReLU,
    "gelu": nn.GELU,
    "silu": nn.SiLU,
    "selu": nn.SELU,
}


def resolve_class(value: Any, kind: str = "class") -> Any:
    """Accept a class or its name (``"relu"`` for activations, ``"package.module:Name"`` otherwise)."""
    if not isinstance(value, str):
        return value
    if value.lower() in _ACTIVATIONS:
        return _ACTIVATIONS[value.lower()]
    module_name, sep, attr = value.partition(":")
    if not sep:
        module_name, _, attr = value.rpartition(".")
    if not module_name:
        raise ValueError(
            f"Cannot resolve {kind} {value!r}: use a class, one of {sorted(_ACTIVATIONS)}, "
            "or an import path such as 'torch.nn:ReLU'."
        )
    try:
        return getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"Cannot resolve {kind} {value!r}: {exc}") from None


def class_to_string(value: Any) -> Any:
    """Inverse of ``resolve_class`` for classes: ``nn.ReLU`` -> ``"torch.nn.modules.activation:ReLU"``."""
    if isinstance(value, type):
        for name, cls in _ACTIVATIONS.items():
            if cls is value:
                return name
        return f"{value.__module__}:{value.__qualname__}"
    return value


class BaseFeaturesExtractor(nn.Module):
    """Maps preprocessed observations to a flat feature vector of size ``features_dim``."""

    def __init__(self, observation_space: spaces.Space, features_dim: int) -> None:
        super().__init__()
        self.observation_space = observation_space
        self.features_dim = features_dim


class FlattenExtractor(BaseFeaturesExtractor):
    """The identity on flat vectors: what MlpPolicy uses."""

    def __init__(self, observation_space: spaces.Space) -> None:
        super().__init__(observation_space, flat_feature_dim(observation_space))
        self.flatten = nn.Flatten()

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.flatten(observations)


def _mlp(in_dim: int, sizes: list[int], activation_fn: type[nn.Module]) -> tuple[nn.Sequential, int]:
    layers: list[nn.Module] = []
    for size in sizes:
        layers += [nn.Linear(in_dim, size), activation_fn()]
        in_dim = size
    return nn.Sequential(*layers), in_dim


class MlpExtractor(nn.Module):
    """Separate actor and critic MLPs on top of the features (``net_arch=dict(pi=[..], vf=[..])``).

    A plain list gives both networks that architecture, as SB3 does since 1.8.
    """

    def __init__(self, feature_dim: int, net_arch: NetArch, activation_fn: type[nn.Module]) -> None:
        super().__init__()
        if net_arch is None:
            net_arch = {"pi": [64, 64], "vf": [64, 64]}
        if isinstance(net_arch, dict):
            unknown = set(net_arch) - {"pi", "vf"}
            if unknown:
                raise ValueError(f"net_arch keys must be 'pi' and 'vf', got unknown {sorted(unknown)}.")
            pi_sizes, vf_sizes = list(net_arch.get("pi", [])), list(net_arch.get("vf", []))
        else:
            pi_sizes = vf_sizes = list(net_arch)
        self.policy_net, self.latent_dim_pi = _mlp(feature_dim, pi_sizes, activation_fn)
        self.value_net, self.latent_dim_vf = _mlp(feature_dim, vf_sizes, activation_fn)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.policy_net(features), self.value_net(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class ActorCriticPolicy(nn.Module):
    """Actor-critic policy for on-policy algorithms (PPO, A2C, TRPO, ...).

    features extractor -> MLP extractor (pi / vf branches) -> action head and value head.

    Args:
        observation_space: observation space of the environment.
        action_space: action space (Box, Discrete, MultiDiscrete or MultiBinary).
        net_arch: hidden sizes; a list for both branches or ``dict(pi=[...], vf=[...])``.
            Default ``dict(pi=[64, 64], vf=[64, 64])``.
        activation_fn: activation class or name. Default ``nn.Tanh``.
        ortho_init: orthogonal initialisation with SB3's gains (sqrt(2) hidden, 0.01 policy, 1 value).
        log_std_init: initial log standard deviation for Box actions.
        features_extractor_class / features_extractor_kwargs: how observations become features.
        share_features_extractor: one extractor for actor and critic (else one each).
        normalize_images: divide uint8 image observations by 255.
        optimizer_class / optimizer_kwargs: optimizer the algorithm builds over these parameters
            (SB3's on-policy default: Adam with ``eps=1e-5``).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: NetArch = None,
        activation_fn: Any = nn.Tanh,
        ortho_init: bool = True,
        log_std_init: float = 0.0,
        features_extractor_class: Any = FlattenExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        share_features_extractor: bool = True,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        use_sde: bool = False,
    ) -> None:
        super().__init__()
        if use_sde:
            raise NotImplementedError(
                "gSDE (use_sde=True) is not available yet in lit-sb3; use the default diagonal Gaussian."
            )
        self.observation_space = observation_space
        self.action_space = action_space
        self.normalize_images = normalize_images
        self.optimizer_class = resolve_class(optimizer_class, "optimizer_class")
        self.optimizer_kwargs = dict(optimizer_kwargs) if optimizer_kwargs is not None else {"eps": 1e-5}
        activation = resolve_class(activation_fn, "activation_fn")
        extractor_cls = resolve_class(features_extractor_class, "features_extractor_class")
        extractor_kwargs = dict(features_extractor_kwargs or {})

        self.features_extractor = extractor_cls(observation_space, **extractor_kwargs)
        self.share_features_extractor = share_features_extractor
        if share_features_extractor:
            self.vf_features_extractor = None
        else:
            self.vf_features_extractor = extractor_cls(observation_space, **extractor_kwargs)
        features_dim = self.features_extractor.features_dim
        self.mlp_extractor = MlpExtractor(features_dim, net_arch, activation)
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        self._build_action_head(self.mlp_extractor.latent_dim_pi, log_std_init)
        if ortho_init:
            self._orthogonal_init()

    # construction -------------------------------------------------------------------------------
    def _build_action_head(self, latent_dim: int, log_std_init: float) -> None:
        space = self.action_space
        self.log_std: nn.Parameter | None = None
        if isinstance(space, spaces.Box):
            self.action_net, self.log_std = DiagGaussianDistribution.make_head(
                latent_dim, int(np.prod(space.shape)), log_std_init
            )
        elif isinstance(space, spaces.Discrete):
            self.action_net = CategoricalDistribution.make_head(latent_dim, int(space.n))
        elif isinstance(space, spaces.MultiDiscrete):
            self._nvec = [int(n) for n in np.asarray(space.nvec).reshape(-1)]
            self.action_net = MultiCategoricalDistribution.make_head(latent_dim, self._nvec)
        elif isinstance(space, spaces.MultiBinary):
            self.action_net = BernoulliDistribution.make_head(latent_dim, int(np.prod(space.shape)))
        else:
            raise NotImplementedError(f"ActorCriticPolicy does not support {type(space).__name__} actions.")

    def _orthogonal_init(self) -> None:
        gains: list[tuple[nn.Module, float]] = [
            (self.features_extractor, np.sqrt(2)),
            (self.mlp_extractor, np.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ]
        if self.vf_features_extractor is not None:
            gains.append((self.vf_features_extractor, np.sqrt(2)))
        for module, gain in gains:
            for layer in module.modules():
                if isinstance(layer, (nn.Linear, nn.Conv2d)):
                    nn.init.orthogonal_(layer.weight, gain=gain)
                    if layer.bias is not None:
                        layer.bias.data.fill_(0.0)

    # forward passes -----------------------------------------------------------------------------
    def extract_features(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Features for the actor and the critic (the same tensor when the extractor is shared)."""
        processed = preprocess_obs(obs, self.observation_space, self.normalize_images)
        pi_features = self.features_extractor(processed)
        if self.vf_features_extractor is None:
            return pi_features, pi_features
        return pi_features, self.vf_features_extractor(processed)

    def distribution(self, latent_pi: torch.Tensor) -> Distribution:
        params = self.action_net(latent_pi)
        if self.log_std is not None:
            return DiagGaussianDistribution(params, self.log_std)
        if isinstance(self.action_space, spaces.Discrete):
            return CategoricalDistribution(params)
        if isinstance(self.action_space, spaces.MultiDiscrete):
            return MultiCategoricalDistribution(params, self._nvec)
        return BernoulliDistribution(params)

    def _latents(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        pi_features, vf_features = self.extract_features(obs)
        if self.vf_features_extractor is None:
            return self.mlp_extractor(pi_features)
        return self.mlp_extractor.forward_actor(pi_features), self.mlp_extractor.forward_critic(vf_features)

    def forward(self, obs: Any, deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample actions; return ``(actions, values, log_prob)`` as collected into a rollout."""
        latent_pi, latent_vf = self._latents(obs)
        dist = self.distribution(latent_pi)
        actions = dist.get_actions(deterministic)
        return actions, self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions)

    def evaluate_actions(
        self, obs: Any, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-likelihood and entropy of given actions: what the loss needs."""
        latent_pi, latent_vf = self._latents(obs)
        dist = self.distribution(latent_pi)
        return self.value_net(latent_vf).squeeze(-1), dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs: Any) -> Distribution:
        pi_features, _ = self.extract_features(obs)
        return self.distribution(self.mlp_extractor.forward_actor(pi_features))

    def predict_values(self, obs: Any) -> torch.Tensor:
        _, vf_features = self.extract_features(obs)
        return self.value_net(self.mlp_extractor.forward_critic(vf_features)).squeeze(-1)

    def predict_actions(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions only (what ``model.predict`` needs)."""
        return self.get_distribution(obs).get_actions(deterministic)


# Policy aliases shared by the actor-critic algorithms (PPO, A2C, TRPO, ...), as SB3 names them.
ACTOR_CRITIC_ALIASES: dict[str, Any] = {"MlpPolicy": ActorCriticPolicy}
