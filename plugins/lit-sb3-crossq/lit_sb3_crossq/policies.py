"""CrossQ policies: SAC's squashed-Gaussian actor and ``n_critics`` Q networks, with Batch Renorm layers and
no target networks (sb3-contrib's layout: a ``BatchRenorm`` before every linear layer)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    BaseFeaturesExtractor,
    ContinuousCritic,
    FlattenExtractor,
    OffPolicyNetArch,
    OffPolicyPolicy,
    SquashedGaussianActor,
    actor_critic_arch,
    check_non_negative_int,
    check_number,
    check_positive_number,
    create_mlp,
    describe_space,
    resolve_named_class,
)
from lit_sb3_crossq.batch_renorm import BatchRenorm

__all__ = ["CROSSQ_POLICY_ALIASES", "CrossQActor", "CrossQCritic", "CrossQPolicy", "renorm_mlp"]

NormFactory = Callable[[int], nn.Module]


def renorm_mlp(
    input_dim: int,
    output_dim: int,
    net_arch: Sequence[int],
    activation_fn: type[nn.Module],
    norm: NormFactory,
) -> nn.Sequential:
    """``create_mlp`` with a normalization layer in front of every linear layer, the output layer included."""
    layers: list[nn.Module] = []
    last = input_dim
    for size in net_arch:
        layers += [norm(last), nn.Linear(last, int(size)), activation_fn()]
        last = int(size)
    if output_dim > 0:
        layers += [norm(last), nn.Linear(last, output_dim)]
    return nn.Sequential(*layers)


class CrossQActor(SquashedGaussianActor):
    """SAC's tanh-squashed Gaussian actor; with ``norm``, its hidden layers are Batch-Renormalized.

    The latent network normalizes before each hidden linear layer and once more after the last hidden
    activation, so the linear ``mu`` and ``log_std`` heads (or gSDE's) get normalized inputs too
    (sb3-contrib's layout).

    Args:
        features_extractor: maps preprocessed observations to features.
        action_dim: flat action size.
        net_arch: hidden layer sizes.
        activation_fn: activation class.
        norm: builds a normalization layer for a given width; None for the plain SAC actor.
        **sde_kwargs: ``use_sde``, ``log_std_init``, ``full_std``, ``use_expln``, ``clip_mean``: gSDE, as
            ``SquashedGaussianActor``.
    """

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
        norm: NormFactory | None = None,
        **sde_kwargs: Any,
    ) -> None:
        # Each network is built once, in sb3-contrib's order (latent layers, then the heads): a seed then
        # gives sb3-contrib's initial weights.
        make_mlp = create_mlp if norm is None else partial(renorm_mlp, norm=norm)
        super().__init__(
            features_extractor, action_dim, net_arch, activation_fn, make_mlp=make_mlp, **sde_kwargs
        )
        if norm is not None and len(net_arch) > 0:
            self.latent_pi.append(norm(int(net_arch[-1])))  # no random numbers: the order stays sb3-contrib's


class CrossQCritic(ContinuousCritic):
    """``n_critics`` independent ``Q(s, a)`` networks; with ``norm``, each is Batch-Renormalized.

    There is no target copy: CrossQ bootstraps from these networks themselves.

    Args:
        features_extractor: its own, or the actor's when ``share_features_extractor`` (then the critic
            loss does not train it).
        action_dim: flat action size.
        net_arch: hidden layer sizes of each Q network.
        activation_fn: activation class.
        n_critics: number of Q networks.
        share_features_extractor: the extractor belongs to the actor.
        norm: builds a normalization layer for a given width; None for SAC's critics.
    """

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
        n_critics: int = 2,
        share_features_extractor: bool = False,
        norm: NormFactory | None = None,
    ) -> None:
        super().__init__(
            features_extractor,
            action_dim,
            net_arch,
            activation_fn,
            n_critics,
            share_features_extractor,
            make_mlp=create_mlp if norm is None else partial(renorm_mlp, norm=norm),
        )

    def make_target(self, features_extractor: BaseFeaturesExtractor | None = None) -> ContinuousCritic:
        raise TypeError("CrossQ's critic has no target network: it bootstraps from itself.")


class CrossQPolicy(OffPolicyPolicy):
    """Actor ``actor`` and critic ``critic``, both Batch-Renormalized; no target networks.

    Args:
        observation_space / action_space: the environment's spaces; actions must be a bounded Box.
        net_arch: hidden sizes, a list for actor and critics or ``dict(pi=[...], qf=[...])``. Default
            ``dict(pi=[256, 256], qf=[1024, 1024])``: CrossQ's critics gain from width (the paper uses 2048).
        activation_fn: activation class or name. Default ReLU.
        batch_norm: put ``BatchRenorm`` layers in actor and critics (False: SAC's networks, no target).
        batch_norm_momentum: weight of each batch in the running statistics (Flax's 0.99 is 1 - 0.01).
        batch_norm_eps: added to variances in the normalization.
        renorm_warmup_steps: training forward passes of plain batch norm before renormalization starts,
            counted per layer (critic layers see one per gradient step, actor layers one per actor update).
        use_sde: explore with generalized State-Dependent Exploration (gSDE); ``CrossQ(use_sde=True)``
            passes it. ``log_std_init`` (-3), ``use_expln`` and ``clip_mean`` (2.0) only apply to it, as in
            sb3-contrib (see ``SquashedGaussianActor``).
        features_extractor_class / features_extractor_kwargs / normalize_images: see ``OffPolicyPolicy``.
        optimizer_class / optimizer_kwargs: optimizer of the actor and of the critic. Left as None, Adam and
            AdamW get ``betas=(0.5, 0.999)`` (the CrossQ paper's, as sb3-contrib); any dict is used as given.
        n_critics: number of Q networks (the bootstrap takes their minimum).
        share_features_extractor: the critic uses the actor's features extractor (trained by the actor
            loss only).
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
        batch_norm: bool = True,
        batch_norm_momentum: float = 0.01,
        batch_norm_eps: float = 0.001,
        renorm_warmup_steps: int = 100_000,
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
    ) -> None:
        if not isinstance(action_space, spaces.Box):
            raise ConfigurationError(
                f"{type(self).__name__} needs Box actions, got {describe_space(action_space)}."
            )
        _check_batch_norm_settings(batch_norm_momentum, batch_norm_eps, renorm_warmup_steps)
        optimizer_class = resolve_named_class(
            "optimizer", optimizer_class, field="policy_kwargs.optimizer_class"
        )
        if optimizer_kwargs is None and optimizer_class in (torch.optim.Adam, torch.optim.AdamW):
            optimizer_kwargs = {"betas": (0.5, 0.999)}
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
        self.use_sde, self.log_std_init, self.use_expln, self.clip_mean = (
            use_sde,
            log_std_init,
            use_expln,
            clip_mean,
        )
        self.share_features_extractor = share_features_extractor
        self.batch_norm = bool(batch_norm)
        if net_arch is None:
            actor_arch, critic_arch = [256, 256], [1024, 1024]
        else:
            actor_arch, critic_arch = actor_critic_arch(net_arch, [256, 256])
        activation = resolve_named_class("activation", activation_fn, field="policy_kwargs.activation_fn")
        norm: NormFactory | None = (
            partial(
                BatchRenorm,
                momentum=float(batch_norm_momentum),
                eps=float(batch_norm_eps),
                warmup_steps=int(renorm_warmup_steps),
            )
            if self.batch_norm
            else None
        )
        action_dim = int(np.prod(action_space.shape))
        self.actor = CrossQActor(
            self.make_features_extractor(),
            action_dim,
            actor_arch,
            activation,
            norm,
            use_sde=use_sde,
            log_std_init=log_std_init,
            use_expln=use_expln,
            clip_mean=clip_mean,
        )
        critic_extractor = (
            self.actor.features_extractor if share_features_extractor else self.make_features_extractor()
        )
        self.critic = CrossQCritic(
            critic_extractor, action_dim, critic_arch, activation, n_critics, share_features_extractor, norm
        )
        # The normalization layers, whose train/eval mode the update switches step by step.
        self.actor_norms: list[nn.Module] = [m for m in self.actor.modules() if isinstance(m, BatchRenorm)]
        self.critic_norms: list[nn.Module] = [m for m in self.critic.modules() if isinstance(m, BatchRenorm)]

    def forward(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions in [-1, 1]: tanh of the mean (deterministic) or of a Gaussian (or gSDE) sample."""
        return self.actor(self.preprocess(obs), deterministic)

    def reset_noise(self, n_envs: int = 1) -> None:
        """gSDE: draw new exploration matrices, one per environment (see ``SquashedGaussianActor``)."""
        self.actor.reset_noise(n_envs)


def _check_batch_norm_settings(momentum: Any, eps: Any, warmup_steps: Any) -> None:
    # momentum: the weight of each new batch in the running statistics (sb3-contrib's default 0.01);
    # warm-up: forward passes of plain batch norm before renormalizing.
    check_number("batch_norm_momentum", momentum, minimum=0, exclusive_minimum=True, maximum=1)
    check_positive_number("batch_norm_eps", eps)
    check_non_negative_int("renorm_warmup_steps", warmup_steps)


CROSSQ_POLICY_ALIASES: dict[str, Any] = {"MlpPolicy": CrossQPolicy}
