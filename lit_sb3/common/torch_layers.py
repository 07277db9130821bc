"""``stable_baselines3.common.torch_layers`` (and sb3-contrib's): feature extractors and MLP builders.

``BaseFeaturesExtractor(observation_space, features_dim)`` keeps ``features_dim`` in ``_features_dim`` as
SB3's does, so extractors that set ``self._features_dim`` after ``super().__init__`` work.
"""

from __future__ import annotations

import itertools
from typing import Any

from torch import nn

from lit_sb3_core.nets.off_policy_policies import actor_critic_arch
from lit_sb3_core.nets.off_policy_policies import create_mlp as _create_mlp
from lit_sb3_core.nets.torch_layers import (
    BaseFeaturesExtractor,
    CombinedExtractor,
    FlattenExtractor,
    MlpExtractor,
    NatureCNN,
)

__all__ = [
    "BaseFeaturesExtractor",
    "BatchRenorm",  # noqa: F822 -- from the CrossQ plugin, on first use
    "BatchRenorm1d",  # noqa: F822
    "CombinedExtractor",
    "FlattenExtractor",
    "MlpExtractor",
    "NatureCNN",
    "create_mlp",
    "get_actor_critic_arch",
]


def create_mlp(
    input_dim: int,
    output_dim: int,
    net_arch: list[int],
    activation_fn: type[nn.Module] = nn.ReLU,
    squash_output: bool = False,
    with_bias: bool = True,
    pre_linear_modules: Any = None,
    post_linear_modules: Any = None,
) -> list[nn.Module]:
    """SB3's ``create_mlp``: the layers as a list (wrap them in ``nn.Sequential``).

    ``pre_linear_modules`` (classes such as ``nn.BatchNorm1d``) go before every linear layer, the output
    layer included; ``post_linear_modules`` (``nn.LayerNorm``, ``nn.Dropout``) after every hidden one, before
    its activation. Each is built with the width of the features it sees; ``with_bias`` is every linear's.
    """
    if with_bias and not pre_linear_modules and not post_linear_modules:
        return list(_create_mlp(input_dim, output_dim, net_arch, activation_fn, squash_output))
    pre, post = list(pre_linear_modules or []), list(post_linear_modules or [])
    layers: list[nn.Module] = []
    widths = [input_dim, *net_arch]
    for width_in, width_out in itertools.pairwise(widths):
        layers += [module(width_in) for module in pre]
        layers.append(nn.Linear(width_in, width_out, bias=with_bias))
        layers += [module(width_out) for module in post]
        layers.append(activation_fn())
    if output_dim > 0:
        layers += [module(widths[-1]) for module in pre]
        layers.append(nn.Linear(widths[-1], output_dim, bias=with_bias))
    if squash_output:
        layers.append(nn.Tanh())
    return layers


def get_actor_critic_arch(net_arch: list[int] | dict[str, list[int]]) -> tuple[list[int], list[int]]:
    """``[..]`` or ``dict(pi=[..], qf=[..])`` -> (actor sizes, critic sizes)."""
    return actor_critic_arch(net_arch, [])


def __getattr__(name: str) -> Any:
    if name in ("BatchRenorm", "BatchRenorm1d"):  # sb3-contrib's, from the CrossQ plugin
        from lit_sb3_crossq import batch_renorm

        return batch_renorm.BatchRenorm  # lit-sb3's is the 1-d layer sb3-contrib calls BatchRenorm1d
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
