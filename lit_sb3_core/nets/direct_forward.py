"""A small MLP's forward pass without ``nn.Module``'s machinery, for acting on a few observations per env step.

DQN acts on one observation per env step: ``policy(obs)`` goes through five module calls, the observation's
preprocessing, three ``linear`` and two ``relu`` operators and ``argmax``, each dispatched from Python for a
few hundred multiply-adds; between two gradient steps that code and the weights have left the caches
(~70 us of CPU per env step inside ``learn`` on CartPole, benchmarks/collection_step.py). Two shorter passes:

* ``TorchMlp`` calls the same torch operators on the same tensors, without the module calls: the same
  numbers, bit for bit (a layer that ``fast_matmul.routed`` reroutes keeps its route).
* ``NumpyMlp`` does the products with numpy on views of the live weights (no copies: optimizer steps,
  compiled updates and ``load_state_dict`` write into the same memory), a fraction of torch's per-call cost.
  numpy's BLAS sums in another order (one unit in the last place, ~1.2e-7 on CartPole's Q-values), so a
  greedy action can differ where two Q-values tie within that: algorithms use it only where their runs
  already differ from eager ones within float rounding (``compile=True``).

``of(network)`` returns None for what the passes do not reproduce: layers other than ``nn.Linear``,
``nn.ReLU`` and ``nn.Tanh``, features extractors that are more than a cast (images, one-hot encodings,
dicts), weights that are not float32 on the CPU. The caller checks that no hooks are registered (the
network's ``plain_calls`` flag, set while an algorithm trains without hooks).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.foundation.spaces import is_image_space, obs_to_tensor
from lit_sb3_core.nets.actor_critic import ActorCriticPolicy
from lit_sb3_core.nets.off_policy_policies import QNetwork, is_identity_extractor
from lit_sb3_core.nets.torch_layers import FlattenExtractor, MlpExtractor

__all__ = ["NumpyActorCritic", "NumpyMlp", "TorchMlp"]

_ACTIVATIONS = (nn.ReLU, nn.Tanh)
_CPU = torch.device("cpu")


def _plain_layers(layers: list[nn.Module]) -> bool:
    """Whether every layer is a float32 CPU ``nn.Linear`` or an activation the passes compute."""
    for layer in layers:
        if type(layer) is nn.Linear:
            if any(p.dtype != torch.float32 or p.device.type != "cpu" for p in layer.parameters()):
                return False
        elif type(layer) not in _ACTIVATIONS:
            return False
    return True


def _mlp_layers(network: nn.Module) -> list[nn.Module] | None:
    """The layers of ``network`` when a direct pass reproduces it (see the module), else None."""
    if type(network) is QNetwork:
        extractor = network.features_extractor
        if not (is_identity_extractor(extractor) and isinstance(extractor.observation_space, spaces.Box)):
            return None  # a one-axis Box: the preprocessing is a cast to float32, the extractor skipped
        network = network.q_net
    if type(network) is not nn.Sequential:
        return None
    layers = list(network)
    return layers if _plain_layers(layers) else None


class TorchMlp:
    """``network(obs)`` for numpy observations with torch's own operators, called directly (see the module)."""

    def __init__(self, layers: list[nn.Module]) -> None:
        self.layers = layers

    @classmethod
    def of(cls, network: nn.Module) -> TorchMlp | None:
        layers = _mlp_layers(network)
        return None if layers is None else cls(layers)

    def __call__(self, obs: np.ndarray) -> torch.Tensor:
        """The network's outputs, as ``network(obs_to_tensor(obs))`` computes them with ``plain_calls``."""
        x = obs_to_tensor(obs, _CPU)
        if x.dtype is not torch.float32:
            x = x.float()  # the preprocessing's cast (a float32 tensor's ``float()`` is itself)
        linear = torch._C._nn.linear
        for layer in self.layers:
            if type(layer) is nn.Linear:
                routed: Any = layer.__dict__.get("forward")  # fast_matmul.routed, while a batch runs
                if routed is not None:
                    x = routed(x)
                else:
                    parameters: dict[str, Any] = layer._parameters
                    x = linear(x, parameters["weight"], parameters["bias"])
            elif type(layer) is nn.ReLU:
                x = torch.relu_(x) if layer.inplace else torch.relu(x)
            else:
                x = torch.tanh(x)
        return x

    def argmax(self, obs: np.ndarray) -> np.ndarray:
        """The index of each row's largest output (greedy actions), as ``network(obs).argmax(dim=1)``: numpy's
        ``argmax`` on the outputs' memory picks the same index (the first of equal ones, the first NaN) with
        a third of torch's per-call cost."""
        outputs = self(obs)
        if outputs.requires_grad:  # called outside no_grad/inference_mode
            outputs = outputs.detach()
        return outputs.numpy().argmax(axis=1)


class NumpyMlp:
    """``network(obs)`` computed with numpy on views of the live weights, within float rounding of torch's."""

    def __init__(self, layers: list[nn.Module]) -> None:
        self.layers = layers
        self._linears = [layer for layer in layers if isinstance(layer, nn.Linear)]
        self._pointers: tuple[int, ...] = ()
        self._steps: list[tuple[np.ndarray, np.ndarray | None, Callable[[np.ndarray], Any] | None]] = []
        self._view()

    @classmethod
    def of(cls, network: nn.Module) -> NumpyMlp | None:
        layers = _mlp_layers(network)
        return None if layers is None else cls(layers)

    def _view(self) -> None:
        """numpy views of the weights (``weight.T``: ``x @ weight.T`` is the layer's product)."""
        steps: list[tuple[np.ndarray, np.ndarray | None, Callable[[np.ndarray], Any] | None]] = []
        for layer in self.layers:
            if isinstance(layer, nn.Linear):
                bias = layer.bias.detach().numpy() if layer.bias is not None else None
                steps.append((layer.weight.detach().numpy().T, bias, None))
            else:
                product, offset, _ = steps[-1]
                steps[-1] = (product, offset, _relu if isinstance(layer, nn.ReLU) else _tanh)
        self._steps = steps
        self._pointers = self._memory()

    def _memory(self) -> tuple[int, ...]:
        """Where the weights are now: the layers' current parameters (a replaced Parameter counts too)."""
        return tuple(
            p.data_ptr() for layer in self._linears for p in layer._parameters.values() if p is not None
        )

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        """The network's outputs for a batch of raw observations (one row each), as float32."""
        if self._memory() != self._pointers:
            self._view()  # a parameter got new memory (``param.data = ...``, a new Parameter): view it
        x = np.asarray(obs, dtype=np.float32)
        for weight, bias, activation in self._steps:
            x = x @ weight
            if bias is not None:
                x += bias
            if activation is not None:
                activation(x)
        return x

    def argmax(self, obs: np.ndarray) -> np.ndarray:
        """The index of each row's largest output (greedy actions; the first of equal ones, as torch's)."""
        return self(obs).argmax(axis=1)


def _relu(x: np.ndarray) -> None:
    np.maximum(x, 0.0, out=x)


def _tanh(x: np.ndarray) -> None:
    np.tanh(x, out=x)


class NumpyActorCritic:
    """An ``ActorCriticPolicy``'s rollout pass ``policy(obs)`` for Discrete actions, computed with numpy.

    An on-policy rollout calls the policy once per vector step on a few observations: ~20 torch operators
    (two MLPs, the heads, ``log_softmax``, ``multinomial`` with its argument checks, ``gather``) for a few
    thousand multiply-adds. Here the products and the softmax run in numpy on views of the live weights
    (``NumpyMlp``) and the draw stays torch's: ``torch.multinomial(probs, 1)`` is ``argmax(probs / q)`` with
    ``q = empty_like(probs).exponential_()`` (ATen's one-sample path), so ``q`` is drawn from torch's
    generator as the eager pass draws it, and a seeded run consumes the same stream. The numbers are
    torch's within float rounding (see the module): for ``compile=True`` runs.
    """

    def __init__(self, actor: NumpyMlp, critic: NumpyMlp) -> None:
        self.actor = actor
        self.critic = critic

    @classmethod
    def of(cls, policy: nn.Module) -> NumpyActorCritic | None:
        """The numpy pass for ``policy``, or None: a subclass of ``ActorCriticPolicy`` (it may change the
        pass), extractors other than ``FlattenExtractor`` over a one-axis ``Box``, other actions than
        ``Discrete``, layers ``NumpyMlp`` does not compute."""
        if type(policy) is not ActorCriticPolicy or not isinstance(policy.action_space, spaces.Discrete):
            return None
        space = policy.observation_space
        if not isinstance(space, spaces.Box) or len(space.shape) != 1 or is_image_space(space):
            return None
        extractors = [policy.features_extractor]
        if not policy.share_features_extractor:
            extractors.append(policy.vf_features_extractor)
        if any(type(extractor) is not FlattenExtractor for extractor in extractors):
            return None
        mlp = policy.mlp_extractor
        if type(mlp) is not MlpExtractor:
            return None
        actor = [*mlp.policy_net, policy.action_net]
        critic = [*mlp.value_net, policy.value_net]
        if not (_plain_layers(actor) and _plain_layers(critic)):
            return None
        return cls(NumpyMlp(actor), NumpyMlp(critic))

    def __call__(self, obs: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(actions, values, log_probs)`` as ``policy(obs)`` returns them (tensors on numpy's memory)."""
        logits = self.actor(obs)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        probs = np.exp(log_probs)
        noise = torch.empty(probs.shape, dtype=torch.float32).exponential_().numpy()
        index = (probs / noise).argmax(axis=1)
        log_prob = np.take_along_axis(log_probs, index[:, None], axis=1)[:, 0]
        if np.count_nonzero(np.isnan(log_prob)):
            # what torch.multinomial refuses (NaN or infinite logits), with its words
            raise ValueError("probability tensor contains either `inf`, `nan` or element < 0")
        return torch.from_numpy(index), self.values(obs), torch.from_numpy(log_prob)

    def values(self, obs: np.ndarray) -> torch.Tensor:
        """V(obs), as ``policy.predict_values(obs)`` returns it."""
        return torch.from_numpy(self.critic(obs)[:, 0])
