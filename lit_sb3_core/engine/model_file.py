"""Model files: a zip of JSON metadata and safetensors tensors. Loading never unpickles anything.

Layout of ``model.zip``::

    metadata.json          format version, algorithm registry name, library version, hyperparameters,
                           spaces as JSON, counters, optimizer param groups
    model.safetensors      the algorithm's state dict: policy (and target networks, normalization
                           statistics, ... whatever modules the algorithm holds)
    optimizers.safetensors every optimizer's per-parameter state, keys ``<i>/<param>/<name>``

Writes go to a temporary file beside the target and are renamed into place, so a failed save (a full
disk, an interrupt) leaves the previous file as it was.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from lit_sb3_core._version import __version__
from lit_sb3_core.engine.protocol import RLModel
from lit_sb3_core.errors import ModelFileError
from lit_sb3_core.foundation.spaces import describe_space, space_from_json, space_to_json

__all__ = ["FORMAT_VERSION", "ModelFile", "load", "load_model", "read_model_file", "save_model"]

FORMAT_VERSION = 1
_METADATA = "metadata.json"
_WEIGHTS = "model.safetensors"
_OPTIMIZERS = "optimizers.safetensors"
# metadata.json holds hyperparameters and spaces: kilobytes. A larger one is damaged or a decompression bomb.
_MAX_METADATA_BYTES = 16 * 2**20


@dataclass
class ModelFile:
    """The decoded contents of a model file."""

    metadata: dict[str, Any]
    state: dict[str, torch.Tensor]
    optimizer_states: list[dict[str, Any]]


def _with_suffix(path: str | Path) -> Path:
    path = Path(path)
    return path if path.suffix else path.with_suffix(".zip")


def _optimizer_payload(state_dicts: list[dict[str, Any]]) -> tuple[dict[str, torch.Tensor], list[Any]]:
    tensors: dict[str, torch.Tensor] = {}
    groups: list[Any] = []
    for i, state_dict in enumerate(state_dicts):
        for param_id, param_state in state_dict["state"].items():
            for name, value in param_state.items():
                tensor = value if isinstance(value, torch.Tensor) else torch.tensor(value)
                tensors[f"{i}/{param_id}/{name}"] = tensor.detach().cpu().contiguous()
        groups.append(_jsonable(state_dict["param_groups"]))
    return tensors, groups


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 else value.tolist()
    return value


def save_model(model: RLModel, path: str | Path) -> Path:
    """Write ``model`` to ``path`` (``.zip`` added when there is no suffix) atomically."""
    model.require_policy()
    parameters = model.get_parameters()
    # Lightning stands in an empty "No Optimizer" when configure_optimizers returns None (ARS): skip it.
    optimizers = [state for name, state in parameters.items() if name.startswith("optimizer") and state]
    optimizer_tensors, param_groups = _optimizer_payload(optimizers)
    hyperparameters = dict(model.hparams)
    try:
        json.dumps(hyperparameters)
    except TypeError as exc:
        raise ModelFileError(
            f"Cannot save {type(model).__name__}: a hyperparameter is not a plain JSON value ({exc}). Pass "
            "schedules as numbers or 'lin_<start>' strings and classes as import strings."
        ) from None
    assert model.observation_space is not None and model.action_space is not None
    metadata = {
        "format_version": FORMAT_VERSION,
        "library": "lit-sb3",
        "library_version": __version__,
        "algo": model.algo_name,
        "class": f"{type(model).__module__}:{type(model).__qualname__}",
        "hyperparameters": hyperparameters,
        "observation_space": space_to_json(model.observation_space),
        "action_space": space_to_json(model.action_space),
        "num_timesteps": int(model.num_timesteps),
        "iterations": int(model.iterations),
        "n_updates": int(model.n_updates),
        "optimizer_param_groups": param_groups,
        "normalization": model.normalization,
    }
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    target = _with_suffix(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
                archive.writestr(_METADATA, json.dumps(metadata, indent=2))
                archive.writestr(_WEIGHTS, save_safetensors(state))
                archive.writestr(_OPTIMIZERS, save_safetensors(optimizer_tensors))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target


def read_model_file(path: str | Path) -> ModelFile:
    """Decode a model file, refusing missing, empty, corrupt and newer-format files with a clear message."""
    given = str(path)
    candidate = Path(path)
    if not candidate.exists() and not candidate.suffix:
        candidate = candidate.with_suffix(".zip")
    if not candidate.exists():
        raise FileNotFoundError(f"No model file at {given!r}.")
    if candidate.is_dir():
        raise ModelFileError(f"{given!r} is a directory, not a model file.")
    if candidate.stat().st_size == 0:
        raise ModelFileError(f"The model file {given!r} is empty (0 bytes): the save that wrote it failed.")
    try:
        with zipfile.ZipFile(candidate) as archive:
            names = set(archive.namelist())
            missing = {_METADATA, _WEIGHTS} - names
            if missing and {"data", "policy.pth"} <= names:
                raise ModelFileError(
                    f"{given!r} is a Stable-Baselines3 model file (its weights are pickled torch files, which "
                    "lit-sb3 never unpickles). Load it with stable_baselines3, then copy the weights: "
                    "model.policy.load_state_dict(sb3_model.policy.state_dict()) where the policies match, "
                    "and save it with lit-sb3."
                )
            if missing:
                raise ModelFileError(
                    f"{given!r} is a zip file but not a lit-sb3 model file (missing {sorted(missing)})."
                )
            if archive.getinfo(_METADATA).file_size > _MAX_METADATA_BYTES:
                raise ModelFileError(
                    f"{given!r} is not a valid lit-sb3 model file: its metadata.json would unpack to "
                    f"{archive.getinfo(_METADATA).file_size} bytes (at most {_MAX_METADATA_BYTES} are read)."
                )
            metadata = json.loads(archive.read(_METADATA))
            _check_metadata(metadata, given)
            state = load_safetensors(archive.read(_WEIGHTS))
            optimizer_tensors = load_safetensors(archive.read(_OPTIMIZERS)) if _OPTIMIZERS in names else {}
    except ModelFileError:
        raise
    except (
        zipfile.BadZipFile,
        EOFError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        ValueError,
        KeyError,
        OSError,
    ) as exc:
        raise ModelFileError(
            f"The model file {given!r} is truncated or corrupt ({type(exc).__name__}: {exc})."
        ) from None
    except Exception as exc:  # safetensors raises its own error types on damaged payloads
        raise ModelFileError(
            f"The model file {given!r} is truncated or corrupt ({type(exc).__name__}: {exc})."
        ) from None
    return ModelFile(metadata, state, _optimizer_states(metadata, optimizer_tensors))


def _check_metadata(metadata: Any, given: str) -> None:
    if not isinstance(metadata, dict) or metadata.get("library") != "lit-sb3":
        raise ModelFileError(f"{given!r} is not a lit-sb3 model file (its metadata does not say lit-sb3).")
    version = metadata.get("format_version")
    if not isinstance(version, int):
        raise ModelFileError(f"{given!r} has no valid format_version in its metadata.")
    if version > FORMAT_VERSION:
        raise ModelFileError(
            f"{given!r} uses model file format {version}, newer than this lit-sb3 ({__version__}) reads "
            f"(format {FORMAT_VERSION}). Upgrade lit-sb3-core to load it."
        )
    for key in ("algo", "hyperparameters", "observation_space", "action_space"):
        if key not in metadata:
            raise ModelFileError(f"{given!r} is missing {key!r} in its metadata.")


def _optimizer_states(metadata: dict[str, Any], tensors: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
    states: list[dict[str, Any]] = []
    for i, groups in enumerate(metadata.get("optimizer_param_groups", [])):
        state: dict[int, dict[str, torch.Tensor]] = {}
        for key, tensor in tensors.items():
            index, param_id, name = key.split("/", 2)
            if int(index) == i:
                state.setdefault(int(param_id), {})[name] = tensor
        for group in groups:
            if "betas" in group:
                group["betas"] = tuple(group["betas"])
        states.append({"state": state, "param_groups": groups})
    return states


def load_model(
    path: str | Path, env: Any = None, expected_cls: type[RLModel] | None = None, **overrides: Any
) -> RLModel:
    """Rebuild the algorithm stored in ``path``; ``expected_cls`` refuses files of other algorithms."""
    contents = read_model_file(path)
    metadata = contents.metadata
    algo = metadata["algo"]
    if expected_cls is not None and expected_cls.algo_name and expected_cls.algo_name != algo:
        raise ModelFileError(
            f"{str(path)!r} holds a {algo!r} model, not {expected_cls.algo_name!r}: load it with "
            f"lit_sb3.load({str(path)!r}) or that algorithm's class."
        )
    cls = expected_cls
    if cls is None or not cls.algo_name:
        from lit_sb3_core.registry.registry import get_algo_class

        cls = get_algo_class(algo)
    observation_space = space_from_json(metadata["observation_space"])
    action_space = space_from_json(metadata["action_space"])
    hyperparameters = dict(metadata["hyperparameters"])
    hyperparameters.update(overrides)
    model = cls(**hyperparameters)
    if env is not None:
        env_obs, env_act = model.probe_spaces(env)
        if env_obs != observation_space or env_act != action_space:
            raise ModelFileError(
                f"{str(path)!r} was saved for observations {describe_space(observation_space)} and actions "
                f"{describe_space(action_space)}, but the given env has {describe_space(env_obs)} and "
                f"{describe_space(env_act)}."
            )
    model.build_policy(observation_space, action_space)
    model.configure_normalization(metadata.get("normalization"))
    try:
        model.load_state_dict(contents.state, strict=True)
    except RuntimeError as exc:
        raise ModelFileError(f"The weights in {str(path)!r} do not fit the {algo!r} policy: {exc}") from None
    model.num_timesteps = int(metadata.get("num_timesteps", 0))
    model.iterations = int(metadata.get("iterations", 0))
    model.n_updates = int(metadata.get("n_updates", 0))
    model.pending_optimizer_states = contents.optimizer_states
    if env is not None:
        model.env_source = env
    return model


def load(path: str | Path, env: Any = None, **overrides: Any) -> RLModel:
    """Load any lit-sb3 model file; the algorithm is found through the registry from the file itself."""
    return load_model(path, env=env, expected_cls=None, **overrides)
