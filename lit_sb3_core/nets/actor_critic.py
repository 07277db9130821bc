"""The actor-critic policy (MlpPolicy, CnnPolicy, MultiInputPolicy) and helpers to name classes in configs.

Policies are plain ``nn.Module``s that live inside an algorithm (a LightningModule), so Lightning moves
them between devices and DDP wraps them. Their constructor arguments (``policy_kwargs``) follow SB3's
names: ``net_arch``, ``activation_fn``, ``ortho_init``, ``log_std_init``, ``full_std``, ``use_expln``,
``squash_output``, ``features_extractor_class``, ``features_extractor_kwargs``,
``share_features_extractor``, ``normalize_images``, ``optimizer_class``, ``optimizer_kwargs``. Classes
may be given as objects or as names ("tanh", "NatureCNN", "torch.nn:ReLU") so configs and saved
hyperparameters stay plain JSON; names resolve through the registry's allow-list only
(:mod:`lit_sb3_core.registry.names`). Given the same seed, a policy starts from the same weights as SB3's.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, cast

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError, ConflictingOptionsError
from lit_sb3_core.foundation.spaces import (
    ObsPreprocessor,
    channels_first_space,
    describe_space,
    scale_action,
    unscale_action,
)
from lit_sb3_core.nets.distributions import (
    BernoulliDistribution,
    CategoricalDistribution,
    DiagGaussianDistribution,
    Distribution,
    MultiCategoricalDistribution,
    StateDependentNoise,
)
from lit_sb3_core.nets.policy_api import PolicyAPI
from lit_sb3_core.nets.torch_layers import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    FlattenExtractor,
    MlpExtractor,
    NatureCNN,
    NetArch,
    plain_forward,
)
from lit_sb3_core.registry.names import class_path, resolve_named_class

__all__ = [
    "ACTOR_CRITIC_ALIASES",
    "ActorCriticCnnPolicy",
    "ActorCriticPolicy",
    "BaseFeaturesExtractor",
    "FlattenExtractor",
    "MlpExtractor",
    "MultiInputActorCriticPolicy",
    "NetArch",
    "class_to_string",
    "resolve_class",
    "resolve_subclass",
]

# Short names written into hyperparameters for torch's common activations (readable files; they resolve
# through the registry, where core registers every torch activation).
_ACTIVATION_NAMES: dict[type[nn.Module], str] = {
    nn.Tanh: "tanh",
    nn.ReLU: "relu",
    nn.ELU: "elu",
    nn.LeakyReLU: "leaky_relu",
    nn.GELU: "gelu",
    nn.SiLU: "silu",
    nn.SELU: "selu",
}
# Which kind of name a policy_kwargs field holds, for the deprecated resolve_class.
_FIELD_KINDS = {
    "activation_fn": "activation",
    "features_extractor_class": "features_extractor",
    "optimizer_class": "optimizer",
    "replay_buffer_class": "buffer",
    "policy": "policy",
}


def class_to_string(value: Any) -> Any:
    """Classes become names files can store: ``nn.ReLU`` -> ``"relu"``, others -> ``"module:Name"``.

    :func:`~lit_sb3_core.registry.names.resolve_named_class` reads both back (registered names and paths
    of registered classes, or of classes from modules the loading program has imported).
    """
    if isinstance(value, type):
        name = _ACTIVATION_NAMES.get(value)
        return name if name is not None else class_path(value)
    return value


def resolve_class(value: Any, kind: str = "class") -> Any:
    """Deprecated: use ``resolve_named_class(kind, value, field=...)``; this one goes through it too."""
    warnings.warn(
        "resolve_class is deprecated and goes away in lit-sb3 0.3: use "
        "lit_sb3_core.sdk.resolve_named_class(kind, value, field=...), which resolves names from files "
        "through the registry's allow-list only.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _resolve_field(value, kind, None)


def resolve_subclass(value: Any, base: type, kind: str, example: str = "") -> type:
    """Deprecated: use ``resolve_named_class(kind, value, field=..., base=...)``."""
    warnings.warn(
        "resolve_subclass is deprecated and goes away in lit-sb3 0.3: use "
        "lit_sb3_core.sdk.resolve_named_class(kind, value, field=..., base=...).",
        DeprecationWarning,
        stacklevel=2,
    )
    return _resolve_field(value, kind, base)


def _resolve_field(value: Any, field: str, base: type | None) -> Any:
    kind = _FIELD_KINDS.get(field.rpartition(".")[2], "activation" if base is nn.Module else "policy")
    if kind == "policy" and base is None:
        base = nn.Module
    return resolve_named_class(kind, value, field=field, base=base)


class ActorCriticPolicy(PolicyAPI, nn.Module):
    """Actor-critic policy for on-policy algorithms (PPO, A2C, TRPO, ...).

    features extractor -> MLP extractor (pi / vf branches) -> action head and value head. Observations
    are preprocessed in the policy (one-hot, image scaling, channel-last images transposed to CxHxW).

    Args:
        observation_space: observation space of the environment.
        action_space: action space (Box, Discrete, MultiDiscrete or MultiBinary).
        net_arch: hidden sizes; a list for both branches or ``dict(pi=[...], vf=[...])``.
            Default ``dict(pi=[64, 64], vf=[64, 64])``, no hidden layer (``[]``) after NatureCNN.
        activation_fn: activation class or name. Default ``nn.Tanh``.
        ortho_init: orthogonal initialisation with SB3's gains (sqrt(2) hidden, 0.01 policy, 1 value), of
            the features extractor(s), ``mlp_extractor``, ``action_net`` and ``value_net`` only: a head a
            subclass adds after ``super().__init__()`` keeps torch's default initialisation unless it
            initialises it itself.
        log_std_init: initial log standard deviation for Box actions (of the gSDE weights with gSDE).
        features_extractor_class / features_extractor_kwargs: how observations become features.
            Default: the policy's ``default_features_extractor_class`` (FlattenExtractor for MlpPolicy,
            NatureCNN for CnnPolicy, CombinedExtractor for MultiInputPolicy).
        share_features_extractor: one extractor for actor and critic (else one each).
        normalize_images: divide uint8 image observations by 255 (``False``: images are used as they are,
            and NatureCNN/CombinedExtractor accept any 3-D Box as an image).
        optimizer_class / optimizer_kwargs: optimizer the algorithm builds over these parameters
            (default Adam, with ``eps=1e-5`` as SB3 when no kwargs are given).
        use_sde: generalized State-Dependent Exploration for Box actions (the algorithm passes it).
        full_std / use_expln / squash_output / learn_features: gSDE settings, see
            ``lit_sb3_core.nets.distributions.StateDependentNoise``; ``squash_output`` needs ``use_sde``.

    Attributes (the extension points: a subclass adds heads after ``super().__init__()``, see docs/sdk.md):
        features_extractor / vf_features_extractor: observations to features, as SB3 names them:
            ``vf_features_extractor`` is the critic's own, or ``features_extractor`` itself when the extractor
            is shared (``share_features_extractor``); ``pi_features_extractor`` is ``features_extractor``.
            The aliases are plain attributes, so each module is registered, and saved, once.
        mlp_extractor: the actor's and the critic's MLPs on the features; ``mlp_extractor.latent_dim_pi``
            and ``latent_dim_vf`` are their output widths, the input width of a new head.
        action_net: the actor's head (the distribution's parameters); ``log_std`` its learned log standard
            deviation for Box actions (None otherwise).
        value_net: the critic's head, ``Linear(latent_dim_vf, 1)``.
        optimizer_class / optimizer_kwargs: what the algorithm's ``make_optimizer`` builds optimizers with.
    """

    default_features_extractor_class: ClassVar[type[BaseFeaturesExtractor]] = FlattenExtractor

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: NetArch = None,
        activation_fn: Any = nn.Tanh,
        ortho_init: bool = True,
        log_std_init: float = 0.0,
        features_extractor_class: Any = None,
        features_extractor_kwargs: dict[str, Any] | None = None,
        share_features_extractor: bool = True,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        use_sde: bool = False,
        full_std: bool = True,
        use_expln: bool = False,
        squash_output: bool = False,
        learn_features: bool = False,
    ) -> None:
        super().__init__()
        if use_sde and not isinstance(action_space, spaces.Box):
            raise ConfigurationError(
                f"use_sde=True (gSDE) needs Box actions; got {describe_space(action_space)}. Drop use_sde."
            )
        if squash_output and not use_sde:
            raise ConflictingOptionsError(
                "squash_output=True is only available with gSDE: pass use_sde=True too."
            )
        self.observation_space = observation_space
        self.action_space = action_space
        self.normalize_images = normalize_images
        self.ortho_init = ortho_init
        self.log_std_init = log_std_init
        self.use_sde = use_sde
        self.squash_output = squash_output
        self.share_features_extractor = share_features_extractor
        self.optimizer_class = resolve_named_class(
            "optimizer", optimizer_class, field="policy_kwargs.optimizer_class"
        )
        if optimizer_kwargs is None:
            optimizer_kwargs = {"eps": 1e-5} if self.optimizer_class is torch.optim.Adam else {}
        self.optimizer_kwargs = dict(optimizer_kwargs)
        self.activation_fn = resolve_named_class(
            "activation", activation_fn, field="policy_kwargs.activation_fn"
        )
        if features_extractor_class is None:
            features_extractor_class = self.default_features_extractor_class
        self.features_extractor_class = resolve_named_class(
            "features_extractor",
            features_extractor_class,
            field="policy_kwargs.features_extractor_class",
            # A class passed in Python may be any module that sets features_dim (checked when it is
            # built); one named in a file must derive from BaseFeaturesExtractor.
            base=None if isinstance(features_extractor_class, str) else nn.Module,
        )
        self.features_extractor_kwargs = dict(features_extractor_kwargs or {})
        if (
            not normalize_images
            and isinstance(self.features_extractor_class, type)
            and issubclass(self.features_extractor_class, (NatureCNN, CombinedExtractor))
        ):
            self.features_extractor_kwargs["normalized_image"] = True
        self.net_arch = self._default_net_arch(net_arch)

        # Build in SB3's order, so that the same seed gives the same initial weights.
        self.obs_preprocessor = ObsPreprocessor(observation_space, normalize_images)
        self.features_extractor = self._make_features_extractor()
        self.features_dim = self.features_extractor.features_dim  # SB3's attribute, read by custom extractors
        # SB3's names for the same modules, not registered again (state_dict, parameters() list each once).
        object.__setattr__(self, "pi_features_extractor", self.features_extractor)
        if share_features_extractor:
            object.__setattr__(self, "vf_features_extractor", self.features_extractor)
        else:
            self.vf_features_extractor = self._make_features_extractor()
        built = self.build_mlp_extractor()
        if built is not None:  # SB3-style overrides (lit_sb3.common.policies) set self.mlp_extractor instead
            self.mlp_extractor = built
        self.sde_noise: StateDependentNoise | None = None
        if use_sde:
            self.sde_noise = StateDependentNoise(
                int(np.prod(action_space.shape or ())),
                full_std=full_std,
                use_expln=use_expln,
                squash_output=squash_output,
                learn_features=learn_features,
            )
        self.build_action_head(self.mlp_extractor.latent_dim_pi, log_std_init)
        self.value_net = nn.Linear(self.mlp_extractor.latent_dim_vf, 1)
        if ortho_init:
            self._orthogonal_init()

    # construction -------------------------------------------------------------------------------
    def _default_net_arch(self, net_arch: Any) -> NetArch:
        if isinstance(net_arch, (list, tuple)) and net_arch and isinstance(net_arch[0], dict):
            warnings.warn(
                "net_arch=[dict(pi=..., vf=...)] is the pre-1.8 SB3 form (shared layers are gone): pass "
                "net_arch=dict(pi=..., vf=...) directly.",
                UserWarning,
                stacklevel=3,
            )
            net_arch = net_arch[0]
        if net_arch is None:
            return [] if self.features_extractor_class is NatureCNN else {"pi": [64, 64], "vf": [64, 64]}
        if not isinstance(net_arch, (list, tuple, dict)):
            raise ConfigurationError(
                f"net_arch must be a list of layer sizes or dict(pi=[...], vf=[...]), got {net_arch!r}."
            )
        return net_arch  # type: ignore[return-value]

    def build_mlp_extractor(self) -> MlpExtractor:
        """The pi/vf MLPs on the features; recurrent policies override it to feed them their LSTM output."""
        return MlpExtractor(self.features_extractor.features_dim, self.net_arch, self.activation_fn)

    def _make_features_extractor(self) -> BaseFeaturesExtractor:
        cls = self.features_extractor_class
        try:
            extractor = cls(channels_first_space(self.observation_space), **self.features_extractor_kwargs)
        except TypeError as exc:
            raise ConfigurationError(
                f"Cannot build features extractor {class_to_string(cls)} with features_extractor_kwargs="
                f"{self.features_extractor_kwargs}: {exc}"
            ) from None
        if not isinstance(getattr(extractor, "features_dim", None), int):
            raise ConfigurationError(
                f"features_extractor_class {class_to_string(cls)} must set an int 'features_dim' (subclass "
                "lit_sb3_core.nets.torch_layers.BaseFeaturesExtractor)."
            )
        return extractor

    def build_action_head(self, latent_dim: int, log_std_init: float) -> None:
        space = self.action_space
        self.log_std: nn.Parameter | None = None
        if self.sde_noise is not None:
            self.action_net, self.log_std = self.sde_noise.make_head(latent_dim, log_std_init, latent_dim)
        elif isinstance(space, spaces.Box):
            self.action_net, self.log_std = DiagGaussianDistribution.make_head(
                latent_dim, int(np.prod(space.shape)), log_std_init
            )
        elif isinstance(space, spaces.Discrete):
            self.action_net = CategoricalDistribution.make_head(latent_dim, int(space.n))
        elif isinstance(space, spaces.MultiDiscrete):
            self.action_nvec = [int(n) for n in np.asarray(space.nvec).reshape(-1)]
            self.action_net = MultiCategoricalDistribution.make_head(latent_dim, self.action_nvec)
        elif isinstance(space, spaces.MultiBinary):
            self.action_net = BernoulliDistribution.make_head(latent_dim, int(np.prod(space.shape)))
        else:
            raise ConfigurationError(
                f"{type(self).__name__} does not support {describe_space(space)} actions; it supports Box, "
                "Discrete, MultiDiscrete and MultiBinary."
            )

    def _orthogonal_init(self) -> None:
        gains: list[tuple[nn.Module, float]] = [
            (self.mlp_extractor, np.sqrt(2)),
            (self.action_net, 0.01),
            (self.value_net, 1.0),
        ]
        if self.share_features_extractor:
            gains.insert(0, (self.features_extractor, np.sqrt(2)))
        else:
            gains += [(self.features_extractor, np.sqrt(2)), (self.vf_features_extractor, np.sqrt(2))]
        for module, gain in gains:
            for layer in module.modules():
                if isinstance(layer, (nn.Linear, nn.Conv2d)):
                    nn.init.orthogonal_(layer.weight, gain=gain)
                    if layer.bias is not None:
                        layer.bias.data.fill_(0.0)

    # gSDE and action scaling --------------------------------------------------------------------
    def reset_noise(self, n_envs: int = 1) -> None:
        """Resample gSDE's exploration matrices (one per env); the algorithm calls it during rollouts."""
        if self.sde_noise is None or self.log_std is None:
            raise RuntimeError("reset_noise() is only available with gSDE (use_sde=True).")
        self.sde_noise.sample_weights(self.log_std, batch_size=n_envs)

    def scale_action(self, action: np.ndarray) -> np.ndarray:
        """Box action from [low, high] to [-1, 1]."""
        box = cast(spaces.Box, self.action_space)  # gSDE and squashing are for Box actions only
        return scale_action(action, box.low, box.high)

    def unscale_action(self, scaled_action: np.ndarray) -> np.ndarray:
        """Box action from [-1, 1] (a squashed gSDE sample) to [low, high]."""
        box = cast(spaces.Box, self.action_space)
        return unscale_action(scaled_action, box.low, box.high)

    # forward passes -----------------------------------------------------------------------------
    # While an algorithm trains, it sets ``plain_calls`` when no module of the policy has hooks
    # (``lit_sb3_core.nets.torch_layers.hook_free``): the passes below then call ``forward`` methods directly.
    plain_calls: bool = False

    def _call(self, module: nn.Module, x: Any) -> Any:
        return plain_forward(module, x) if self.plain_calls else module(x)

    def extract_features(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Features for the actor and the critic (the same tensor when the extractor is shared)."""
        processed = self.obs_preprocessor(obs)
        pi_features = self._call(self.features_extractor, processed)
        if self.share_features_extractor:
            return pi_features, pi_features
        return pi_features, self._call(self.vf_features_extractor, processed)

    def distribution(self, latent_pi: torch.Tensor) -> Distribution:
        """The action distribution for the actor's latent (from ``latents``): ``action_net`` and, for Box
        actions, ``log_std``; see ``lit_sb3_core.sdk.Distribution`` for what each kind holds."""
        params = self._call(self.action_net, latent_pi)
        if self.log_std is not None:
            if self.sde_noise is not None:
                return self.sde_noise.distribution(params, self.log_std, latent_pi)
            return DiagGaussianDistribution(params, self.log_std)
        if isinstance(self.action_space, spaces.Discrete):
            return CategoricalDistribution(params)
        if isinstance(self.action_space, spaces.MultiDiscrete):
            return MultiCategoricalDistribution(params, self.action_nvec)
        return BernoulliDistribution(params)

    def latents(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """``(latent_pi, latent_vf)``: the actor's and the critic's latent vectors for ``obs`` (preprocessed,
        through the features extractor(s) and ``mlp_extractor``). A new head reads one of them."""
        pi_features, vf_features = self.extract_features(obs)
        mlp = self.mlp_extractor
        if self.plain_calls and type(mlp) is MlpExtractor:
            return plain_forward(mlp.policy_net, pi_features), plain_forward(mlp.value_net, vf_features)
        if self.share_features_extractor:
            return mlp(pi_features)
        return mlp.forward_actor(pi_features), mlp.forward_critic(vf_features)

    def forward(
        self, obs: Any, deterministic: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample actions; return ``(actions, values, log_prob)`` as collected into a rollout.

        Actions come flat, one row per observation: ``(batch,)`` for Discrete, ``(batch, dim)`` otherwise;
        with ``squash_output`` they are in [-1, 1] (``unscale_action`` maps them to the bounds).
        """
        latent_pi, latent_vf = self.latents(obs)
        actions, log_prob = self.distribution(latent_pi).actions_and_log_prob(deterministic)
        return actions, self._call(self.value_net, latent_vf).squeeze(-1), log_prob

    def evaluate_actions(
        self, obs: Any, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-likelihood and entropy of given actions: what the loss needs."""
        latent_pi, latent_vf = self.latents(obs)
        dist = self.distribution(latent_pi)
        return self._call(self.value_net, latent_vf).squeeze(-1), dist.log_prob(actions), dist.entropy()

    def get_distribution(self, obs: Any) -> Distribution:
        pi_features, _ = self.extract_features(obs)
        return self.distribution(self.mlp_extractor.forward_actor(pi_features))

    def predict_values(self, obs: Any) -> torch.Tensor:
        _, vf_features = self.extract_features(obs)
        mlp = self.mlp_extractor
        if self.plain_calls and type(mlp) is MlpExtractor:
            return plain_forward(self.value_net, plain_forward(mlp.value_net, vf_features)).squeeze(-1)
        return self.value_net(mlp.forward_critic(vf_features)).squeeze(-1)

    def predict_actions(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions only (what ``model.predict`` needs)."""
        return self.get_distribution(obs).get_actions(deterministic)


class ActorCriticCnnPolicy(ActorCriticPolicy):
    """CnnPolicy: ActorCriticPolicy with a NatureCNN extractor (512 features, no hidden layers after it)."""

    default_features_extractor_class: ClassVar[type[BaseFeaturesExtractor]] = NatureCNN


class MultiInputActorCriticPolicy(ActorCriticPolicy):
    """MultiInputPolicy: ActorCriticPolicy for Dict observations (CombinedExtractor: CNN per image key)."""

    default_features_extractor_class: ClassVar[type[BaseFeaturesExtractor]] = CombinedExtractor


# Policy aliases shared by the actor-critic algorithms (PPO, A2C, TRPO, ...), as SB3 names them.
ACTOR_CRITIC_ALIASES: dict[str, Any] = {
    "MlpPolicy": ActorCriticPolicy,
    "CnnPolicy": ActorCriticCnnPolicy,
    "MultiInputPolicy": MultiInputActorCriticPolicy,
}
