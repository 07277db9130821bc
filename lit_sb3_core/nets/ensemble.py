"""Several MLPs of one shape evaluated as one batched computation (the critic ensembles of SAC, TD3, TQC).

Twin critics (and TQC's quantile critics) are ``n`` networks that read the same input. Evaluated one by
one they cost ``n`` times the kernel launches and framework overhead of one; stacked, each layer is a
single ``baddbmm`` over a leading ``n`` axis: ``(n, batch, in) @ (n, in, out) + bias``. The networks stay
ordinary ``nn.Sequential`` modules with their own parameters (``qf0.0.weight``, ``qf1.2.bias``, ... as in
SB3), so state dicts, model files, checkpoints, optimizers and target updates see exactly what they saw
before; only the forward pass stacks the weights (``torch.stack``, differentiable, one small copy per
layer). The result is the same function with the same gradients (tests pin both), up to floating-point
summation order.

Where it pays: on GPUs, where a small network's step is bound by kernel launches. On CPUs a ``bmm`` costs
what the separate matrix multiplies cost and stacking copies the weights every pass, so there the critics
keep their loop (measured in benchmarks/profiles.md); ``ContinuousCritic.batch_on_cpu`` switches it on.

Networks qualify when every one is the same stack of ``nn.Linear`` layers with the same parameter-free,
elementwise activations (ReLU, Tanh, ... what ``create_mlp`` builds). Anything else (batch norm, dropout,
custom layers, hooks) falls back to the loop over networks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
from torch import nn

__all__ = ["ensemble_forward", "is_stackable"]

# Activations that act elementwise and hold no parameters or state: the same module on a stacked tensor
# gives the stacked outputs.
_ELEMENTWISE = (
    nn.ReLU,
    nn.Tanh,
    nn.ELU,
    nn.LeakyReLU,
    nn.GELU,
    nn.SiLU,
    nn.SELU,
    nn.Sigmoid,
    nn.Softplus,
    nn.Identity,
)


def _layout(network: nn.Module) -> tuple[tuple[Any, ...], ...] | None:
    """A hashable description of a plain MLP (layer types, sizes, activation settings), or None."""
    if type(network) is not nn.Sequential or len(network) == 0:
        return None
    layout: list[tuple[Any, ...]] = []
    for layer in network:
        if type(layer) is nn.Linear:
            if layer.bias is None:
                return None
            layout.append(("linear", layer.in_features, layer.out_features))
        elif type(layer) in _ELEMENTWISE:
            layout.append(("activation", repr(layer)))  # repr carries the settings (negative_slope, ...)
        else:
            return None
        if layer._forward_hooks or layer._forward_pre_hooks:
            return None
    if layout[0][0] != "linear":
        return None
    return tuple(layout)


def is_stackable(networks: Sequence[nn.Module]) -> bool:
    """Whether ``networks`` (two or more) are plain MLPs of one layout that ``ensemble_forward`` can batch."""
    if len(networks) < 2:
        return False
    first = _layout(networks[0])
    return first is not None and all(_layout(network) == first for network in networks[1:])


def ensemble_forward(networks: Sequence[nn.Module], inputs: torch.Tensor) -> torch.Tensor:
    """``torch.stack([net(inputs) for net in networks])``, computed layer by layer for all networks at once.

    Args:
        networks: plain MLPs of one layout (``is_stackable``).
        inputs: ``(batch, in_features)``, the same for every network.

    Returns:
        ``(n_networks, batch, out_features)``.
    """
    sequentials = cast("Sequence[nn.Sequential]", networks)  # what is_stackable accepts
    n = len(sequentials)
    hidden: torch.Tensor | None = None
    for index, layer in enumerate(sequentials[0]):
        if type(layer) is nn.Linear:
            layers = cast("list[nn.Linear]", [network[index] for network in sequentials])
            weight = torch.stack([linear.weight for linear in layers])  # (n, out, in)
            bias = torch.stack([linear.bias for linear in layers]).unsqueeze(1)  # (n, 1, out)
            # The first layer reads the same input for every network (an expanded view, no copy).
            source = inputs.expand(n, *inputs.shape) if hidden is None else hidden
            hidden = torch.baddbmm(bias, source, weight.transpose(1, 2))
        else:
            assert hidden is not None
            hidden = layer(hidden)
    assert hidden is not None
    return hidden
