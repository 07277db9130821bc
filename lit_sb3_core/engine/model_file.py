"""Model files: a zip of JSON metadata and safetensors tensors. Loading never unpickles anything.

Layout of ``model.zip``::

    metadata.json          format version, algorithm registry name, library version, hyperparameters
                           (a callable schedule as its sampled values: ``foundation.schedules``),
                           spaces as JSON, counters, optimizer param groups
    model.safetensors      the algorithm's state dict: policy (and target networks, normalization
                           statistics, ... whatever modules the algorithm holds)
    optimizers.safetensors every optimizer's per-parameter state, keys ``<i>/<param>/<name>``
    episodes.safetensors   the training envs' current observations (``last_obs``, ``last_obs.<key>`` for
                           Dict spaces) and ``episode_starts``, when the model has an env: SB3's
                           ``load(path, env, force_reset=False)`` continues those episodes

Writes go to a temporary file beside the target and are renamed into place, so a failed save (a full
disk, an interrupt) leaves the previous file as it was (:mod:`lit_sb3_core.foundation.files`).

Reading checks everything the file declares before using it: the size of every member, the shape and
dtype of every tensor against the model the metadata describes (built on the meta device), and every
metadata field; a failure is a :class:`~lit_sb3_core.errors.ModelFileError` naming the file and the
field.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np
import torch
from safetensors.torch import load as load_safetensors
from safetensors.torch import save as save_safetensors

from lit_sb3_core._version import __version__
from lit_sb3_core.engine.file_checks import (
    check_counter,
    check_named_classes,
    check_normalization,
    check_param_groups,
    check_plain_values,
    check_spaces,
    check_state_against,
    check_tensor_values,
    is_sb3_archive,
    rebuild_error,
    refuse,
)
from lit_sb3_core.engine.protocol import RLModel
from lit_sb3_core.errors import ConfigurationError, ModelFileError
from lit_sb3_core.foundation.checks import is_int
from lit_sb3_core.foundation.files import is_file_object, spooled_copy, write_atomically
from lit_sb3_core.foundation.schedules import SAMPLES, is_sampled, schedule_from_json, schedule_to_json
from lit_sb3_core.foundation.spaces import describe_space, space_from_json, space_to_json

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FORMAT_VERSION", "ModelFile", "load", "load_model", "read_model_file", "save_model"]

FORMAT_VERSION = 1
_METADATA = "metadata.json"
_WEIGHTS = "model.safetensors"
_OPTIMIZERS = "optimizers.safetensors"
_EPISODES = "episodes.safetensors"
# metadata.json holds hyperparameters and spaces: kilobytes. A larger one is damaged or a decompression bomb.
_MAX_METADATA_BYTES = 16 * 2**20

_log = logging.getLogger(__name__)


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


def save_model(
    model: RLModel,
    path: str | Path | IO[bytes],
    exclude: Iterable[str] | None = None,
    include: Iterable[str] | None = None,
) -> Path | IO[bytes]:
    """Write ``model`` to ``path`` (``.zip`` added when there is no suffix) atomically, or into an open
    binary file, which is left open.

    ``exclude`` and ``include`` are SB3's: excluded hyperparameters are left out of the file (a load
    gives them their defaults); included ones are written with the model's current value of the
    attribute of that name (``model.verbose = 2`` then ``save(..., include=["verbose"])``), even when
    also excluded. Names that are not hyperparameters are ignored, as SB3 ignores them.
    """
    model.require_policy()
    parameters = model.get_parameters()
    # Lightning stands in an empty "No Optimizer" when configure_optimizers returns None (ARS): skip it.
    optimizers = [state for name, state in parameters.items() if name.startswith("optimizer") and state]
    optimizer_tensors, param_groups = _optimizer_payload(optimizers)
    hyperparameters = _hyperparameters_to_save(model, set(exclude or ()), set(include or ()))
    try:
        json.dumps(hyperparameters)
    except TypeError as exc:
        raise ModelFileError(
            f"Cannot save {type(model).__name__}: a hyperparameter is not a plain JSON value ({exc}). Pass "
            "classes as import strings ('package.module:Class') and other objects as numbers or strings."
        ) from None
    extra_state = model.extra_state()
    try:
        json.dumps(extra_state)
    except TypeError as exc:
        raise ModelFileError(
            f"Cannot save {type(model).__name__}: extra_state() must return plain JSON values ({exc}); keep "
            "tensors in the module (register_buffer), they are saved with the weights."
        ) from None
    if not isinstance(extra_state, dict):
        raise ModelFileError(
            f"Cannot save {type(model).__name__}: extra_state() must return a dict, got {type(extra_state).__name__}."
        )
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
        "extra_state": extra_state,
    }
    # A torch.compile'd policy (model.policy = torch.compile(model.policy)) keeps its weights under
    # "_orig_mod.": the file holds the module's own names, so it loads into the uncompiled model.
    state = {
        k.replace("._orig_mod.", "."): v.detach().cpu().contiguous() for k, v in model.state_dict().items()
    }
    episodes = _episodes_payload(model)

    def write(handle: Any) -> None:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(_METADATA, json.dumps(metadata, indent=2))
            # Tensors are stored, not deflated: float weights barely compress, and deflating a 2 GB model
            # takes minutes (SB3's test_save_load_large_model).
            archive.writestr(_WEIGHTS, save_safetensors(state), compress_type=zipfile.ZIP_STORED)
            archive.writestr(
                _OPTIMIZERS, save_safetensors(optimizer_tensors), compress_type=zipfile.ZIP_STORED
            )
            if episodes:
                archive.writestr(_EPISODES, save_safetensors(episodes), compress_type=zipfile.ZIP_STORED)

    if is_file_object(path):  # SB3's save(file_object): written in place, left open
        write(path)
        return cast("IO[bytes]", path)
    return write_atomically(_with_suffix(cast("str | Path", path)), write)


def _episodes_payload(model: RLModel) -> dict[str, torch.Tensor]:
    """The episodes in flight as tensors; empty without an env, or for observations that are not arrays
    or a Dict of arrays (Tuple spaces), whose episodes a load then starts afresh."""
    last_obs = model.last_obs
    starts = model.last_episode_starts
    if last_obs is None or len(starts) == 0:
        return {}
    arrays = last_obs if isinstance(last_obs, dict) else {"": last_obs}
    if not all(isinstance(value, np.ndarray) and value.dtype != object for value in arrays.values()):
        return {}
    tensors = {
        f"last_obs.{key}" if key else "last_obs": torch.from_numpy(np.ascontiguousarray(value))
        for key, value in arrays.items()
    }
    tensors["episode_starts"] = torch.from_numpy(np.asarray(starts, dtype=bool))
    return tensors


def _episodes_in_flight(
    archive: _Archive, observation_space: Any, source: str
) -> tuple[Any, np.ndarray] | None:
    """The stored observations and episode starts. Their names and shapes, as the member's header declares
    them, are checked against the observation space before anything is read (as the weights are)."""
    declared = archive.declared.get(_EPISODES)
    if declared is None:
        return None
    starts = declared.get("episode_starts")
    if starts is None or starts[1] != torch.bool or len(starts[0]) != 1:
        raise refuse(source, "episodes.episode_starts", "must be a 1-d bool tensor (one flag per env).")
    n_envs = starts[0][0]
    spaces = dict(observation_space.spaces) if isinstance(observation_space, gym.spaces.Dict) else None
    expected = (
        {f"last_obs.{key}": space for key, space in spaces.items()}
        if spaces
        else {"last_obs": observation_space}
    )
    observations = {name: shape for name, (shape, _) in declared.items() if name != "episode_starts"}
    if set(observations) != set(expected):
        raise refuse(
            source,
            "episodes",
            f"holds {sorted(observations)}, but the observation space needs {sorted(expected)}.",
        )
    for name, space in expected.items():
        shape = (n_envs, *(space.shape or ()))
        if tuple(observations[name]) != shape:
            raise refuse(
                source, f"episodes.{name}", f"has shape {tuple(observations[name])}, expected {shape}."
            )
    arrays = {name: tensor.numpy() for name, tensor in _read_tensors(archive, _EPISODES, "episodes.").items()}
    last_obs = {key: arrays[f"last_obs.{key}"] for key in spaces} if spaces else arrays["last_obs"]
    return last_obs, arrays["episode_starts"]


def _hyperparameters_to_save(model: RLModel, exclude: set[str], include: set[str]) -> dict[str, Any]:
    hyperparameters = {k: v for k, v in dict(model.hparams).items() if k not in exclude - include}
    for name in include & _constructor_parameters(type(model)):
        value = getattr(model, name, None)
        if value is None or isinstance(value, (bool, int, float, str)):
            hyperparameters[name] = value
        elif name in model.hparams:  # an object attribute (a schedule, a class): its stored value
            hyperparameters[name] = model.hparams[name]
    try:  # a callable schedule (a lambda) is written as numbers: files hold no code
        return {name: schedule_to_json(value, name) for name, value in hyperparameters.items()}
    except ConfigurationError as exc:
        raise ModelFileError(f"Cannot save {type(model).__name__}: {exc}") from None


def read_model_file(path: str | Path) -> ModelFile:
    """Decode a model file, refusing missing, empty, corrupt, tampered and newer-format files clearly.

    Every zip member's declared size, every tensor's declared shape and every metadata field is checked
    before anything is read into memory (see :func:`load_model` for the checks against the model).
    """
    archive = _inspect(path)
    state = _read_tensors(archive, _WEIGHTS, "weights.")
    optimizer_tensors = _read_tensors(archive, _OPTIMIZERS, "optimizer_state.")
    return ModelFile(archive.metadata, state, _optimizer_states(archive, optimizer_tensors))


@dataclass
class _Archive:
    """An opened model file: its validated metadata and the tensors its members declare (nothing read)."""

    source: str
    path: Path
    metadata: dict[str, Any]
    declared: dict[str, dict[str, tuple[tuple[int, ...], torch.dtype]]]  # member -> name -> (shape, dtype)


# safetensors dtype codes -> (torch dtype, bytes per element)
_DTYPES: dict[str, tuple[torch.dtype, int]] = {
    "F64": (torch.float64, 8),
    "F32": (torch.float32, 4),
    "F16": (torch.float16, 2),
    "BF16": (torch.bfloat16, 2),
    "I64": (torch.int64, 8),
    "I32": (torch.int32, 4),
    "I16": (torch.int16, 2),
    "I8": (torch.int8, 1),
    "U8": (torch.uint8, 1),
    "BOOL": (torch.bool, 1),
}
# A safetensors header lists names, dtypes and shapes: kilobytes.
_MAX_HEADER_BYTES = 16 * 2**20
# Trained weights barely compress; a member that inflates more than this (and to more than the floor) is
# a decompression bomb, whatever shapes it declares.
_MAX_INFLATION = 200
_INFLATION_FLOOR_BYTES = 64 * 2**20


def _inspect(path: str | Path) -> _Archive:
    given = str(path)
    candidate = Path(path)
    if not candidate.exists() and not candidate.suffix:
        candidate = candidate.with_suffix(".zip")
    if not candidate.exists():
        raise FileNotFoundError(f"No model file at {given!r}.")
    if candidate.is_dir():
        raise refuse(given, None, "is a directory, not a model file.")
    if candidate.stat().st_size == 0:
        raise refuse(given, None, "is empty (0 bytes): the save that wrote it failed.")
    with candidate.open("rb") as handle:
        head = handle.read(4)
    if head != b"PK\x03\x04":
        raise refuse(given, None, f"is not a model file: it wasn't a zip-file (it starts with {head!r}).")
    try:
        with zipfile.ZipFile(candidate) as archive:
            names = set(archive.namelist())
            missing = {_METADATA, _WEIGHTS} - names
            if missing and {"data", "policy.pth"} <= names:
                raise refuse(
                    given,
                    None,
                    f"is a Stable-Baselines3 model file: load it with the algorithm's class, e.g. "
                    f"lit_sb3.PPO.load({given!r}), which reads its weights and readable fields without "
                    "unpickling anything.",
                )
            first = _first_member_name(candidate)
            if missing and first is not None and first not in names:
                # The directory zipfile found belongs to a zip stored inside (SB3's policy.pth is one):
                # the file's own directory, written last, is missing.
                kind = "Stable-Baselines3 " if first == "data" else ""
                raise refuse(
                    given,
                    None,
                    f"is a truncated {kind}model file: its zip directory is missing (the save did not finish, or "
                    "the copy or download was cut short). Save or copy it again.",
                )
            if missing:
                raise refuse(
                    given, None, f"is a zip file but not a lit-sb3 model file (missing {sorted(missing)})."
                )
            info = archive.getinfo(_METADATA)
            if info.file_size > _MAX_METADATA_BYTES:
                raise refuse(
                    given,
                    _METADATA,
                    f"would unpack to {info.file_size} bytes (at most {_MAX_METADATA_BYTES} are read): "
                    "the file is damaged or a decompression bomb.",
                )
            for name in (_METADATA, _WEIGHTS, _OPTIMIZERS, _EPISODES):
                if name in names:
                    _check_member_size(archive.getinfo(name), given)
            try:
                metadata = json.loads(archive.read(_METADATA))
            except RecursionError:
                raise refuse(
                    given,
                    _METADATA,
                    "is JSON nested too deeply to be lit-sb3 metadata (damaged or tampered with).",
                ) from None
            _check_metadata(metadata, given)
            declared = {
                name: _declared_tensors(archive, archive.getinfo(name), given)
                for name in (_WEIGHTS, _OPTIMIZERS, _EPISODES)
                if name in names
            }
    except ModelFileError:
        raise
    except (
        zipfile.BadZipFile,
        EOFError,
        json.JSONDecodeError,
        UnicodeDecodeError,
        ValueError,
        OSError,
    ) as exc:
        raise refuse(given, None, f"is truncated or corrupt ({type(exc).__name__}: {exc}).") from None
    return _Archive(given, candidate, metadata, declared)


def _first_member_name(path: Path) -> str | None:
    """The name in the zip's first local header (at offset 0), or None when it cannot be read."""
    with path.open("rb") as handle:
        header = handle.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            return None
        length = int.from_bytes(header[26:28], "little")
        return handle.read(length).decode("utf-8", errors="replace")


def _check_member_size(info: zipfile.ZipInfo, source: str) -> None:
    if info.file_size > _INFLATION_FLOOR_BYTES and info.file_size > _MAX_INFLATION * max(
        info.compress_size, 1
    ):
        raise refuse(
            source,
            info.filename,
            f"would inflate from {info.compress_size} to {info.file_size} bytes ({_MAX_INFLATION}x at most is "
            "read): the file is a decompression bomb, not saved weights.",
        )


def _declared_tensors(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, source: str
) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
    """Names, shapes and dtypes a safetensors member declares, checked against the member's own size."""
    member = info.filename
    if info.file_size < 8:
        raise refuse(source, member, f"is {info.file_size} bytes, too short for a safetensors payload.")
    with archive.open(info) as handle:
        header_size = int.from_bytes(handle.read(8), "little")
        if header_size > min(_MAX_HEADER_BYTES, info.file_size - 8):
            raise refuse(
                source,
                member,
                f"is truncated or corrupt, or not a safetensors payload: it declares a {header_size}-byte "
                f"header in {info.file_size} bytes.",
            )
        try:
            header = json.loads(handle.read(header_size))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise refuse(
                source,
                member,
                "is truncated or corrupt, or not a safetensors payload (its header is not JSON).",
            ) from None
    if not isinstance(header, dict):
        raise refuse(source, member, "is not a safetensors payload (its header is not a JSON object).")
    data_size = info.file_size - 8 - header_size
    declared: dict[str, tuple[tuple[int, ...], torch.dtype]] = {}
    end_of_data = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        where = f"{member}[{name!r}]"
        if not isinstance(entry, dict) or entry.get("dtype") not in _DTYPES:
            raise refuse(source, where, f"has no known dtype (one of {sorted(_DTYPES)}).")
        dtype, itemsize = _DTYPES[entry["dtype"]]
        shape, offsets = entry.get("shape"), entry.get("data_offsets")
        if not (isinstance(shape, list) and all(is_int(d, 0) for d in shape)):
            raise refuse(source, where, f"has an invalid shape {shape!r}.")
        if not (
            isinstance(offsets, list)
            and len(offsets) == 2
            and all(isinstance(o, int) and o >= 0 for o in offsets)
        ):
            raise refuse(source, where, f"has invalid data offsets {offsets!r}.")
        count = math.prod(shape)
        begin, end = offsets
        if end - begin != count * itemsize or end > data_size:
            raise refuse(
                source,
                where,
                f"declares shape {shape} ({count * itemsize} bytes) but spans bytes {begin}..{end} of a "
                f"{data_size}-byte payload.",
            )
        end_of_data = max(end_of_data, end)
        declared[name] = (tuple(shape), dtype)
    if end_of_data != data_size:
        raise refuse(
            source, member, f"holds {data_size} bytes of data but its tensors declare {end_of_data}."
        )
    return declared


def _read_tensors(archive: _Archive, member: str, prefix: str) -> dict[str, torch.Tensor]:
    if member not in archive.declared:
        return {}
    try:
        with zipfile.ZipFile(archive.path) as opened:
            tensors = load_safetensors(opened.read(member))
    except Exception as exc:  # safetensors raises its own error types on damaged payloads
        raise refuse(
            archive.source, member, f"is truncated or corrupt ({type(exc).__name__}: {exc})."
        ) from None
    check_tensor_values(tensors, archive.source, prefix)
    return tensors


def _check_metadata(metadata: Any, given: str) -> None:
    """Every metadata field, with one error type naming the file and the field."""
    if not isinstance(metadata, dict) or metadata.get("library") != "lit-sb3":
        raise refuse(given, None, "is not a lit-sb3 model file (its metadata does not say lit-sb3).")
    version = metadata.get("format_version")
    if not is_int(version, 1):
        raise refuse(given, "format_version", f"must be a positive integer, got {version!r}.")
    if version > FORMAT_VERSION:
        raise refuse(
            given,
            "format_version",
            f"is {version}: the file uses model file format {version}, newer than this lit-sb3 ({__version__}) "
            f"reads (format {FORMAT_VERSION}). Upgrade "
            "lit-sb3-core to load it.",
        )
    for key in ("algo", "hyperparameters", "observation_space", "action_space"):
        if key not in metadata:
            raise refuse(given, None, f"is missing {key!r} in its metadata.")
    algo = metadata["algo"]
    if not isinstance(algo, str) or not algo.strip() or len(algo) > 200:
        raise refuse(given, "algo", f"must be an algorithm's registry name, got {algo!r}.")
    for key in ("class", "library_version"):
        if key in metadata and not isinstance(metadata[key], str):
            raise refuse(given, key, f"must be a string, got {metadata[key]!r}.")
    hyperparameters = metadata["hyperparameters"]
    if not isinstance(hyperparameters, dict) or not all(isinstance(key, str) for key in hyperparameters):
        raise refuse(
            given,
            "hyperparameters",
            f"must map argument names to values (a JSON object), got {hyperparameters!r}.",
        )
    check_plain_values(metadata, given, "metadata")
    check_spaces(metadata, given)
    for key in ("num_timesteps", "iterations", "n_updates"):
        check_counter(metadata.get(key, 0), given, key)
    check_param_groups(metadata.get("optimizer_param_groups", []), given)
    check_normalization(metadata.get("normalization"), given)
    extra_state = metadata.get("extra_state", {})
    if not isinstance(extra_state, dict) or not all(isinstance(key, str) for key in extra_state):
        raise refuse(given, "extra_state", f"must be a JSON object, got {extra_state!r}.")


def _optimizer_states(archive: _Archive, tensors: dict[str, torch.Tensor]) -> list[dict[str, Any]]:
    all_groups = archive.metadata.get("optimizer_param_groups", [])
    states: list[dict[str, Any]] = [{"state": {}, "param_groups": copy.deepcopy(g)} for g in all_groups]
    for key, tensor in tensors.items():
        index, _, rest = key.partition("/")
        param_id, _, name = rest.partition("/")
        if not (index.isdigit() and param_id.isdigit() and name) or int(index) >= len(states):
            raise refuse(
                archive.source, f"optimizer_state[{key!r}]", "does not name an optimizer's parameter state."
            )
        known = {p for group in all_groups[int(index)] for p in group["params"]}
        if int(param_id) not in known:
            raise refuse(
                archive.source,
                f"optimizer_state[{key!r}]",
                f"is for parameter {param_id}, which optimizer {index}'s param groups do not list.",
            )
        states[int(index)]["state"].setdefault(int(param_id), {})[name] = tensor
    for state in states:
        for group in state["param_groups"]:
            if "betas" in group:
                group["betas"] = tuple(group["betas"])
    return states


def _rebuild(cls: type[RLModel], hyperparameters: dict[str, Any], source: str) -> RLModel:
    try:
        return cls(**hyperparameters)
    except (ConfigurationError, TypeError) as exc:
        explained = rebuild_error(exc, source, "hyperparameters.")
        if explained is None:
            raise
        raise explained from exc


def _build(
    model: RLModel, observation_space: Any, action_space: Any, metadata: dict[str, Any], source: str
) -> None:
    try:
        model.build_policy(observation_space, action_space)
        model.configure_normalization(metadata.get("normalization"))
    except ConfigurationError as exc:
        explained = rebuild_error(exc, source, "hyperparameters.")
        assert explained is not None
        raise explained from exc


def _expected_state(
    cls: type[RLModel],
    hyperparameters: dict[str, Any],
    observation_space: Any,
    action_space: Any,
    metadata: dict[str, Any],
    source: str,
) -> dict[str, tuple[tuple[int, ...], torch.dtype]] | None:
    """Shapes and dtypes of the state dict the metadata describes, from a model built on the meta device
    (no memory is allocated for it). None when the algorithm cannot be built there (checked after the
    real build instead)."""
    probe = _rebuild(cls, hyperparameters, source)
    try:
        with torch.device("meta"):
            _build(probe, observation_space, action_space, metadata, source)
    except ModelFileError:
        raise
    except Exception as exc:
        _log.debug(
            "%s cannot be built on the meta device (%s); checking its weights after building.", cls, exc
        )
        return None
    return {name: (tuple(t.shape), t.dtype) for name, t in probe.state_dict().items()}


def load_model(
    path: str | Path | IO[bytes],
    env: Any = None,
    expected_cls: type[RLModel] | None = None,
    device: str | None = None,
    custom_objects: dict[str, Any] | None = None,
    print_system_info: bool = False,
    force_reset: bool = True,
    **overrides: Any,
) -> RLModel:
    """Rebuild the algorithm stored in ``path``; ``expected_cls`` refuses files of other algorithms.

    Before any weight is read, the metadata is validated field by field and the model it describes is
    built on the meta device: the tensors the file declares must be exactly that model's (names, shapes,
    dtypes), so a tampered file cannot allocate more than the model, and weights that are not floating
    point where the model's are, or not finite, are refused.

    A Stable-Baselines3 file goes to ``expected_cls.load_sb3`` (see ``lit_sb3_core.sb3.model_zip``).
    ``custom_objects`` replace stored values (SB3's semantics): constructor arguments and spaces by name,
    other keys (``lr_schedule``) as attributes of the built model; ``overrides`` change constructor
    arguments too. ``device`` replaces the stored device unless it is ``None`` or ``"auto"``.
    ``force_reset=False`` with an ``env`` continues the episodes the file saved as in flight (SB3's
    semantics: the caller promises ``env`` is still in that state, e.g. the env the model was saved from);
    otherwise the next ``learn`` starts on freshly reset environments.
    ``path`` may also be an open binary file (SB3's ``load(file_object)``), which is left open.
    """
    if is_file_object(path):
        with spooled_copy(cast("IO[bytes]", path), ".zip") as copy:
            return load_model(
                copy, env, expected_cls, device, custom_objects, print_system_info, force_reset, **overrides
            )
    path = cast("str | Path", path)
    sb3_path = _sb3_file(path)
    if sb3_path is not None:
        if (
            expected_cls is None
            or not getattr(expected_cls, "algo_name", "")
            or not hasattr(expected_cls, "load_sb3")
        ):
            raise refuse(
                str(path),
                None,
                "is a Stable-Baselines3 model file, which does not name its algorithm: load it with the "
                f"algorithm's class, e.g. lit_sb3.PPO.load({str(path)!r}).",
            )
        return expected_cls.load_sb3(
            sb3_path,
            env=env,
            device=device or "auto",
            custom_objects=custom_objects,
            print_system_info=print_system_info,
            **overrides,
        )
    archive = _inspect(path)
    source, metadata = archive.source, archive.metadata
    algo = metadata["algo"]
    if expected_cls is not None and expected_cls.algo_name and expected_cls.algo_name != algo:
        raise refuse(
            source,
            "algo",
            f"is {algo!r}: the file holds a {algo!r} model, not {expected_cls.algo_name!r}. Load it with "
            f"lit_sb3.load({source!r}) or that algorithm's class.",
        )
    if print_system_info:
        print("== SAVED MODEL SYSTEM INFO ==")
        print(
            f"lit-sb3 {metadata.get('library_version', 'unknown')}, model file format {metadata['format_version']}"
        )
        print("== CURRENT SYSTEM INFO ==")
        print(f"lit-sb3 {__version__}, torch {torch.__version__}")
    cls = expected_cls
    if cls is None or not cls.algo_name:
        from lit_sb3_core.registry.registry import get_algo_class

        cls = get_algo_class(algo)
    custom = dict(custom_objects or {})
    observation_space = custom.pop("observation_space", None) or space_from_json(
        metadata["observation_space"]
    )
    action_space = custom.pop("action_space", None) or space_from_json(metadata["action_space"])
    hyperparameters = _saved_schedules(dict(metadata["hyperparameters"]), custom, source)
    parameters = _constructor_parameters(cls)
    if "policy_kwargs" in overrides and overrides["policy_kwargs"] != hyperparameters.get("policy_kwargs"):
        raise ValueError(
            f"The specified policy_kwargs {overrides['policy_kwargs']} differ from those stored in "
            f"{source!r}: {hyperparameters.get('policy_kwargs')}."
        )
    attributes: dict[str, Any] = {}
    custom_attributes: dict[str, Any] = {}
    for replacements, others in ((custom, custom_attributes), (overrides, attributes)):
        for key, value in replacements.items():
            if key in parameters:
                hyperparameters[key] = value
            else:
                others[key] = value
    if device not in (None, "auto") and "device" in parameters:  # "auto" keeps the device it was saved with
        hyperparameters["device"] = device
    check_named_classes(cls, hyperparameters, source, "hyperparameters.")
    model = _rebuild(cls, hyperparameters, source)
    if env is not None:
        from lit_sb3_core.engine.datamodule import probe_spaces

        env_obs, env_act = probe_spaces(env)
        if env_obs != observation_space or env_act != action_space:
            raise refuse(
                source,
                None,
                f"was saved for observations {describe_space(observation_space)} and actions "
                f"{describe_space(action_space)}, but the given env has {describe_space(env_obs)} and "
                f"{describe_space(env_act)}.",
            )
    what = f"the {algo!r} model its metadata describes"
    expected = _expected_state(cls, hyperparameters, observation_space, action_space, metadata, source)
    if expected is not None:
        check_state_against(expected, archive.declared[_WEIGHTS], source, "weights.", what)
        _check_optimizer_size(archive, expected)
    state = _read_tensors(archive, _WEIGHTS, "weights.")
    optimizer_states = _optimizer_states(archive, _read_tensors(archive, _OPTIMIZERS, "optimizer_state."))
    _build(model, observation_space, action_space, metadata, source)
    if expected is None:
        actual = {name: (tuple(t.shape), t.dtype) for name, t in model.state_dict().items()}
        check_state_against(
            actual, {k: (tuple(v.shape), v.dtype) for k, v in state.items()}, source, "weights.", what
        )
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        raise refuse(source, "weights", f"do not fit the {algo!r} policy: {exc}") from None
    model.num_timesteps = int(metadata.get("num_timesteps", 0))
    model.iterations = int(metadata.get("iterations", 0))
    model.n_updates = int(metadata.get("n_updates", 0))
    model.pending_optimizer_states = optimizer_states
    model.load_extra_state(dict(metadata.get("extra_state", {})))
    # SB3 replaces only what the model holds: custom_objects keys it has no use for are ignored.
    _set_attributes(model, _known_attributes(model, custom_attributes), source, sorted(parameters))
    _set_attributes(model, attributes, source, sorted(parameters))
    if env is not None:
        episodes = None if force_reset else _episodes_in_flight(archive, observation_space, source)
        model.set_env(env, force_reset=force_reset, episodes=episodes)
    return model


def _saved_schedules(hyperparameters: dict[str, Any], custom: dict[str, Any], source: str) -> dict[str, Any]:
    """``hyperparameters`` with saved schedules rebuilt; a warning for each callable that was saved as
    samples (a lambda) and that ``custom_objects`` does not replace."""
    rebuilt = {}
    for name, value in hyperparameters.items():
        try:
            rebuilt[name] = schedule_from_json(value, name)
        except ConfigurationError as exc:
            raise refuse(source, f"hyperparameters.{name}", f"is damaged: {exc}") from None
    sampled = sorted(
        name for name, value in hyperparameters.items() if is_sampled(value) and name not in custom
    )
    for name in sampled:
        warnings.warn(
            f"{source}: {name} was a Python function when saved. Model files hold no code, so it is "
            f"rebuilt from its values at {SAMPLES} evenly spaced points of training (linear in between). "
            f"Pass custom_objects={{{name!r}: <the function>}} to load(...) to use the function itself.",
            UserWarning,
            stacklevel=4,
        )
    return rebuilt


def _check_optimizer_size(
    archive: _Archive, expected: dict[str, tuple[tuple[int, ...], torch.dtype]]
) -> None:
    """Optimizer state is a few tensors per parameter (Adam: two and a step count), never more."""
    declared = archive.declared.get(_OPTIMIZERS, {})
    weights = sum(math.prod(shape) for shape, _ in expected.values())
    held = sum(math.prod(shape) for shape, _ in declared.values())
    if held > 4 * weights + 4096:
        raise refuse(
            archive.source,
            _OPTIMIZERS,
            f"declares {held} numbers of optimizer state for a model of {weights} numbers (at most 4 per "
            "weight are kept by any optimizer).",
        )


def _constructor_parameters(cls: type) -> set[str]:
    import inspect

    return {name for name in inspect.signature(cls).parameters if name != "self"}


def _known_attributes(model: Any, custom: dict[str, Any]) -> dict[str, Any]:
    """The ``custom_objects`` entries that name something the model holds (``lr_schedule``, a plain
    attribute); the others are dropped with a debug message, as SB3 drops what its file does not hold."""
    known = {}
    for key, value in custom.items():
        current = getattr(model, key, _NO_ATTRIBUTE)
        if key == "lr_schedule" or not (
            current is _NO_ATTRIBUTE
            or isinstance(current, (torch.nn.Module, torch.Tensor))
            or callable(current)
        ):
            known[key] = value
        else:
            _log.debug(
                "load(custom_objects=...): %s has no attribute %r to replace; ignored.", type(model), key
            )
    return known


def _set_attributes(model: Any, attributes: dict[str, Any], path: str, parameters: list[str]) -> None:
    """SB3's ``model.__dict__.update(...)`` for the keys that are not constructor arguments."""
    for key, value in attributes.items():
        if key == "lr_schedule":
            from lit_sb3_core.foundation.schedules import make_schedule

            model.lr_schedule = make_schedule(value, "lr_schedule")
            continue
        current = getattr(model, key, _NO_ATTRIBUTE)
        if (
            current is _NO_ATTRIBUTE
            or isinstance(current, (torch.nn.Module, torch.Tensor))
            or callable(current)
        ):
            raise refuse(
                path,
                key,
                f"cannot be set by load(..., {key}=...): {type(model).__name__} has no constructor argument or "
                f"plain attribute {key!r}. Its constructor arguments are {', '.join(parameters)}.",
            )
        setattr(model, key, value)


_NO_ATTRIBUTE = object()


def _sb3_file(path: str | Path) -> Path | None:
    """The file at ``path`` (``.zip`` added as SB3 does) if it is a Stable-Baselines3 model file."""
    candidate = Path(path)
    if not candidate.exists() and not candidate.suffix:
        candidate = candidate.with_suffix(".zip")
    if not candidate.is_file():
        return None
    try:
        with zipfile.ZipFile(candidate) as archive:
            return candidate if is_sb3_archive(archive.namelist()) else None
    except (zipfile.BadZipFile, OSError):
        return None


def load(
    path: str | Path,
    env: Any = None,
    device: str | None = None,
    custom_objects: dict[str, Any] | None = None,
    print_system_info: bool = False,
    force_reset: bool = True,
    **overrides: Any,
) -> RLModel:
    """Load any lit-sb3 model file; the algorithm is found through the registry from the file itself."""
    return load_model(
        path,
        env=env,
        expected_cls=None,
        device=device,
        custom_objects=custom_objects,
        print_system_info=print_system_info,
        force_reset=force_reset,
        **overrides,
    )
