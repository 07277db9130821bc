"""Feature extractors and the MLP extractor: the network trunks policies are built from.

A features extractor maps preprocessed observations (see ``lit_sb3_core.foundation.spaces.ObsPreprocessor``) to a
flat vector of ``features_dim`` numbers; the MLP extractor then splits into actor and critic branches.
Architectures, defaults and parameter names follow Stable-Baselines3, so ``policy_kwargs`` written for SB3
(``features_extractor_class=NatureCNN``, ``features_extractor_kwargs=dict(features_dim=256)``) mean the
same here. Extractors receive the space the network sees: channel-last images arrive as CxHxW.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator
from typing import ClassVar

import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError, ImageSpaceError
from lit_sb3_core.foundation.checks import check_layer_sizes, check_positive_int
from lit_sb3_core.foundation.spaces import describe_space, flat_feature_dim, is_image_space

__all__ = [
    "BaseFeaturesExtractor",
    "CombinedExtractor",
    "FlattenExtractor",
    "MlpExtractor",
    "NatureCNN",
    "NetArch",
    "evaluation_mode",
    "hook_free",
    "ignores_training_mode",
    "plain_forward",
    "reads_training_mode",
]

NetArch = list[int] | dict[str, list[int]] | None


def ignores_training_mode(cls: type) -> bool:
    """Whether ``cls`` itself declares ``mode_free = True``: its forward ignores ``training`` (no dropout, no
    batch statistics), so switching the mode need not touch it. A subclass declares it again for itself:
    it may add a layer that reads the mode."""
    return vars(cls).get("mode_free", False) is True


@functools.cache
def _mode_free_torch_modules() -> frozenset[type]:
    """torch's module types whose forward ignores ``training`` (no dropout, no batch statistics)."""
    return frozenset(
        {
            nn.Linear, nn.Conv2d, nn.Sequential, nn.ModuleDict, nn.ModuleList, nn.Flatten, nn.Identity, nn.ReLU,
            nn.Tanh, nn.ELU, nn.LeakyReLU, nn.GELU, nn.SiLU, nn.SELU, nn.Sigmoid, nn.Softplus, nn.LayerNorm,
        }
    )  # fmt: skip


def reads_training_mode(module: nn.Module) -> bool:
    """Whether ``module``'s own forward may depend on its ``training`` flag (the flag must then be set):
    false for torch's mode-free layers and for classes that declare ``mode_free`` (``ignores_training_mode``)."""
    cls = type(module)
    return cls not in _mode_free_torch_modules() and not ignores_training_mode(cls)


@contextlib.contextmanager
def evaluation_mode(module: nn.Module) -> Iterator[None]:
    """``module`` computes as after ``module.train(False)`` inside the block; every flag is as before after it.

    Only the submodules in training mode whose forward reads the flag are switched, directly:
    ``nn.Module.train`` walks every submodule through ``nn.Module.__setattr__``, and two such walks (off and
    back on) cost a SAC policy's ``predict`` more than its networks (~180 of 370 us per call)."""
    switched = [m for m in module.modules() if m.training and reads_training_mode(m)]
    for m in switched:
        object.__setattr__(m, "training", False)
    try:
        yield
    finally:
        for m in switched:
            object.__setattr__(m, "training", True)


# (kernel, stride) of NatureCNN's convolutions: the smallest image it accepts follows from these.
_NATURE_CONVS = ((8, 4), (4, 2), (3, 1))


class BaseFeaturesExtractor(nn.Module):
    """Maps preprocessed observations to a flat feature vector of size ``features_dim``."""

    def __init__(self, observation_space: spaces.Space, features_dim: int) -> None:
        super().__init__()
        check_positive_int(f"{type(self).__name__}(features_dim=...)", features_dim)
        self.observation_space = observation_space
        self._features_dim = int(features_dim)

    @property
    def features_dim(self) -> int:
        """Size of the features; SB3's extractors may set ``self._features_dim`` after ``__init__``."""
        return self._features_dim

    @features_dim.setter
    def features_dim(self, value: int) -> None:
        self._features_dim = int(value)


class FlattenExtractor(BaseFeaturesExtractor):
    """The identity on flat vectors (images and matrices are flattened): what MlpPolicy uses."""

    mode_free: ClassVar[bool] = True  # see ignores_training_mode

    def __init__(self, observation_space: spaces.Space) -> None:
        if isinstance(observation_space, spaces.Dict):
            raise ConfigurationError(
                "FlattenExtractor (MlpPolicy) cannot take Dict observations "
                f"{describe_space(observation_space)}: "
                "use policy='MultiInputPolicy' (features_extractor_class=CombinedExtractor)."
            )
        super().__init__(observation_space, flat_feature_dim(observation_space))
        self.flatten = nn.Flatten()

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return self.flatten(observations)


def _conv_output_size(size: int) -> int:
    for kernel, stride in _NATURE_CONVS:
        size = (size - kernel) // stride + 1
    return size


def _smallest_nature_input() -> int:
    size = 1
    for kernel, stride in reversed(_NATURE_CONVS):
        size = (size - 1) * stride + kernel
    return size


def _cpu_has_native_bf16() -> bool:
    """Whether this CPU computes bfloat16 in hardware (``avx512_bf16`` or AMX tiles). Without either, torch
    emulates bf16 and NatureCNN's bf16 trunk runs slower than float32. A torch without the probes counts as
    native (no warning rather than a wrong one)."""
    names = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    probes = [getattr(torch.cpu, name, None) for name in names]
    return any(probe is None or bool(probe()) for probe in probes)


@functools.cache
def _warn_if_bf16_is_emulated() -> None:
    """Once per process: the bf16 trunk on a CPU that emulates bf16 is a slowdown, not the speed-up asked for."""
    if not _cpu_has_native_bf16():
        warnings.warn(
            "NatureCNN(bf16=True) runs on a CPU without native bf16 (no avx512_bf16, no AMX): torch emulates "
            "bf16 here, so the trunk is slower than float32 (PPO on Breakout 0.79x SB3's speed on such an "
            "Intel Xeon, 1.54x on an AMD EPYC with avx512_bf16). Drop features_extractor_kwargs={'bf16': "
            "True} on this machine: the float32 default runs channels-last and is faster.",
            RuntimeWarning,
            stacklevel=2,
        )


class NatureCNN(BaseFeaturesExtractor):
    """The convolutional trunk of DQN (Mnih et al., Nature 2015): three convolutions and a linear layer.

    Expects channel-first (CxHxW) images; the policy transposes channel-last ones before they get here.

    Args:
        observation_space: a 3-D Box image space (uint8 in [0, 255] unless ``normalized_image``).
        features_dim: size of the output (the last linear layer). SB3's default 512.
        normalized_image: the images are already floats in a normalised range: only the shape is checked.
            The policy sets it when ``normalize_images=False``.
        bf16: lit-sb3 only (``policy_kwargs={"features_extractor_kwargs": {"bf16": True}}``): run the trunk
            under bfloat16 autocast on the observations' device and return float32 features, so the heads,
            distributions and losses stay float32. On a CPU with native bf16 (``avx512_bf16``/AMX) PPO's
            batch-256 Atari update is ~2.5x cheaper (``benchmarks/learning/bench_cnn_precision.py``); on a
            CPU without it bf16 is emulated and slower, and a forward pass on such a CPU warns so (once
            per process). Off by default: SB3's float32 results.
        channels_last: lit-sb3 only. On the CPU, run the float32 convolutions on channels-last (NHWC)
            memory, where oneDNN's kernels are faster: PPO's batch-256 update 1.43x and its batch-8 rollout
            forward 1.26x on an Intel Xeon, 1.14x and 0.97x on an AMD EPYC
            (``benchmarks/learning/bench_cnn_precision.py``); end to end on the Xeon, PPO on Breakout and
            DQN on Road Runner 1.35x and 1.22x cheaper per step than contiguous, A2C on Seaquest level
            (``benchmarks/learning/bench_atari.py``). The values differ from the contiguous
            layout's in the last bits; ``False`` keeps SB3's layout, and so SB3's numbers bit for bit where
            the rest is SB3's computation (DQN with ``optimizer_kwargs={"fused": False}``).
    """

    mode_free: ClassVar[bool] = True  # see ignores_training_mode

    def __init__(
        self,
        observation_space: spaces.Space,
        features_dim: int = 512,
        normalized_image: bool = False,
        bf16: bool = False,
        channels_last: bool = True,
    ) -> None:
        if not is_image_space(observation_space, normalized_image=normalized_image):
            raise ImageSpaceError(
                f"NatureCNN (CnnPolicy) needs image observations, a 3-D uint8 Box in [0, 255]; got "
                f"{describe_space(observation_space)}. Use policy='MlpPolicy' for vectors, "
                "'MultiInputPolicy' for Dict observations, or normalize_images=False in policy_kwargs for "
                "images that are already normalised floats (channel-first)."
            )
        assert isinstance(observation_space, spaces.Box)
        channels, height, width = observation_space.shape
        if _conv_output_size(height) < 1 or _conv_output_size(width) < 1:
            smallest = _smallest_nature_input()
            raise ConfigurationError(
                f"NatureCNN needs images of at least {smallest}x{smallest} pixels; got {height}x{width} "
                f"(channel-first {describe_space(observation_space)}). Resize the observations (e.g. "
                "gymnasium.wrappers.ResizeObservation) or pass a smaller network as "
                "policy_kwargs['features_extractor_class']."
            )
        super().__init__(observation_space, features_dim)
        layers: list[nn.Module] = []
        in_channels = channels
        for out_channels, (kernel, stride) in zip((32, 64, 64), _NATURE_CONVS):
            layers += [nn.Conv2d(in_channels, out_channels, kernel_size=kernel, stride=stride), nn.ReLU()]
            in_channels = out_channels
        self.cnn = nn.Sequential(*layers, nn.Flatten())
        n_flatten = in_channels * _conv_output_size(height) * _conv_output_size(width)
        self.linear = nn.Sequential(nn.Linear(n_flatten, self.features_dim), nn.ReLU())
        for name, value in (("bf16", bf16), ("channels_last", channels_last)):
            if not isinstance(value, bool):
                raise ConfigurationError(f"NatureCNN({name}=...) must be True or False, got {value!r}.")
        self.bf16, self.channels_last = bf16, channels_last

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        if not self.bf16:
            if self.channels_last and observations.device.type == "cpu":
                observations = observations.contiguous(memory_format=torch.channels_last)
            return self.linear(self.cnn(observations))
        if observations.device.type == "cpu" and not torch.compiler.is_compiling():
            _warn_if_bf16_is_emulated()
        with torch.autocast(observations.device.type, dtype=torch.bfloat16):
            features = self.linear(self.cnn(observations))
        return features.float()


class CombinedExtractor(BaseFeaturesExtractor):
    """Dict observations: a NatureCNN for each image key, flattening for the others, all concatenated.

    Args:
        observation_space: a single-level Dict space.
        cnn_output_dim: features from each image key's CNN (SB3's default 256 keeps the network small).
        normalized_image: treat every 3-D Box as an already-normalised image (see ``NatureCNN``).
    """

    mode_free: ClassVar[bool] = True  # see ignores_training_mode

    def __init__(
        self, observation_space: spaces.Space, cnn_output_dim: int = 256, normalized_image: bool = False
    ) -> None:
        if not isinstance(observation_space, spaces.Dict):
            raise ConfigurationError(
                f"CombinedExtractor (MultiInputPolicy) needs Dict observations; got "
                f"{describe_space(observation_space)}. Use policy='MlpPolicy' or 'CnnPolicy' instead."
            )
        extractors: dict[str, nn.Module] = {}
        total = 0
        for key, subspace in observation_space.spaces.items():
            if is_image_space(subspace, normalized_image=normalized_image):
                extractors[key] = NatureCNN(
                    subspace, features_dim=cnn_output_dim, normalized_image=normalized_image
                )
                total += cnn_output_dim
            else:
                extractors[key] = nn.Flatten()
                total += flat_feature_dim(subspace)
        super().__init__(observation_space, total)
        self.extractors = nn.ModuleDict(extractors)

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([extractor(observations[key]) for key, extractor in self.extractors.items()], dim=1)


def _mlp(in_dim: int, sizes: list[int], activation_fn: type[nn.Module]) -> tuple[nn.Sequential, int]:
    layers: list[nn.Module] = []
    for size in sizes:
        layers += [nn.Linear(in_dim, size), activation_fn()]
        in_dim = size
    return nn.Sequential(*layers), in_dim


class MlpExtractor(nn.Module):
    """Separate actor and critic MLPs on top of the features (``net_arch=dict(pi=[..], vf=[..])``).

    A plain list gives both networks that architecture, as SB3 does since 1.8; a missing key or an empty
    list means no hidden layer for that branch.
    """

    def __init__(self, feature_dim: int, net_arch: NetArch, activation_fn: type[nn.Module]) -> None:
        super().__init__()
        if net_arch is None:
            net_arch = {"pi": [64, 64], "vf": [64, 64]}
        if isinstance(net_arch, dict):
            unknown = set(net_arch) - {"pi", "vf"}
            if unknown:
                raise ConfigurationError(
                    f"net_arch keys must be 'pi' and 'vf', got unknown {sorted(unknown)}: use "
                    "dict(pi=[64, 64], vf=[64, 64])."
                )
            pi_sizes = check_layer_sizes("net_arch['pi']", net_arch.get("pi", []))
            vf_sizes = check_layer_sizes("net_arch['vf']", net_arch.get("vf", []))
        else:
            pi_sizes = vf_sizes = check_layer_sizes("net_arch", net_arch)
        self.policy_net, self.latent_dim_pi = _mlp(feature_dim, pi_sizes, activation_fn)
        self.value_net, self.latent_dim_vf = _mlp(feature_dim, vf_sizes, activation_fn)

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.policy_net(features), self.value_net(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


def hook_free(module: nn.Module) -> bool:
    """Whether calling ``module`` runs nothing but the ``forward`` methods of it and its submodules.

    That is: no forward or backward hooks, global or on any submodule, and no ``module.compile()``. Then
    ``plain_forward`` gives the same result as ``module(x)``.
    """
    from torch.nn.modules import module as torch_module

    if (
        torch_module._global_forward_hooks
        or torch_module._global_forward_pre_hooks
        or torch_module._global_backward_hooks
        or torch_module._global_backward_pre_hooks
    ):
        return False
    return not any(
        m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks
        or getattr(m, "_compiled_call_impl", None) is not None
        for m in module.modules()
    )  # fmt: skip


def plain_forward(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``module(x)`` for a ``hook_free`` module, calling ``forward`` directly (into ``nn.Sequential``s).

    ``nn.Module.__call__`` costs about 1.5 us per module in hook dispatch; a 64x64 actor-critic calls
    thirteen modules per forward pass, a fifth of its cost at the batch sizes of a CartPole rollout.
    """
    if type(module) is nn.Sequential:
        for layer in module:
            x = plain_forward(layer, x)
        return x
    return module.forward(x)
