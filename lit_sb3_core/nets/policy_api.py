"""SB3's ``BasePolicy`` methods on lit-sb3 policies: ``predict``, ``save``/``load``, ``set_training_mode``,
``obs_to_tensor``, ``is_vectorized_observation``, ``parameters_to_vector``/``load_from_vector``.

Policies stay plain ``nn.Module``s built by their algorithm; this mixin gives them what SB3 code calls on
``model.policy``. ``save`` writes a zip of JSON (class, spaces, constructor arguments) and safetensors
weights, like model files; ``load`` rebuilds the class named there only if it is a policy class (never
arbitrary code) and unpickles nothing. The constructor arguments are recorded by the mixin when the
policy is built (the outermost ``__init__`` call), so subclasses need nothing for ``save`` to work.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
import weakref
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.errors import ConfigurationError, ModelFileError
from lit_sb3_core.foundation.files import write_atomically
from lit_sb3_core.foundation.spaces import (
    ObsPreprocessor,
    describe_space,
    is_image_space,
    obs_to_tensor,
    space_from_json,
    space_to_json,
    to_numpy,
)
from lit_sb3_core.nets.torch_layers import evaluation_mode

__all__ = ["PolicyAPI", "PolicyNetwork", "PolicyPart"]

_POLICY_JSON = "policy.json"
_POLICY_WEIGHTS = "policy.safetensors"


def _channels_first(observation: np.ndarray, space: spaces.Space | None) -> np.ndarray:
    """``observation`` in ``space``'s layout when it is a channel-last (HxWxC) image of a channel-first image
    space (SB3's ``maybe_transpose``); otherwise unchanged."""
    shape = observation.shape
    if (
        space is None
        or not is_image_space(space)
        or shape == space.shape
        or shape[1:] == space.shape
        or len(shape) < 3
    ):
        return observation
    moved = np.moveaxis(observation, -1, -3)
    return moved if moved.shape == space.shape or moved.shape[1:] == space.shape else observation


def _is_batch(observation: np.ndarray, space: spaces.Space) -> bool:
    shape = _channels_first(observation, space).shape
    if shape == space.shape:
        return False
    if shape[1:] == space.shape:
        return True
    raise ValueError(
        f"Unexpected observation shape {observation.shape} for {describe_space(space)}: expected {space.shape} "
        f"or (n_envs, {', '.join(map(str, space.shape or ()))})."
    )


def _batched(observation: np.ndarray, space: spaces.Space | None, vectorized: bool) -> np.ndarray:
    observation = _channels_first(observation, space)
    return observation if vectorized else observation[None]


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _loaded_class(name: str, base: type) -> type:
    """The class ``module:Name`` if its module is already imported and it derives from ``base``.

    A policy file never makes lit-sb3 import a module or reach anything but a class of the expected kind.
    """
    module_name, _, qualname = name.partition(":")
    module = sys.modules.get(module_name)
    value: Any = module
    for part in qualname.split("."):
        value = getattr(value, part, None)
    if not (isinstance(value, type) and issubclass(value, base)):
        raise ModelFileError(
            f"The policy file names {name!r}, which is not a {base.__name__} class of an imported module: import "
            "the module that defines it first."
        )
    return value


def _jsonable(value: Any, name: str) -> Any:
    if isinstance(value, spaces.Space):
        return {"__space__": space_to_json(value)}
    if isinstance(value, type):
        return {"__class__": _class_name(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v, f"{name}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{name}[{i}]") for i, v in enumerate(value)]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    raise ModelFileError(
        f"policy.save: the constructor argument {name}={value!r} is not a plain value (number, string, list, "
        "dict, class or space), so it cannot be stored without pickling. Save the whole model instead."
    )


def _from_json(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__space__"}:
            return space_from_json(value["__space__"])
        if set(value) == {"__class__"}:
            return _loaded_class(value["__class__"], object)
        return {k: _from_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


class PolicyAPI:
    """SB3's policy methods for an ``nn.Module`` policy with ``observation_space``, ``action_space`` and
    ``predict_actions(obs_tensor, deterministic)``."""

    observation_space: spaces.Space
    action_space: spaces.Space

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "records_arguments", False):
            return

        @functools.wraps(init)
        def recording_init(self: Any, *args: Any, **init_kwargs: Any) -> None:
            if "_init_arguments" not in self.__dict__:  # the outermost call describes the whole policy
                self.__dict__["_init_arguments"] = (type(self), args, dict(init_kwargs))
            init(self, *args, **init_kwargs)

        recording_init.records_arguments = True  # type: ignore[attr-defined]
        cls.__init__ = recording_init  # type: ignore[method-assign]

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if isinstance(value, PolicyNetwork):  # model.actor.predict/save need the policy around the network
            value.attach_owner(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[misc]
        for child in self.children():  # type: ignore[attr-defined]
            if isinstance(child, PolicyNetwork):  # a deep copy's networks belong to the copy
                child.attach_owner(self)

    # SB3's methods --------------------------------------------------------------------------------------
    def set_training_mode(self, mode: bool) -> None:
        """``train(mode)``: dropout and batch-norm statistics on or off."""
        self.train(mode)  # type: ignore[attr-defined]

    def is_vectorized_observation(self, observation: Any) -> bool:
        """Whether ``observation`` is a batch (one row per env) rather than a single observation.

        A channel-last image given to a policy whose image space is channel-first (SB3's models see images
        through ``VecTransposeImage``) is recognised in either layout, as in SB3.
        """
        space = self.observation_space
        if isinstance(space, spaces.Dict):
            first = next(iter(space.spaces))
            return _is_batch(np.asarray(observation[first]), space.spaces[first])
        return _is_batch(np.asarray(observation), space)

    def obs_to_tensor(self, observation: Any) -> tuple[Any, bool]:
        """The observation as a batch of tensors on the policy's device, and whether it was a batch."""
        vectorized = self.is_vectorized_observation(observation)
        space = self.observation_space
        if isinstance(observation, dict):
            subspaces = space.spaces if isinstance(space, spaces.Dict) else {}
            batch: Any = {
                k: _batched(np.asarray(v), subspaces.get(k), vectorized) for k, v in observation.items()
            }
        else:
            batch = _batched(np.asarray(observation), space, vectorized)
        return obs_to_tensor(batch, self.device), vectorized

    @property
    def device(self) -> torch.device:
        for parameter in self.parameters():  # type: ignore[attr-defined]
            return parameter.device
        return torch.device("cpu")

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions as the environment takes them, for one observation or a batch; ``(actions, state)``."""
        compute = functools.partial(self.predict_actions, deterministic=deterministic)  # type: ignore[attr-defined]
        return self.predict_with(self, compute, observation), state

    def predict_with(self, network: Any, compute: Any, observation: Any) -> np.ndarray:
        """``compute(obs_tensor)`` (actions in the env's bounds) as the env takes them, ``network`` in eval
        mode and without gradients; one observation gives one action (0-d for Discrete, as SB3's)."""
        obs, vectorized = self.obs_to_tensor(observation)
        with evaluation_mode(network), torch.no_grad():
            actions = self._env_actions(to_numpy(compute(obs)))
        return actions if vectorized else actions[0, ...]

    def _env_actions(self, array: np.ndarray) -> np.ndarray:
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            return array.reshape(-1).astype(np.int64) + int(space.start)
        if isinstance(space, spaces.Box):
            array = array.reshape((-1, *space.shape))
            if getattr(self, "squash_output", False) and hasattr(self, "unscale_action"):
                array = self.unscale_action(array)  # gSDE's squashed actions are in [-1, 1]
            return np.clip(array, space.low, space.high)
        if isinstance(space, spaces.MultiDiscrete):
            return array.reshape((-1, *space.shape)).astype(space.dtype) + space.start
        return array.reshape((-1, *(space.shape or ()))).astype(space.dtype)

    def parameters_to_vector(self) -> np.ndarray:
        """All parameters as one flat numpy vector."""
        return torch.nn.utils.parameters_to_vector(self.parameters()).detach().cpu().numpy()  # type: ignore[attr-defined]

    def load_from_vector(self, vector: np.ndarray) -> None:
        """Set all parameters from a flat vector (``parameters_to_vector``'s layout)."""
        torch.nn.utils.vector_to_parameters(
            torch.as_tensor(vector, dtype=torch.float32, device=self.device),
            self.parameters(),  # type: ignore[attr-defined]
        )

    def save(self, path: str | Path) -> None:
        """Write the policy (class, spaces, constructor arguments, weights) to ``path``; no pickle."""
        _write_policy_file(self, path, {})

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "auto") -> Any:
        """A policy written by ``save`` (on ``device``; ``"auto"``: CUDA when available)."""
        policy, _ = _read_policy_file(path, cls)
        return policy.to(_resolved_device(device))


def _resolved_device(device: str | torch.device) -> str | torch.device:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


def _write_policy_file(policy: Any, path: str | Path, extra: dict[str, Any]) -> None:
    """The policy file of ``policy``: its class, constructor arguments and weights (and ``extra``)."""
    from safetensors.torch import save as save_safetensors

    recorded = policy.__dict__.get("_init_arguments")
    if recorded is None:
        raise ModelFileError(
            f"{type(policy).__name__} was not built through its constructor: cannot save it."
        )
    cls, args, kwargs = recorded
    bound = inspect.signature(cls.__init__).bind(policy, *args, **kwargs)
    arguments = {k: v for k, v in bound.arguments.items() if k != "self"}
    for name, parameter in inspect.signature(cls.__init__).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD and name in arguments:
            arguments.update(arguments.pop(name))
    arguments.pop("lr_schedule", None)  # a function; rebuilt as a constant (unused by lit-sb3 policies)
    description = {
        "library": "lit-sb3",
        "class": _class_name(cls),
        "arguments": {k: _jsonable(v, k) for k, v in arguments.items()},
        **extra,
    }
    state = {k: v.detach().cpu().contiguous() for k, v in policy.state_dict().items()}

    def write(handle: Any) -> None:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_POLICY_JSON, json.dumps(description, indent=2))
            archive.writestr(_POLICY_WEIGHTS, save_safetensors(state), compress_type=zipfile.ZIP_STORED)

    write_atomically(path, write)  # a kill or a full disk leaves the previous file


def _read_policy_file(path: str | Path, expected: type) -> tuple[Any, dict[str, Any]]:
    """The policy a policy file describes, with its weights, and the file's description.

    ``expected`` is the class ``load`` was called on: the file's class must be it, a subclass or a base
    (SB3's view of the same policy). Parts (``model.actor``) pass ``torch.nn.Module``: their owner policy
    is any policy class.
    """
    from safetensors.torch import load as load_safetensors

    try:
        with zipfile.ZipFile(path) as archive:
            description = json.loads(archive.read(_POLICY_JSON))
            state = load_safetensors(archive.read(_POLICY_WEIGHTS))
    except (KeyError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{str(path)!r} is not a policy file written by policy.save ({exc}).") from None
    policy_cls = _loaded_class(str(description["class"]), torch.nn.Module)
    if not (issubclass(policy_cls, expected) or issubclass(expected, policy_cls)):
        raise ModelFileError(f"{str(path)!r} holds a {policy_cls.__name__}, not a {expected.__name__}.")
    arguments = _from_json(description["arguments"])
    if "lr_schedule" in inspect.signature(policy_cls).parameters:
        arguments["lr_schedule"] = lambda _: 0.0
    policy = policy_cls(**arguments)
    # Parameters an algorithm adds to its policy after building it (SAC's log_ent_coef) come back too.
    ours = policy.state_dict()
    for key in [k for k in state if k not in ours and "." not in k]:
        setattr(policy, key, torch.nn.Parameter(state[key].clone()))
    try:
        policy.load_state_dict(state)
    except RuntimeError as exc:
        raise ModelFileError(
            f"The weights in {str(path)!r} do not fit {policy_cls.__name__}: {exc}"
        ) from None
    return policy, description


class PolicyNetwork:
    """A network of a policy (``model.actor``, ``model.critic``, ``model.q_net``) that knows its policy.

    The policy records itself as the owner when it assigns the network. Through it the network takes the
    observations SB3's networks take: ``network_input`` preprocesses raw ones (SB3's actor and critic call
    ``preprocess_obs`` inside, so ``model.critic(obs, actions)`` works on a Discrete index) and passes the
    preprocessed batches lit-sb3's algorithms give them through unchanged.
    """

    def network_input(self, obs: Any) -> Any:
        """``obs`` preprocessed by the owner's ``preprocess`` unless it is already (see
        ``ObsPreprocessor.network_input``); unchanged for a network without an owner."""
        preprocess = self.__dict__.get("_owner_preprocess")
        return obs if preprocess is None else preprocess.network_input(obs)

    def policy_owner(self) -> Any:
        """The policy this network belongs to."""
        reference = self.__dict__.get("_policy_owner")
        owner = reference() if reference is not None else None
        if owner is None:
            raise ConfigurationError(
                f"This {type(self).__name__} does not belong to a policy any more: take it from the model "
                "or policy (model.actor, model.q_net, ...) or from its class's load()."
            )
        return owner

    def attach_owner(self, policy: Any, keep_alive: bool = False) -> None:
        """Remember ``policy`` as the owner: weakly (the policy holds its networks, not the reverse) unless
        ``keep_alive`` (a loaded network is all its caller holds). Never a submodule or state-dict entry."""
        self.__dict__["_policy_owner"] = (lambda: policy) if keep_alive else weakref.ref(policy)
        preprocess = getattr(policy, "preprocess", None)
        self.__dict__["_owner_preprocess"] = preprocess if isinstance(preprocess, ObsPreprocessor) else None


class PolicyPart(PolicyNetwork):
    """SB3's ``predict``/``save``/``load`` on a network of a policy (``model.actor``, ``model.q_net``).

    In SB3 the actor and the Q network are policies of their own. Here they stay plain modules of their
    off-policy policy (the owner, recorded when the policy assigns them); what SB3 code calls on them goes
    through that policy's preprocessing, ``to_env_bounds`` and action mapping. ``save`` writes the owner's
    policy file naming the part, so ``load`` rebuilds it exactly (and, like policy files, unpickles nothing).
    """

    def part_actions(self, features_input: Any, deterministic: bool) -> torch.Tensor:
        """Actions in the policy's space for preprocessed observations (actors: ``self(obs, deterministic)``)."""
        return self(features_input, deterministic)  # type: ignore[operator]

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions as the environment takes them, from this network alone; ``(actions, state)``."""
        owner = self.policy_owner()

        def compute(obs: Any) -> torch.Tensor:
            return owner.to_env_bounds(self.part_actions(owner.preprocess(obs), deterministic))

        return owner.predict_with(self, compute, observation), state

    def save(self, path: str | Path) -> None:
        """Write this network (inside its policy's file, which names it) to ``path``."""
        owner = self.policy_owner()
        name = next((n for n, m in owner.named_children() if m is self), None)
        if name is None:
            raise ModelFileError(f"This {type(self).__name__} is no longer a network of its policy.")
        _write_policy_file(owner, path, {"part": name})

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "auto") -> Any:
        """The network written by ``save``, on ``device``, with its policy rebuilt around it."""
        policy, description = _read_policy_file(path, torch.nn.Module)
        name = description.get("part")
        part = getattr(policy, str(name), None) if name else None
        if not isinstance(part, cls):
            raise ModelFileError(f"{str(path)!r} holds no {cls.__name__} (it was written by policy.save?).")
        policy.to(_resolved_device(device))
        part.attach_owner(policy, keep_alive=True)
        return part
