"""Policy classes with SB3's constructor signature, over lit-sb3's own policies.

SB3's policies take ``(observation_space, action_space, lr_schedule, *args, **kwargs)``, and custom policies
written for SB3 subclass them that way and override ``_build_mlp_extractor`` (setting
``self.mlp_extractor``). :func:`sb3_signature` makes a subclass of a lit-sb3 policy that accepts exactly
that: ``lr_schedule`` (kept as an attribute; lit-sb3 algorithms build the optimizer themselves) and the
positional arguments in SB3's order. Algorithms pass ``lr_schedule`` to any policy whose constructor takes
one, so both kinds of policies train the same.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ACTOR_CRITIC_ORDER", "MASKABLE_ORDER", "OFF_POLICY_ORDERS", "RECURRENT_ORDER", "sb3_signature"]

# SB3's positional parameters after (observation_space, action_space, lr_schedule).
ACTOR_CRITIC_ORDER = (
    "net_arch",
    "activation_fn",
    "ortho_init",
    "use_sde",
    "log_std_init",
    "full_std",
    "use_expln",
    "squash_output",
    "features_extractor_class",
    "features_extractor_kwargs",
    "share_features_extractor",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
)
MASKABLE_ORDER = (
    "net_arch",
    "activation_fn",
    "ortho_init",
    "features_extractor_class",
    "features_extractor_kwargs",
    "share_features_extractor",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
)
RECURRENT_ORDER = (
    *ACTOR_CRITIC_ORDER,
    "lstm_hidden_size",
    "n_lstm_layers",
    "shared_lstm",
    "enable_critic_lstm",
    "lstm_kwargs",
)

_SAC_ORDER = (
    "net_arch",
    "activation_fn",
    "use_sde",
    "log_std_init",
    "use_expln",
    "clip_mean",
    "features_extractor_class",
    "features_extractor_kwargs",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
)
_Q_ORDER = (
    "net_arch",
    "activation_fn",
    "features_extractor_class",
    "features_extractor_kwargs",
    "normalize_images",
    "optimizer_class",
    "optimizer_kwargs",
)
# The off-policy policies' positional parameters, by lit-sb3 algorithm class name.
OFF_POLICY_ORDERS: dict[str, tuple[str, ...]] = {
    "DQN": _Q_ORDER,
    "QRDQN": ("n_quantiles", *_Q_ORDER),
    "SAC": (*_SAC_ORDER, "n_critics", "share_features_extractor"),
    "TQC": (*_SAC_ORDER, "n_quantiles", "n_critics", "share_features_extractor"),
    "TD3": (*_Q_ORDER, "n_critics", "share_features_extractor"),
    "DDPG": (*_Q_ORDER, "n_critics", "share_features_extractor"),
    "CrossQ": (
        "net_arch",
        "activation_fn",
        "batch_norm",
        "batch_norm_momentum",
        "batch_norm_eps",
        "renorm_warmup_steps",
        *_SAC_ORDER[2:],
        "n_critics",
        "share_features_extractor",
    ),
}


def off_policy_policy(algorithm: Any, alias: str, name: str, module: str) -> type:
    """``algorithm``'s policy ``alias`` with SB3's signature for that algorithm's policies."""
    return sb3_signature(algorithm.policy_aliases[alias], OFF_POLICY_ORDERS[algorithm.__name__], name, module)


def sb3_signature(base: Any, order: tuple[str, ...], name: str, module: str) -> type:
    """A subclass of ``base`` named ``name`` (in ``module``) with SB3's constructor signature."""

    def __init__(
        self: Any,
        observation_space: Any,
        action_space: Any,
        lr_schedule: Any = None,
        *args: Any,
        **kwargs: Any,
    ) -> None:
        if len(args) > len(order):
            raise TypeError(f"{name}() takes at most {len(order) + 3} positional arguments")
        for key, value in zip(order, args):
            if key in kwargs:
                raise TypeError(f"{name}() got multiple values for argument {key!r}")
            kwargs[key] = value
        base.__init__(self, observation_space, action_space, **kwargs)
        self.lr_schedule = lr_schedule

    def build_mlp_extractor(self: Any) -> Any:
        """lit-sb3's hook calls SB3's override point, ``_build_mlp_extractor``."""
        return self._build_mlp_extractor()

    def _build_mlp_extractor(self: Any) -> Any:
        """SB3's override point: build ``self.mlp_extractor`` (SB3 subclasses set it and return None)."""
        return base.build_mlp_extractor(self)

    namespace = {
        "__init__": __init__,
        "__module__": module,
        "__qualname__": name,
        "__doc__": f"{base.__name__} with SB3's constructor signature (observation_space, action_space, "
        f"lr_schedule, {', '.join(order)}).",
    }
    if hasattr(base, "build_mlp_extractor"):
        namespace["build_mlp_extractor"] = build_mlp_extractor
        namespace["_build_mlp_extractor"] = _build_mlp_extractor
    return type(name, (base,), namespace)
