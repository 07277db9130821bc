"""ARS policies: deterministic maps from observations to actions, trained without gradients.

``ARSPolicy`` (``MlpPolicy``) is an MLP, ``ARSLinearPolicy`` (``LinearPolicy``) a single linear layer, both
laid out as sb3-contrib's (``action_net`` is an ``nn.Sequential`` of Linear layers and activations, so the
same seed gives the same weights and ``parameters_to_vector`` the same order).

ARS-v2's observation normalization is the algorithm's (``RLEnvDataModule(normalize="observation")``): the
policy receives observations already normalized, as every lit-sb3 policy does.

``forward_batch`` evaluates many weight vectors at once, one per row (one perturbed candidate per
environment), which lets ARS step several environments in parallel.
"""

from __future__ import annotations

import itertools
from typing import Any, cast

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ObsPreprocessor,
    PolicyAPI,
    describe_space,
    flat_feature_dim,
    resolve_named_class,
    unscale_action,
)

__all__ = ["ARS_POLICY_ALIASES", "ARSLinearPolicy", "ARSPolicy"]


def _mlp(
    input_dim: int,
    output_dim: int,
    net_arch: list[int],
    activation_fn: type[nn.Module],
    with_bias: bool,
    squash: bool,
) -> nn.Sequential:
    """SB3's ``create_mlp``: Linear + activation per hidden layer, a Linear output, tanh when squashing."""
    layers: list[nn.Module] = []
    sizes = [input_dim, *net_arch]
    for size_in, size_out in itertools.pairwise(sizes):
        layers += [nn.Linear(size_in, size_out, bias=with_bias), activation_fn()]
    layers.append(nn.Linear(sizes[-1], output_dim, bias=with_bias))
    if squash:
        layers.append(nn.Tanh())
    return nn.Sequential(*layers)


class ARSPolicy(PolicyAPI, nn.Module):
    """MLP policy for ARS.

    Args:
        observation_space: Box, Discrete, MultiDiscrete or MultiBinary observations (flattened, one-hot).
        action_space: Box (the network outputs the action) or Discrete (argmax of the outputs).
        net_arch: hidden layer sizes. Default ``[64, 64]``.
        activation_fn: activation class or name. Default ``nn.ReLU``.
        with_bias: give the layers an additive bias.
        squash_output: Box actions only: tanh the output and rescale it to the action bounds (else clip).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        net_arch: list[int] | None = None,
        activation_fn: Any = nn.ReLU,
        with_bias: bool = True,
        squash_output: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(action_space, (spaces.Box, spaces.Discrete)):
            raise ConfigurationError(
                f"ARS policies output Box or Discrete actions, not {describe_space(action_space)}."
            )
        net_arch = [64, 64] if net_arch is None else [int(size) for size in net_arch]
        activation = resolve_named_class("activation", activation_fn, field="policy_kwargs.activation_fn")
        self.observation_space = observation_space
        self.action_space = action_space
        self.net_arch = net_arch
        self.squash_output = isinstance(action_space, spaces.Box) and squash_output
        self.discrete = isinstance(action_space, spaces.Discrete)
        self.obs_preprocessor = ObsPreprocessor(observation_space)
        features_dim = flat_feature_dim(observation_space)
        output_dim = (
            int(action_space.n)
            if isinstance(action_space, spaces.Discrete)
            else int(np.prod(action_space.shape or ()))
        )
        self.action_net = _mlp(features_dim, output_dim, net_arch, activation, with_bias, self.squash_output)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """Observations as flat float rows (one-hot for discrete spaces)."""
        return self.obs_preprocessor(obs).reshape(obs.shape[0], -1)

    # actions --------------------------------------------------------------------------------------
    def _outputs_to_actions(self, outputs: torch.Tensor) -> torch.Tensor:
        return outputs.argmax(dim=-1) if self.discrete else outputs

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Actions for a batch of observations: argmax for Discrete, the (squashed) output for Box."""
        return self._outputs_to_actions(self.action_net(self.features(obs)))

    def predict_actions(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        """Actions only (what ``model.predict`` calls); ARS policies are deterministic."""
        return self(obs)

    def forward_batch(self, features: torch.Tensor, flat_params: torch.Tensor) -> torch.Tensor:
        """Actions when row ``i`` of ``features`` goes through weights ``flat_params[i]``.

        ``flat_params`` is ``(batch, n_params)`` in ``parameters_to_vector`` order.
        """
        x, batch = features.unsqueeze(-1), features.shape[0]
        for module, out_features, weight_slice, bias_slice in self._layout():
            if module is not None:
                x = module(x)
                continue
            weight = flat_params[:, weight_slice].view(batch, out_features, -1)
            x = (
                torch.bmm(weight, x)
                if bias_slice is None
                else torch.baddbmm(flat_params[:, bias_slice].unsqueeze(-1), weight, x)
            )
        return self._outputs_to_actions(x.squeeze(-1))

    def _layout(self) -> list[tuple[nn.Module | None, int, slice, slice | None]]:
        """Per layer of ``action_net``: (activation or None, out features, weight and bias slices)."""
        layout = self.__dict__.get("_layout_cache")
        if layout is None:
            layout, offset = [], 0
            for module in self.action_net:
                if not isinstance(module, nn.Linear):
                    layout.append((module, 0, slice(0), None))
                    continue
                size = module.out_features * module.in_features
                weight_slice, offset = slice(offset, offset + size), offset + size
                bias_slice = None
                if module.bias is not None:
                    bias_slice, offset = (
                        slice(offset, offset + module.out_features),
                        offset + module.out_features,
                    )
                layout.append((None, module.out_features, weight_slice, bias_slice))
            self.__dict__["_layout_cache"] = layout
        return layout

    def unscale_action(self, scaled_action: np.ndarray) -> np.ndarray:
        """Box action from [-1, 1] (the tanh output) to [low, high]."""
        box = cast(spaces.Box, self.action_space)  # only Box policies squash
        return unscale_action(scaled_action, box.low, box.high)


class ARSLinearPolicy(ARSPolicy):
    """Linear policy for ARS (the paper's): one linear layer, without bias or squashing by default.

    Args:
        observation_space: Box, Discrete, MultiDiscrete or MultiBinary observations.
        action_space: Box or Discrete actions.
        with_bias: add a bias to the linear map.
        squash_output: Box actions only: tanh the output and rescale it to the bounds (else clip).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        with_bias: bool = False,
        squash_output: bool = False,
    ) -> None:
        super().__init__(
            observation_space, action_space, net_arch=[], with_bias=with_bias, squash_output=squash_output
        )


# ARS's policy aliases, as sb3-contrib names them.
ARS_POLICY_ALIASES: dict[str, Any] = {"MlpPolicy": ARSPolicy, "LinearPolicy": ARSLinearPolicy}
