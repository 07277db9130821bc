"""Networks shared by off-policy algorithms: Q networks, continuous critics, actors and target updates.

The building blocks follow Stable-Baselines3's layouts (``qf0``/``qf1`` critics, ``latent_pi``/``mu``/
``log_std`` for the SAC actor, ``mu`` for the TD3 actor), defaults (ReLU, PyTorch's default init, Adam
without SB3's on-policy ``eps=1e-5``) and argument names, so ``policy_kwargs`` written for SB3 work here:

* ``QNetwork``: ``Q(s, .)`` for every discrete action (DQN; QR-DQN outputs quantiles with it).
* ``ContinuousCritic``: ``n_critics`` independent ``Q(s, a)`` networks (SAC, TD3, TQC, CrossQ, DDPG),
  evaluated as one batched computation while training (``lit_sb3_core.nets.ensemble``).
* ``SquashedGaussianActor``: a tanh-squashed diagonal Gaussian (SAC, TQC, CrossQ), or gSDE (``use_sde``).
* ``DeterministicActor``: ``tanh(mu(s))`` (TD3, DDPG).
* ``OffPolicyPolicy``: the base of the per-algorithm policies that bundle these with their target copies;
  it owns observation preprocessing and the scaling of Box actions to and from [-1, 1].
* ``polyak_update``: the soft target update ``target <- (1 - tau) * target + tau * online``, one fused
  ``torch._foreach_lerp_`` over all parameters.

Policies keep their target networks as submodules, so model files and checkpoints carry them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, TypeVar, cast

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_layer_sizes, check_number, check_positive_int
from lit_sb3_core.foundation.spaces import (
    ObsPreprocessor,
    channels_first_space,
    describe_space,
    scale_action,
    unscale_action,
)
from lit_sb3_core.nets.distributions import StateDependentNoise, StateDependentNoiseDistribution
from lit_sb3_core.nets.ensemble import ensemble_forward, is_stackable
from lit_sb3_core.nets.policy_api import PolicyAPI, PolicyNetwork, PolicyPart
from lit_sb3_core.nets.torch_layers import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    FlattenExtractor,
    NatureCNN,
    plain_forward,
)
from lit_sb3_core.registry.names import resolve_named_class

__all__ = [
    "LOG_STD_MAX",
    "LOG_STD_MIN",
    "ContinuousCritic",
    "DeterministicActor",
    "OffPolicyNetArch",
    "OffPolicyPolicy",
    "QNetwork",
    "SquashedGaussianActor",
    "actor_critic_arch",
    "create_mlp",
    "freeze",
    "is_identity_extractor",
    "polyak_update",
    "update_target",
]

# Clamp of the SAC actor's log standard deviation (SB3's values).
LOG_STD_MIN, LOG_STD_MAX = -20.0, 2.0
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
# Inside the log-determinant of tanh: keeps log(1 - tanh(x)^2) finite (SB3's epsilon).
_TANH_EPS = 1e-6

OffPolicyNetArch = list[int] | dict[str, list[int]] | None
# Builds a network as ``create_mlp(input_dim, output_dim, net_arch, activation_fn)`` does: the hook through
# which subclasses (CrossQ's Batch-Renormalized networks) change the layers without building them twice.
MlpFactory = Callable[[int, int, Sequence[int], type[nn.Module]], nn.Sequential]


def create_mlp(
    input_dim: int,
    output_dim: int,
    net_arch: Sequence[int],
    activation_fn: type[nn.Module] = nn.ReLU,
    squash_output: bool = False,
) -> nn.Sequential:
    """Linear layers of sizes ``net_arch`` with activations, then a linear output (none if ``output_dim <= 0``)."""
    layers: list[nn.Module] = []
    last = input_dim
    for size in net_arch:
        layers += [nn.Linear(last, int(size)), activation_fn()]
        last = int(size)
    if output_dim > 0:
        layers.append(nn.Linear(last, output_dim))
    if squash_output:
        layers.append(nn.Tanh())
    return nn.Sequential(*layers)


def actor_critic_arch(net_arch: OffPolicyNetArch, default: list[int]) -> tuple[list[int], list[int]]:
    """``[..]`` for both networks or ``dict(pi=[..], qf=[..])`` (SB3's off-policy form) -> (actor, critic)."""
    if net_arch is None:
        return list(default), list(default)
    if isinstance(net_arch, dict):
        missing = {"pi", "qf"} - set(net_arch)
        unknown = set(net_arch) - {"pi", "qf"}
        if missing or unknown:
            raise ConfigurationError(
                f"An off-policy net_arch dict needs exactly the keys 'pi' (actor) and 'qf' (critic), got "
                f"{sorted(net_arch)}: e.g. dict(pi=[256, 256], qf=[400, 300])."
            )
        return check_layer_sizes("net_arch['pi']", net_arch["pi"], "[256, 256]"), check_layer_sizes(
            "net_arch['qf']", net_arch["qf"], "[256, 256]"
        )
    sizes = check_layer_sizes("net_arch", net_arch, "[256, 256]")
    return sizes, list(sizes)


def is_identity_extractor(extractor: nn.Module) -> bool:
    """A ``FlattenExtractor`` over observations that preprocess to flat vectors already: skippable."""
    if type(extractor) is not FlattenExtractor:
        return False
    space = extractor.observation_space
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)):
        return True  # one-hot encoded into a flat vector
    return isinstance(space, (spaces.Box, spaces.MultiBinary)) and len(space.shape) == 1


ModuleT = TypeVar("ModuleT", bound=nn.Module)
CriticT = TypeVar("CriticT", bound="ContinuousCritic")


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def freeze(module: ModuleT) -> ModuleT:
    """Exclude ``module`` from autograd and put it in eval mode (target networks)."""
    module.requires_grad_(False)
    module.train(False)
    return module


@torch.no_grad()
def polyak_update(params: Sequence[torch.Tensor], target_params: Sequence[torch.Tensor], tau: float) -> None:
    """``target <- (1 - tau) * target + tau * params`` for every pair, in one foreach call."""
    if len(params) != len(target_params):
        raise ValueError(f"polyak_update got {len(params)} parameters but {len(target_params)} targets.")
    if not params:
        return
    if tau == 1.0:
        torch._foreach_copy_(list(target_params), list(params))
    else:
        torch._foreach_lerp_(list(target_params), list(params), float(tau))


def update_target(online: nn.Module, target: nn.Module, tau: float) -> None:
    """Polyak-update ``target``'s parameters toward ``online``'s; batch-norm running statistics are copied.

    A critic that borrows the actor's features extractor counts that extractor's parameters as its own
    (``ContinuousCritic.named_parameters``), as its target does its extractor: as in SB3, whose
    ``polyak_update(critic.parameters(), critic_target.parameters(), tau)`` this is.
    """
    polyak_update(list(online.parameters()), list(target.parameters()), tau)
    stats = [b for name, b in online.named_buffers() if "running_" in name]
    if stats:
        targets = [b for name, b in target.named_buffers() if "running_" in name]
        polyak_update(stats, targets, 1.0)


class OffPolicyPolicy(PolicyAPI, nn.Module):
    """Base of off-policy policies: preprocessing, features extractors, action scaling, optimizer settings.

    Subclasses build their networks in ``__init__`` and implement ``forward(obs, deterministic)``, which
    returns actions in the policy's own space: indices for Discrete, values in [-1, 1] for Box (what the
    replay buffer stores). ``predict_actions`` maps those to the environment's bounds.

    Args:
        observation_space / action_space: the environment's spaces.
        features_extractor_class / features_extractor_kwargs: how observations become features
            (``FlattenExtractor`` for MlpPolicy, ``NatureCNN`` for CnnPolicy, ``CombinedExtractor`` for
            MultiInputPolicy); classes may be import strings.
        normalize_images: divide uint8 image observations by 255.
        optimizer_class / optimizer_kwargs: the optimizer algorithms build over this policy's networks
            (Adam by default; fused on CPU/GPU when the kwargs leave ``fused``/``foreach`` unset).
        squash_output: Box actions are bounded to [-1, 1] and rescaled to the space's bounds, which must
            be finite.
    """

    # Box actions with squash_output: the bounds, as (non-persistent) buffers registered in __init__.
    action_low: torch.Tensor
    action_high: torch.Tensor

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        features_extractor_class: Any = FlattenExtractor,
        features_extractor_kwargs: dict[str, Any] | None = None,
        normalize_images: bool = True,
        optimizer_class: Any = torch.optim.Adam,
        optimizer_kwargs: dict[str, Any] | None = None,
        squash_output: bool = False,
    ) -> None:
        super().__init__()
        self.observation_space = observation_space
        self.action_space = action_space
        self.normalize_images = normalize_images
        self.features_extractor_class = resolve_named_class(
            "features_extractor",
            features_extractor_class,
            field="policy_kwargs.features_extractor_class",
            base=None if isinstance(features_extractor_class, str) else nn.Module,
        )
        self.features_extractor_kwargs = dict(features_extractor_kwargs or {})
        if not normalize_images and self.features_extractor_class in (NatureCNN, CombinedExtractor):
            self.features_extractor_kwargs.setdefault("normalized_image", True)
        self.optimizer_class = resolve_named_class(
            "optimizer", optimizer_class, field="policy_kwargs.optimizer_class"
        )
        self.optimizer_kwargs = dict(optimizer_kwargs or {})
        self.preprocess = ObsPreprocessor(observation_space, normalize_images)
        self._box_actions = isinstance(action_space, spaces.Box)
        if isinstance(action_space, spaces.Box) and squash_output:
            low, high = np.asarray(action_space.low), np.asarray(action_space.high)
            if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))):
                raise ConfigurationError(
                    f"{type(self).__name__} squashes actions into the action space's bounds, but "
                    f"{describe_space(action_space)} is unbounded. Wrap the env with "
                    "gymnasium.wrappers.ClipAction over a bounded Box, or rescale its actions."
                )
            self.register_buffer(
                "action_low", torch.as_tensor(low, dtype=torch.float32).reshape(-1), persistent=False
            )
            self.register_buffer(
                "action_high", torch.as_tensor(high, dtype=torch.float32).reshape(-1), persistent=False
            )

    # construction helpers -----------------------------------------------------------------------------
    def make_features_extractor(self) -> BaseFeaturesExtractor:
        """A new features extractor for the space the networks see (channel-first images)."""
        return self.features_extractor_class(
            channels_first_space(self.observation_space), **self.features_extractor_kwargs
        )

    @property
    def n_actions(self) -> int:
        """Discrete actions: their number; Box actions: their flat dimension."""
        if isinstance(self.action_space, spaces.Discrete):
            return int(self.action_space.n)
        return int(np.prod(self.action_space.shape or ()))

    # actions --------------------------------------------------------------------------------------------
    def scale_action(self, actions: torch.Tensor) -> torch.Tensor:
        """Environment bounds -> [-1, 1]."""
        return scale_action(actions, self.action_low, self.action_high)

    def unscale_action(self, actions: torch.Tensor) -> torch.Tensor:
        """[-1, 1] -> environment bounds."""
        return unscale_action(actions, self.action_low, self.action_high)

    def forward(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions in the policy's space for a batch of raw observations."""
        raise NotImplementedError

    def predict_actions(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        """Actions in the environment's space (what ``model.predict`` returns)."""
        return self.to_env_bounds(self(obs, deterministic))

    def to_env_bounds(self, actions: torch.Tensor) -> torch.Tensor:
        """Actions in the policy's space mapped to the environment's (squashed Box: [-1, 1] to its bounds)."""
        if self._box_actions and hasattr(self, "action_low"):
            return self.unscale_action(actions)
        return actions


class QNetwork(PolicyPart, nn.Module):
    """``n_outputs`` values per observation from a features extractor and an MLP (DQN's Q(s, .)).

    Args:
        features_extractor: maps preprocessed observations to features.
        n_outputs: outputs (number of actions; ``n_actions * n_quantiles`` for QR-DQN).
        net_arch: hidden layer sizes.
        activation_fn: activation class.
    """

    mode_free: ClassVar[bool] = True  # see lit_sb3_core.nets.torch_layers.ignores_training_mode

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        n_outputs: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
    ) -> None:
        super().__init__()
        self.features_extractor = features_extractor
        self.q_net = create_mlp(features_extractor.features_dim, n_outputs, net_arch, activation_fn)
        self._skip_extractor = is_identity_extractor(features_extractor)

    # Set during training while no hooks are registered (lit_sb3_core.nets.torch_layers.plain_calls): the layers'
    # forward methods are then called directly, which saves ~10 us of a ~40 us pass on CartPole.
    plain_calls: bool = False

    def forward(self, obs: Any) -> torch.Tensor:
        """Values for observations, preprocessed (training, where ``plain_calls`` skips the check) or raw."""
        if self.plain_calls:
            features = obs if self._skip_extractor else plain_forward(self.features_extractor, obs)
            return plain_forward(self.q_net, features)
        obs = self.network_input(obs)
        return self.q_net(obs if self._skip_extractor else self.features_extractor(obs))

    def part_actions(self, features_input: Any, deterministic: bool) -> torch.Tensor:
        """Greedy actions (SB3's ``model.q_net.predict``)."""
        return self(features_input).argmax(dim=1)


class ContinuousCritic(PolicyNetwork, nn.Module):
    """``n_critics`` independent ``Q(s, a)`` networks on shared features (clipped double-Q, TD3 paper).

    A critic that shares the actor's features extractor borrows it: the extractor stays a submodule of the
    actor only, so state dicts and model files hold its weights once, but ``parameters()``,
    ``named_parameters()`` and ``named_buffers()`` list it first, as ``features_extractor.*``, as SB3's
    critic (which registers it in both networks) does: ``polyak_update(critic.parameters(),
    critic_target.parameters(), tau)`` and parameter counts work as in SB3. Its optimizer gets
    ``optimizer_parameters()``, without the extractor, which the actor's loss trains (as in SB3).

    Args:
        features_extractor: its own, or the actor's when ``share_features_extractor`` (then the critic
            loss does not train it, as in SB3).
        action_dim: flat action size.
        net_arch: hidden layer sizes of each Q network.
        activation_fn: activation class.
        n_critics: number of Q networks.
        share_features_extractor: the extractor belongs to the actor.
        make_mlp: builds each Q network, called as ``create_mlp`` (the default) is. Layers are drawn
            from torch's generator in construction order, so a seed gives SB3's initial weights only
            when each network is built once, by this.
    """

    mode_free: ClassVar[bool] = True  # see lit_sb3_core.nets.torch_layers.ignores_training_mode

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
        n_critics: int = 2,
        share_features_extractor: bool = False,
        make_mlp: MlpFactory = create_mlp,
    ) -> None:
        super().__init__()
        check_positive_int("n_critics", n_critics)
        self.share_features_extractor = share_features_extractor
        self._skip_extractor = is_identity_extractor(features_extractor)
        if share_features_extractor:
            self._shared_extractor = [features_extractor]  # not a submodule: the actor owns it
        else:
            self.features_extractor = features_extractor
        self.n_critics = n_critics
        # What a copy needs (make_target, and subclasses that replace the heads).
        self.action_dim = action_dim
        self.net_arch = list(net_arch)
        self.activation_fn = activation_fn
        in_dim = features_extractor.features_dim + action_dim
        for index in range(n_critics):
            self.add_module(f"qf{index}", make_mlp(in_dim, 1, net_arch, activation_fn))
        self.q_networks: list[nn.Module] = [getattr(self, f"qf{index}") for index in range(n_critics)]
        self._stack_key: tuple[int, ...] = ()
        self._stack = False

    # Set during training while no hooks are registered (see lit_sb3_core.sdk.fast_path.plain_calls):
    # then the Q networks run as one batched computation when they are plain MLPs of one shape.
    plain_calls: bool = False
    # On CPUs the batched pass is no faster (one bmm costs the separate matrix multiplies, and stacking
    # copies the weights): off there unless switched on (lit_sb3_core.nets.ensemble).
    batch_on_cpu: bool = False

    def batched(self) -> bool:
        """Whether ``forward`` evaluates the Q networks together (``ensemble_forward``): while training
        without hooks, for plain MLPs of one shape, on accelerators (CPUs: ``batch_on_cpu``). Decided
        again whenever ``q_networks`` is replaced."""
        if not self.plain_calls:
            return False
        if not self.batch_on_cpu and next(self.q_networks[0].parameters()).device.type == "cpu":
            return False
        key = tuple(id(network) for network in self.q_networks)
        if key != self._stack_key:
            self._stack_key, self._stack = key, is_stackable(self.q_networks)
        return self._stack

    def q_values(self, q_input: torch.Tensor) -> torch.Tensor:
        """Every Q network on ``q_input`` (features and actions): ``(n_critics, batch, outputs)``."""
        if self.batched():
            return ensemble_forward(self.q_networks, q_input)
        return torch.stack([q_net(q_input) for q_net in self.q_networks])

    @property
    def features_extractor(self) -> BaseFeaturesExtractor:
        """SB3's ``critic.features_extractor``: its own, or (shared) the actor's, which is no submodule here."""
        if self.share_features_extractor:
            return self._shared_extractor[0]
        return cast(BaseFeaturesExtractor, self._modules["features_extractor"])

    @features_extractor.setter
    def features_extractor(self, extractor: BaseFeaturesExtractor) -> None:
        # nn.Module.__setattr__ registers a module itself (never calling this); kept for non-module setters.
        self._modules["features_extractor"] = extractor

    @property
    def extractor(self) -> BaseFeaturesExtractor:
        """The features extractor this critic reads: its own, or the actor's when shared."""
        return self._shared_extractor[0] if self.share_features_extractor else self.features_extractor

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, nn.Parameter]]:
        """Its parameters, a borrowed extractor's first (as ``features_extractor.*``, SB3's names)."""
        if self.share_features_extractor and recurse:
            yield from self._shared_extractor[0].named_parameters(
                _join(prefix, "features_extractor"), recurse, remove_duplicate
            )
        yield from super().named_parameters(prefix, recurse, remove_duplicate)

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, torch.Tensor]]:
        """Its buffers, a borrowed extractor's first (its batch-norm statistics go to the target, as SB3)."""
        if self.share_features_extractor and recurse:
            yield from self._shared_extractor[0].named_buffers(
                _join(prefix, "features_extractor"), recurse, remove_duplicate
            )
        yield from super().named_buffers(prefix, recurse, remove_duplicate)

    def optimizer_parameters(self) -> list[nn.Parameter]:
        """What the critic's optimizer trains: its parameters but a borrowed extractor's (the actor's)."""
        return [parameter for _, parameter in super().named_parameters()]

    def make_target(self, features_extractor: BaseFeaturesExtractor | None = None) -> ContinuousCritic:
        """A frozen copy initialised to this critic's weights, with its own copy of the features extractor,
        or borrowing ``features_extractor`` (TD3's shared extractor: the target actor's, as in SB3)."""
        return self._init_target(
            ContinuousCritic(
                self._target_extractor(features_extractor),
                self.action_dim,
                self.net_arch,
                self.activation_fn,
                self.n_critics,
                share_features_extractor=features_extractor is not None,
            )
        )

    def _target_extractor(self, borrowed: BaseFeaturesExtractor | None) -> BaseFeaturesExtractor:
        return borrowed if borrowed is not None else copy.deepcopy(self.extractor)

    def _init_target(self, target: CriticT) -> CriticT:
        """``target`` with this critic's Q-network weights, frozen."""
        for mine, theirs in zip(self.q_networks, target.q_networks):
            theirs.load_state_dict(mine.state_dict())
        return freeze(target)

    def features(self, obs: Any) -> torch.Tensor:
        """Features of observations, preprocessed or raw (see ``PolicyNetwork.network_input``)."""
        obs = self.network_input(obs)
        if self._skip_extractor:
            return obs
        if self.share_features_extractor:
            with torch.no_grad():
                return self._shared_extractor[0](obs)
        return self.features_extractor(obs)

    def forward(self, obs: Any, actions: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(Q_1(s, a), ..., Q_n(s, a))``, each ``(batch, 1)``, for observations (preprocessed or raw)."""
        q_input = torch.cat([self.features(obs), actions], dim=1)
        if self.batched():
            return tuple(ensemble_forward(self.q_networks, q_input).unbind(0))
        return tuple(q_net(q_input) for q_net in self.q_networks)

    def q1_forward(self, obs: Any, actions: torch.Tensor) -> torch.Tensor:
        """The first Q network only (TD3's actor loss); features carry no gradient."""
        with torch.no_grad():
            features = self.features(obs)
        return self.q_networks[0](torch.cat([features, actions], dim=1))


class SquashedGaussianActor(PolicyPart, nn.Module):
    """A diagonal Gaussian squashed by tanh into [-1, 1] (Haarnoja et al. 2018, appendix C).

    With ``use_sde`` it explores with generalized State-Dependent Exploration instead (gSDE, Raffin et al.
    2021, https://arxiv.org/abs/2005.05719): the noise is ``latent @ W`` for the last hidden layer's output
    ``latent`` and an exploration matrix ``W ~ N(0, std^2)`` that stays fixed until ``reset_noise``, so
    exploration is a smooth function of the state. ``std`` comes from a learned state-independent
    parameter ``log_std`` (latent size x action size); the latent features are trained through the noise
    too. The exploration matrices are not saved: they are drawn again, from the loaded ``log_std``,
    whenever a state dict is loaded (algorithms also redraw them while collecting, see SAC).

    Args:
        features_extractor: maps preprocessed observations to features.
        action_dim: flat action size.
        net_arch: hidden layer sizes.
        activation_fn: activation class.
        use_sde: explore with gSDE instead of independent Gaussian noise per step.
        log_std_init: gSDE only: initial log standard deviation of the exploration matrix entries.
        full_std: gSDE only: one std per (latent feature, action) pair; False: one per latent feature.
        use_expln: gSDE only: map ``log_std`` to std with ``expln`` (``exp`` below 0, ``log1p(x) + 1`` above,
            which grows slowly) instead of ``exp``.
        clip_mean: gSDE only: clip the Gaussian's mean to [-clip_mean, clip_mean] before tanh (a Hardtanh
            after ``mu``, against numerical trouble from saturated tanh); 0 disables it.
        make_mlp: builds the hidden layers ``latent_pi`` (output size -1), called as ``create_mlp`` (the
            default) is; built before the heads, as in SB3, so a seed gives SB3's initial weights.
    """

    mode_free: ClassVar[bool] = True  # see lit_sb3_core.nets.torch_layers.ignores_training_mode

    log_std: Any  # an nn.Linear head, or gSDE's log-std Parameter

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
        use_sde: bool = False,
        log_std_init: float = -3.0,
        full_std: bool = True,
        use_expln: bool = False,
        clip_mean: float = 2.0,
        make_mlp: MlpFactory = create_mlp,
    ) -> None:
        super().__init__()
        self.features_extractor = features_extractor
        self.latent_pi = make_mlp(features_extractor.features_dim, -1, net_arch, activation_fn)
        last = net_arch[-1] if len(net_arch) > 0 else features_extractor.features_dim
        self.action_dim = action_dim
        self._skip_extractor = is_identity_extractor(features_extractor)
        self.use_sde = bool(use_sde)
        self.sde_noise: StateDependentNoise | None = None
        if use_sde:
            check_number("log_std_init", log_std_init)
            check_number("clip_mean", clip_mean)
            self.sde_noise = StateDependentNoise(
                action_dim, full_std=full_std, use_expln=use_expln, squash_output=True, learn_features=True
            )
            mu, self.log_std = self.sde_noise.make_head(last, float(log_std_init), last)
            self.mu = nn.Sequential(mu, nn.Hardtanh(-clip_mean, clip_mean)) if clip_mean > 0 else mu
            self.register_load_state_dict_post_hook(_redraw_noise_after_load)
        else:
            self.mu = nn.Linear(last, action_dim)
            self.log_std = nn.Linear(last, action_dim)

    def latent(self, obs: Any) -> torch.Tensor:
        """The last hidden layer's output for observations, preprocessed or raw (``network_input``)."""
        obs = self.network_input(obs)
        return self.latent_pi(obs if self._skip_extractor else self.features_extractor(obs))

    def distribution_params(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and clamped log standard deviation of the Gaussian before squashing (not with gSDE)."""
        latent = self.latent(obs)
        # The density math stays in float32 under bf16 autocast: 1 - tanh(x)^2 rounds to 0 in bf16.
        return self.mu(latent).float(), self.log_std(latent).float().clamp(LOG_STD_MIN, LOG_STD_MAX)

    def forward(self, obs: Any, deterministic: bool = False) -> torch.Tensor:
        if self.sde_noise is not None:
            return self._sde_forward(obs, deterministic)
        mean, log_std = self.distribution_params(obs)
        if deterministic:
            return torch.tanh(mean)
        return torch.tanh(mean + log_std.exp() * torch.randn_like(mean))

    def action_log_prob(
        self, obs: Any, noise: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterised sample and its log-likelihood ``(batch,)`` under the squashed distribution.

        ``noise``: the standard normal draw ``(batch, action_dim)`` to use instead of drawing one here (a
        compiled update takes its random numbers as inputs, drawn as this method would draw them); not with
        gSDE, whose noise is its exploration matrices.
        """
        if self.sde_noise is not None:
            if noise is not None:
                raise ConfigurationError(
                    "action_log_prob(noise=...) gives the Gaussian's draw; with gSDE (use_sde=True) the noise "
                    "is the exploration matrices: call reset_noise() and pass no noise."
                )
            self._check_noise_drawn_for_training()
            return self.sde_distribution(obs).sample_and_log_prob()
        mean, log_std = self.distribution_params(obs)
        if noise is None:
            noise = torch.randn_like(mean)
        actions = torch.tanh(mean + log_std.exp() * noise)
        # Gaussian log-density at mean + std * noise is -noise^2 / 2 - log_std - log(sqrt(2 pi)), summed;
        # the change of variables through tanh subtracts log(1 - tanh^2 + eps), written as SB3 writes it:
        # where tanh saturates, 1 - tanh^2 is a difference of nearly equal numbers, and another spelling
        # (log1p(eps - tanh^2)) rounds differently, by 1e-4 at |tanh| = 0.9999.
        correction = torch.log(1.0 - actions.square() + _TANH_EPS)
        log_prob = (-0.5 * noise.square() - log_std - correction).sum(dim=1)
        return actions, log_prob - self.action_dim * _LOG_SQRT_2PI

    # gSDE -----------------------------------------------------------------------------------------------
    def _sde_forward(self, obs: Any, deterministic: bool) -> torch.Tensor:
        assert self.sde_noise is not None
        latent = self.latent(obs)
        mean = self.mu(latent).float()  # float32 under bf16 autocast, as distribution_params
        if deterministic:
            return torch.tanh(mean)
        return torch.tanh(mean + self.sde_noise.noise(latent))

    def sde_distribution(self, obs: Any) -> StateDependentNoiseDistribution:
        """The squashed gSDE distribution for observations (preprocessed or raw), with the current noise matrices."""
        if self.sde_noise is None:
            raise RuntimeError("sde_distribution() is only available with gSDE (use_sde=True).")
        latent = self.latent(obs)
        # float32 under bf16 autocast: the pre-tanh value (mean + noise) and so the tanh correction stay exact.
        return self.sde_noise.distribution(self.mu(latent).float(), self.log_std, latent)

    def reset_noise(self, batch_size: int = 1) -> None:
        """Draw new exploration matrices: one per environment (``batch_size``) and one shared.

        Drawn with gradients enabled (a training step), the shared matrix is a reparameterised sample, so
        the actor loss also trains ``log_std`` through the sampled actions, as in SB3.
        """
        if self.sde_noise is None:
            raise RuntimeError("reset_noise() is only available with gSDE (use_sde=True).")
        self.sde_noise.sample_weights(self.log_std, batch_size=batch_size)

    def _check_noise_drawn_for_training(self) -> None:
        """A differentiable sample needs a matrix drawn with gradients (else log std learns nothing from it)."""
        matrix = self.sde_noise.exploration_mat if self.sde_noise is not None else None
        if (
            matrix is not None
            and torch.is_grad_enabled()
            and self.log_std.requires_grad
            and not matrix.requires_grad
        ):
            raise RuntimeError(
                "gSDE: the actor's exploration matrix was drawn without gradients (while collecting, or at "
                "load), but action_log_prob is building a graph for a gradient step. Draw a new one first, "
                "before every gradient step: actor.reset_noise() (SAC and its subclasses: "
                "self.reset_actor_noise())."
            )

    def get_std(self) -> torch.Tensor:
        """Standard deviations of the exploration matrix entries (latent size x action size), gSDE only."""
        if self.sde_noise is None:
            raise RuntimeError("get_std() is only available with gSDE (use_sde=True).")
        return self.sde_noise.get_std(self.log_std)


def _redraw_noise_after_load(actor: SquashedGaussianActor, incompatible_keys: Any) -> None:
    """Exploration matrices drawn from the initial ``log_std`` would be stale once weights are loaded."""
    with torch.no_grad():
        actor.reset_noise()


class DeterministicActor(PolicyPart, nn.Module):
    """``tanh(MLP(features))``: the deterministic policy of TD3 and DDPG.

    Args:
        features_extractor: maps preprocessed observations to features.
        action_dim: flat action size.
        net_arch: hidden layer sizes.
        activation_fn: activation class.
    """

    mode_free: ClassVar[bool] = True  # see lit_sb3_core.nets.torch_layers.ignores_training_mode

    def __init__(
        self,
        features_extractor: BaseFeaturesExtractor,
        action_dim: int,
        net_arch: Sequence[int],
        activation_fn: type[nn.Module] = nn.ReLU,
    ) -> None:
        super().__init__()
        self.features_extractor = features_extractor
        self.mu = create_mlp(
            features_extractor.features_dim, action_dim, net_arch, activation_fn, squash_output=True
        )
        self._skip_extractor = is_identity_extractor(features_extractor)

    def forward(self, obs: Any) -> torch.Tensor:
        obs = self.network_input(obs)
        return self.mu(obs if self._skip_extractor else self.features_extractor(obs))

    def part_actions(self, features_input: Any, deterministic: bool) -> torch.Tensor:
        """Actions in [-1, 1] (SB3's ``model.actor.predict``; no exploration noise)."""
        return self(features_input)
