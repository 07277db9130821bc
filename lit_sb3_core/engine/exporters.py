"""Export a trained policy as a standalone graph: ONNX, TorchScript or a ``torch.export`` program.

The exported graph maps *raw* observations (as the environment returns them, in a batch) to the actions
the environment takes, so a deployment needs no lit-sb3, no Stable-Baselines3 and no hand-written glue:

    raw observations ─► observation normalization (the model's frozen statistics, if any)
                     ─► the algorithm's deterministic policy module (one-hot, image scaling, channel
                        transposition, the networks, argmax / distribution mode / tanh squashing)
                     ─► env actions (Box: rescaled from [-1, 1] where the policy squashes, clipped to the
                        bounds; Discrete / MultiDiscrete: offset by the space's start; dtypes as the space's)

Which module is exported is the algorithm's choice, through ``RLAlgorithm.export_policy_module()``: by
default the policy's ``predict_actions(obs, deterministic=True)``; RecurrentPPO adds its LSTM state as
inputs and outputs, MaskablePPO the action masks as an input. Each file also carries a JSON description
(:data:`METADATA_NAME`) of its inputs, outputs and spaces, so the runtime side needs nothing else.

The result equals ``model.predict(obs, deterministic=True)``; ``tests/engine/test_export.py`` checks that for every
algorithm and kind of space, with onnxruntime, loaded TorchScript and loaded exported programs.
"""

from __future__ import annotations

import copy
import json
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core._version import __version__
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.files import remove_stale_temporaries
from lit_sb3_core.foundation.spaces import describe_space, space_to_json, unscale_action

__all__ = [
    "EXPORT_FORMATS",
    "METADATA_NAME",
    "DeterministicPolicy",
    "EnvActions",
    "ExportedPolicy",
    "PolicyModule",
    "default_export_path",
    "example_observations",
    "export_policy",
]

EXPORT_FORMATS = ("onnx", "torchscript", "torch-export")
_SUFFIXES = {"onnx": ".onnx", "torchscript": ".pt", "torch-export": ".pt2"}
# The JSON description inside every exported file: ONNX metadata_props key, TorchScript / torch.export
# extra file name.
METADATA_NAME = "lit_sb3_export.json"
_OPSET = 17
_EXAMPLE_BATCH = 3  # not 1: exporters would specialise a batch axis of size 1


@dataclass
class PolicyModule:
    """What ``RLAlgorithm.export_policy_module()`` returns: the deterministic policy and its extra tensors.

    Attributes:
        module: ``forward(obs, *extra_inputs)``, where ``obs`` is a batch of (normalized) observations as the
            policy takes them (a tensor, or a dict of tensors for Dict spaces). It returns the policy's
            actions, one row per observation, as the algorithm's ``prediction.to_env_actions`` expects them, or a
            tuple ``(actions, *extra_outputs)``.
        extra_inputs: name -> example tensor of each extra input, in ``forward``'s order (e.g. LSTM states,
            action masks), with 3 as the batch size.
        extra_outputs: names of the extra outputs, in order.
        batch_axes: name -> the batch axis of an extra input or output (default 0); an LSTM state has its
            batch on axis 1.
        initial_values: name -> what to feed an extra input at the start of an episode, as a description
            for the metadata (``"zeros"``, ``"ones"``); recurrent states start from zeros.
    """

    module: nn.Module
    extra_inputs: dict[str, torch.Tensor] = field(default_factory=dict)
    extra_outputs: tuple[str, ...] = ()
    batch_axes: dict[str, int] = field(default_factory=dict)
    initial_values: dict[str, str] = field(default_factory=dict)


class DeterministicPolicy(nn.Module):
    """``policy.predict_actions(obs, deterministic=True)``: the generic deterministic policy of the SDK."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, obs: Any) -> torch.Tensor:
        return self.policy.predict_actions(obs, deterministic=True)  # type: ignore[operator]


class EnvActions(nn.Module):
    """The policy's actions as the environment takes them: ``RLAlgorithm.prediction.to_env_actions`` in torch.

    Args:
        action_space: the environment's action space.
        unscale: Box only: the policy squashes into [-1, 1] (``policy.squash_output``); rescale to the bounds.
    """

    # buffers, registered in __init__ for the spaces that need them
    low: torch.Tensor
    high: torch.Tensor
    offset: torch.Tensor

    def __init__(self, action_space: spaces.Space, unscale: bool = False) -> None:
        super().__init__()
        self.kind = type(action_space).__name__
        self.shape = tuple(action_space.shape or ())
        self.unscale = bool(unscale) and isinstance(action_space, spaces.Box)
        self.clip = False
        self.start: int | None = None
        if isinstance(action_space, spaces.Box):
            low, high = np.asarray(action_space.low), np.asarray(action_space.high)
            self.dtype = _torch_dtype(action_space.dtype)
            self.register_buffer("low", torch.as_tensor(low, dtype=self.dtype))
            self.register_buffer("high", torch.as_tensor(high, dtype=self.dtype))
            self.clip = bool(np.all(np.isfinite(low)) and np.all(np.isfinite(high)))
        elif isinstance(action_space, spaces.Discrete):
            self.dtype = torch.int64
            self.start = int(action_space.start)
        elif isinstance(action_space, spaces.MultiDiscrete):
            self.dtype = _torch_dtype(action_space.dtype)
            self.register_buffer("offset", torch.as_tensor(np.asarray(action_space.start), dtype=torch.int64))
        elif isinstance(action_space, spaces.MultiBinary):
            self.dtype = _torch_dtype(action_space.dtype)
        else:
            raise ConfigurationError(f"Cannot export a policy for {describe_space(action_space)} actions.")

    def forward(self, actions: torch.Tensor) -> torch.Tensor:
        if self.kind == "Discrete":
            flat = actions.reshape(-1).to(torch.int64)
            return flat + self.start if self.start else flat
        batch = actions.reshape((-1, *self.shape))
        if self.kind == "Box":
            batch = batch.to(self.dtype)
            if self.unscale:
                batch = unscale_action(batch, self.low, self.high)
            if self.clip:
                batch = torch.maximum(torch.minimum(batch, self.high), self.low)
            return batch
        if self.kind == "MultiDiscrete":
            return (batch.to(torch.int64) + self.offset).to(self.dtype)
        return batch.to(self.dtype)


class ExportedPolicy(nn.Module):
    """Raw observations (and the extra inputs) in, env actions (and the extra outputs) out.

    Inputs are positional tensors: the observation (one per key, in the Dict space's order, for Dict
    spaces), then the policy module's extra inputs.
    """

    def __init__(
        self,
        policy_module: PolicyModule,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        normalizer: nn.Module | None,
        unscale: bool,
    ) -> None:
        super().__init__()
        self.keys = list(observation_space.spaces) if isinstance(observation_space, spaces.Dict) else []
        self.n_obs = max(1, len(self.keys))
        self.normalizer = normalizer
        self.policy = policy_module.module
        self.env_actions = EnvActions(action_space, unscale)

    def forward(self, *inputs: torch.Tensor) -> Any:
        obs: Any = dict(zip(self.keys, inputs[: self.n_obs])) if self.keys else inputs[0]
        if self.normalizer is not None:
            obs = self.normalizer(obs)
        out = self.policy(obs, *inputs[self.n_obs :])
        if isinstance(out, (tuple, list)):
            return (self.env_actions(out[0]), *out[1:])
        return self.env_actions(out)


def example_observations(space: spaces.Space, batch: int = _EXAMPLE_BATCH, seed: int = 0) -> Any:
    """A batch of observations sampled from ``space`` (a dict of arrays for Dict spaces)."""
    space = copy.deepcopy(space)
    space.seed(seed)
    samples = [space.sample() for _ in range(batch)]
    if isinstance(space, spaces.Dict):
        return {key: np.stack([np.asarray(s[key]) for s in samples]) for key in space.spaces}
    return np.stack([np.asarray(s) for s in samples])


def default_export_path(model_path: str | Path, format: str) -> Path:
    """``model.zip`` -> ``model.onnx`` / ``model.pt`` / ``model.pt2``."""
    _check_format(format)
    return Path(model_path).with_suffix(_SUFFIXES[format])


def export_policy(algorithm: Any, path: str | Path, format: str = "onnx", opset: int | None = None) -> Path:
    """Write ``algorithm``'s deterministic policy to ``path`` in ``format``; returns the path written.

    Args:
        algorithm: a built lit-sb3 algorithm (``RLAlgorithm``); its ``export_policy_module()`` decides what
            is exported.
        path: the file to write (its folder is created).
        format: ``"onnx"``, ``"torchscript"`` (``torch.jit.trace``) or ``"torch-export"``
            (``torch.export.save``).
        opset: ONNX opset version (default 17).
    """
    _check_format(format)
    if getattr(algorithm, "policy", None) is None:
        raise ConfigurationError(
            f"{type(algorithm).__name__} has no policy to export yet: train it, load it, or pass env= to build it."
        )
    observation_space, action_space = algorithm.observation_space, algorithm.action_space
    spec = algorithm.export_policy_module()
    if not isinstance(spec, PolicyModule):
        raise TypeError(
            f"{type(algorithm).__name__}.export_policy_module() must return a lit_sb3_core.sdk.PolicyModule, "
            f"got {type(spec).__name__}."
        )
    normalizer = copy.deepcopy(algorithm.obs_normalizer) if algorithm.obs_normalizer is not None else None
    unscale = bool(getattr(algorithm.policy, "squash_output", False))
    wrapper = ExportedPolicy(spec, observation_space, action_space, normalizer, unscale).cpu().eval()
    obs_inputs = _observation_inputs(observation_space)
    inputs = [*obs_inputs, *((name, tensor.cpu()) for name, tensor in spec.extra_inputs.items())]
    names = [name for name, _ in inputs]
    args = tuple(tensor for _, tensor in inputs)
    output_names = ["actions", *spec.extra_outputs]
    axes = {name: 0 for name, _ in obs_inputs} | {"actions": 0}
    axes |= {name: spec.batch_axes.get(name, 0) for name in (*spec.extra_inputs, *spec.extra_outputs)}
    with torch.no_grad():
        outputs = wrapper(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    metadata = _metadata(algorithm, format, list(zip(names, args)), list(zip(output_names, outputs)), axes)
    metadata["initial_values"] = dict(spec.initial_values)
    path = Path(path)
    if format == "torch-export" and path.suffix != ".pt2":
        raise ConfigurationError(
            f"torch.export programs are saved as .pt2 files (torch.export.load refuses others): got {path}; "
            f"use {path.with_suffix('.pt2')}."
        )
    _refuse_overwriting_a_model(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target, then renamed: an interrupted export never leaves a truncated file.
    partial = path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")
    try:
        with torch.no_grad(), _exporter_warnings_hidden():
            if format == "onnx":
                _export_onnx(wrapper, args, partial, names, output_names, axes, opset or _OPSET, metadata)
            elif format == "torchscript":
                traced = torch.jit.trace(wrapper, args, check_trace=False)
                torch.jit.save(traced, str(partial), _extra_files={METADATA_NAME: json.dumps(metadata)})
            else:
                # forward(*inputs): the varargs are one entry of dynamic_shapes.
                program = torch.export.export(wrapper, args, dynamic_shapes=(_dynamic_shapes(names, axes),))
                torch.export.save(program, str(partial), extra_files={METADATA_NAME: json.dumps(metadata)})
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    remove_stale_temporaries(path.parent)  # what killed exports and saves left in this folder
    return path


def _refuse_overwriting_a_model(path: Path) -> None:
    """An export never replaces a model file (its own input, most often: ``export m.zip --out m.zip``)."""
    import zipfile

    if not path.is_file() or not zipfile.is_zipfile(path):
        return
    try:
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return
    if "metadata.json" in names or {"data", "policy.pth"} <= names:
        raise ConfigurationError(
            f"Refusing to export over {str(path)!r}: it is a model file (the export's input?), and the exported "
            f"graph would replace it. Write the export elsewhere, e.g. {str(path.with_suffix('.onnx'))!r} "
            "(lit-sb3 export: --out FILE, or leave --out out for the model's name with the format's suffix)."
        )


# helpers -------------------------------------------------------------------------------------------------
# Warnings the exporters raise for what this module does on purpose: the LSTM state is an input (the
# ONNX exporter warns about LSTMs and batch sizes anyway), torch.export sees nn.LSTM refresh its weight list,
# and the TorchScript-based ONNX exporter (fast, no extra dependency) is deprecated in favour of dynamo's.
_EXPECTED_WARNINGS = (
    r"Exporting a model to ONNX with a batch_size other than 1",
    r".*were assigned during export",
    r".*legacy TorchScript-based ONNX export",
    r"The feature will be removed",
    r"`torch\.jit\.\w+` is deprecated",  # TorchScript is the format asked for
)


@contextmanager
def _exporter_warnings_hidden() -> Iterator[None]:
    with warnings.catch_warnings():
        for message in _EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        yield


def _check_format(format: str) -> None:
    if format not in EXPORT_FORMATS:
        raise ConfigurationError(f"Unknown export format {format!r}: use one of {', '.join(EXPORT_FORMATS)}.")


def _torch_dtype(dtype: Any) -> torch.dtype:
    return torch.from_numpy(np.zeros((), dtype=dtype)).dtype


def _observation_inputs(space: spaces.Space) -> list[tuple[str, torch.Tensor]]:
    examples = example_observations(space)
    if isinstance(space, spaces.Dict):
        return [(f"obs.{key}", torch.as_tensor(examples[key])) for key in space.spaces]
    return [("obs", torch.as_tensor(examples))]


def _describe(name: str, tensor: torch.Tensor, axis: int) -> dict[str, Any]:
    shape: list[Any] = list(tensor.shape)
    shape[axis] = "batch"
    return {"name": name, "shape": shape, "dtype": str(tensor.dtype).removeprefix("torch.")}


def _metadata(
    algorithm: Any,
    format: str,
    inputs: Sequence[tuple[str, torch.Tensor]],
    outputs: Sequence[tuple[str, torch.Tensor]],
    axes: dict[str, int],
) -> dict[str, Any]:
    return {
        "format": format,
        "algo": algorithm.algo_name or type(algorithm).__name__,
        "lit_sb3_version": __version__,
        "num_timesteps": int(algorithm.num_timesteps),
        "observation_space": space_to_json(algorithm.observation_space),
        "action_space": space_to_json(algorithm.action_space),
        "inputs": [_describe(name, tensor, axes[name]) for name, tensor in inputs],
        "outputs": [_describe(name, tensor, axes[name]) for name, tensor in outputs],
    }


def _dynamic_shapes(names: list[str], axes: dict[str, int]) -> tuple[dict[int, Any], ...]:
    batch = torch.export.Dim("batch", min=1, max=1 << 20)
    return tuple({axes[name]: batch} for name in names)


def _export_onnx(
    wrapper: nn.Module,
    args: tuple[torch.Tensor, ...],
    path: Path,
    input_names: list[str],
    output_names: list[str],
    axes: dict[str, int],
    opset: int,
    metadata: dict[str, Any],
) -> None:
    try:
        import onnx
    except ImportError:
        raise ConfigurationError(
            "ONNX export needs the onnx package: pip install 'lit-sb3-core[onnx]' (onnx, onnxruntime)."
        ) from None
    dynamic_axes = {name: {axes[name]: "batch"} for name in (*input_names, *output_names)}
    torch.onnx.export(
        wrapper,
        args,
        str(path),
        input_names=input_names,
        output_names=output_names,
        dynamic_axes=dynamic_axes,
        opset_version=opset,
        dynamo=False,
    )
    proto = onnx.load(str(path))
    entry = proto.metadata_props.add()
    entry.key, entry.value = METADATA_NAME, json.dumps(metadata)
    proto.producer_name = "lit-sb3"
    proto.producer_version = __version__
    onnx.save(proto, str(path))
