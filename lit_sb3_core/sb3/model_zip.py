"""Reading model files written by Stable-Baselines3 / sb3-contrib 2.x without unpickling anything.

An SB3 ``.zip`` holds ``data`` (JSON), ``policy.pth`` (the policy's state dict), ``pytorch_variables.pth``
(extra tensors such as SAC's ``log_ent_coef``), optimizer ``.pth`` files and ``system_info.txt``. Every
value of ``data`` that JSON cannot hold is stored as ``{":type:": ..., ":serialized:": <base64 pickle>}``
next to the object's first-level attributes in readable form (numbers, or ``str()`` of the attribute).
Here the pickles are never decoded: the ``.pth`` files are read with ``torch.load(weights_only=True)``
(tensors and plain containers only), and values come from the readable fields:

* spaces from ``dtype``/``_shape``/``low``/``high``/``n``/``nvec``/``start`` (numpy's ``str`` of arrays)
  and ``Dict`` spaces from the ``repr`` of their sub-spaces, parsed as text;
* schedules from ``FloatSchedule.value_schedule`` (``ConstantSchedule(val=...)``, ``LinearSchedule(...)``);
* classes in ``policy_kwargs`` from their ``<class 'module.Name'>`` text, mapped to lit-sb3's names;
* the policy class's name from the text of its methods (``<function SACPolicy.forward at ...>``).

What exists only as a pickle (``train_freq``, a lambda learning rate, a summarized image bound) is either
taken from ``env=`` / ``custom_objects`` or reported: :class:`SB3Fields` keeps a list of the fields it
could not read. Each algorithm maps SB3's hyperparameters and weight names to its own through class
methods (see ``lit_sb3_core.sb3.file_hooks``); the orchestration lives in :func:`load_sb3_model`.
"""

from __future__ import annotations

import io
import json
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.engine.file_checks import (
    check_counter,
    check_named_classes,
    check_tensor_values,
    is_sb3_archive,
)
from lit_sb3_core.errors import ModelFileError
from lit_sb3_core.foundation.checks import is_int
from lit_sb3_core.foundation.schedules import LinearSchedule
from lit_sb3_core.foundation.spaces import MAX_DISCRETE_ACTIONS, MAX_SPACE_ELEMENTS, describe_space

__all__ = [
    "SB3Fields",
    "SB3File",
    "is_sb3_archive",
    "load_sb3_model",
    "parse_numpy_text",
    "parse_space_repr",
    "read_sb3_file",
]

_DATA = "data"
_POLICY = "policy.pth"
_VARIABLES = "pytorch_variables.pth"
_MAX_DATA_BYTES = 16 * 2**20
_MAX_TEXT_BYTES = 2**20  # system_info.txt, _stable_baselines3_version
_MAX_INFLATION = (
    200  # a member may unpack to 200x its compressed size (when over the floor), as lit-sb3's own
)
_INFLATION_FLOOR_BYTES = 64 * 2**20
_MAX_SPACE_DEPTH = 32
_MAX_DIMENSIONS = 8
# SB3's own feature extractors, by class name, and what lit-sb3 calls them.
_SB3_EXTRACTORS = {"FlattenExtractor", "NatureCNN", "CombinedExtractor"}
_CLASS_TEXT = re.compile(r"^<class '([\w.]+)'>$")
_METHOD_TEXT = re.compile(r"<function (\w+)\.\w+ at 0x[0-9a-f]+>")


class NotReadable(ModelFileError):
    """A field of an SB3 file exists only in pickled form (or is missing)."""


@dataclass
class SB3File:
    """The parts of an SB3 model file that can be read safely."""

    path: str
    data: dict[str, Any]
    policy_state: dict[str, torch.Tensor]
    pytorch_variables: dict[str, torch.Tensor]
    other_states: dict[str, Any]  # optimizer state dicts by file stem ("policy.optimizer", ...)
    sb3_version: str
    system_info: str


def _torch_load(archive: zipfile.ZipFile, name: str, given: str) -> Any:
    try:
        return torch.load(io.BytesIO(archive.read(name)), map_location="cpu", weights_only=True)
    except Exception as exc:  # UnpicklingError when the file holds anything but tensors/containers
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        # torch's message suggests weights_only=False; keep only the line that says what was found.
        fallback = lines[0] if lines else type(exc).__name__
        reason = next(
            (line for line in lines if line.startswith(("Trying to load", "Unsupported"))), fallback
        )
        raise ModelFileError(
            f"{name} in {given!r} cannot be read as plain tensors ({reason}); "
            "lit-sb3 reads SB3 weight files with torch.load(weights_only=True) and never unpickles other objects."
        ) from None


def _check_member_size(info: zipfile.ZipInfo, given: str) -> None:
    """Before a member is read: text members are small, others do not inflate like a decompression bomb."""
    name, size = info.filename, info.file_size
    limit = _MAX_DATA_BYTES if name == _DATA else _MAX_TEXT_BYTES if not name.endswith(".pth") else None
    if limit is not None and size > limit:
        raise ModelFileError(
            f"The {name!r} entry of {given!r} would unpack to {size} bytes (at most {limit} are read): the file "
            "is damaged or a decompression bomb, not an SB3 model."
        )
    if size > _INFLATION_FLOOR_BYTES and size > _MAX_INFLATION * max(info.compress_size, 1):
        raise ModelFileError(
            f"The {name!r} entry of {given!r} would inflate from {info.compress_size} to {size} bytes "
            f"({_MAX_INFLATION}x at most is read): the file is a decompression bomb, not saved weights."
        )


def _check_shape(shape: tuple[int, ...], what: str) -> tuple[int, ...]:
    """A space's shape read from a file is small enough to allocate (checked before its bounds are read)."""
    if len(shape) > _MAX_DIMENSIONS or any(n < 0 for n in shape):
        raise NotReadable(f"{what} has the shape {shape}, which is not a space lit-sb3 reads from a file")
    size = 1
    for n in shape:
        size *= n
    if size > MAX_SPACE_ELEMENTS:
        raise NotReadable(
            f"{what} has the shape {shape} ({size} elements), more than the {MAX_SPACE_ELEMENTS} elements "
            "lit-sb3 reads from a file"
        )
    return shape


def _check_n(n: int, what: str) -> int:
    if not 1 <= n <= MAX_DISCRETE_ACTIONS:
        raise NotReadable(f"{what} must be an integer from 1 to {MAX_DISCRETE_ACTIONS}, got {n}")
    return n


def read_sb3_file(path: str | Path) -> SB3File:
    """Open an SB3 ``.zip``: JSON data and the weight files (``weights_only``), nothing unpickled."""
    given = str(path)
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            if not is_sb3_archive(names):
                raise ModelFileError(
                    f"{given!r} is not a Stable-Baselines3 model file (no 'data'/'policy.pth')."
                )
            for info in archive.infolist():
                _check_member_size(info, given)
            try:
                data = json.loads(archive.read(_DATA))
            except RecursionError:
                raise ModelFileError(
                    f"The 'data' entry of {given!r} is JSON nested too deeply to be SB3's data (damaged or "
                    "tampered with)."
                ) from None
            if not isinstance(data, dict):
                raise ModelFileError(f"The 'data' entry of {given!r} is not a JSON object.")
            policy_state = _torch_load(archive, _POLICY, given)
            variables = _torch_load(archive, _VARIABLES, given) if _VARIABLES in names else {}
            others = {
                name[: -len(".pth")]: _torch_load(archive, name, given)
                for name in names
                if name.endswith(".pth") and name not in (_POLICY, _VARIABLES)
            }
            version = (
                archive.read("_stable_baselines3_version").decode(errors="replace").strip()
                if ("_stable_baselines3_version" in names)
                else "unknown"
            )
            system_info = (
                archive.read("system_info.txt").decode(errors="replace")
                if ("system_info.txt" in names)
                else ""
            )
    except ModelFileError:
        raise
    except (zipfile.BadZipFile, json.JSONDecodeError, UnicodeDecodeError, OSError, KeyError, EOFError) as exc:
        raise ModelFileError(f"The SB3 model file {given!r} is truncated or corrupt ({exc}).") from None
    if not isinstance(policy_state, dict) or not all(
        isinstance(v, torch.Tensor) for v in policy_state.values()
    ):
        raise ModelFileError(f"policy.pth in {given!r} is not a state dict of tensors.")
    check_tensor_values(policy_state, given, "policy.pth: ")
    if not isinstance(variables, dict):
        variables = {}
    check_tensor_values(
        {k: v for k, v in variables.items() if isinstance(v, torch.Tensor)}, given, "pytorch_variables.pth: "
    )
    return SB3File(given, data, policy_state, variables, others, version, system_info)


# readable text of numpy arrays, spaces and schedules ---------------------------------------------------
def parse_numpy_text(text: str, shape: tuple[int, ...], dtype: Any, what: str) -> np.ndarray:
    """``str(ndarray)`` back to an array; summarized output (``...``, over 1000 numbers) is refused."""
    if "..." in text:
        raise NotReadable(
            f"{what} is stored summarized (more than 1000 numbers), so only its pickle is complete"
        )
    tokens = text.replace("[", " ").replace("]", " ").replace(",", " ").split()
    try:
        values = [_number(token) for token in tokens]
        array = np.array(values, dtype=dtype)
    except (ValueError, TypeError) as exc:
        raise NotReadable(f"{what} could not be read from {text!r} ({exc})") from None
    expected = int(np.prod(shape)) if shape else 1
    if array.size == 1 and expected > 1:
        array = np.full(shape, array.reshape(()), dtype=dtype)
    if array.size != expected:
        raise NotReadable(f"{what} holds {array.size} numbers, the shape {shape} needs {expected}")
    return array.reshape(shape)


def _number(token: str) -> Any:
    if token in ("True", "False"):
        return token == "True"
    try:
        return int(token)
    except ValueError:
        return float(token)  # also 'inf', '-inf', 'nan', '1.e-05'


def _space_from_fields(entry: dict[str, Any], what: str) -> spaces.Space:
    kind = _type_name(entry)
    try:
        if kind == "Box":
            shape = _check_shape(tuple(int(n) for n in entry["_shape"]), f"{what}._shape")
            dtype = np.dtype(entry["dtype"])
            low = parse_numpy_text(str(entry["low"]), shape, dtype, f"{what}.low")
            high = parse_numpy_text(str(entry["high"]), shape, dtype, f"{what}.high")
            return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
        if kind == "Discrete":
            return spaces.Discrete(_check_n(int(entry["n"]), f"{what}.n"), start=int(entry.get("start", 0)))
        if kind == "MultiDiscrete":
            shape = _check_shape(tuple(int(n) for n in entry["_shape"]), f"{what}._shape")
            nvec = parse_numpy_text(str(entry["nvec"]), shape, np.int64, f"{what}.nvec")
            start = parse_numpy_text(str(entry.get("start", "0")), shape, np.int64, f"{what}.start")
            return spaces.MultiDiscrete(nvec, start=start)
        if kind == "MultiBinary":
            n = entry["n"]
            n = n if isinstance(n, (int, list)) else int(n)
            _check_shape(tuple(n) if isinstance(n, list) else (n,), f"{what}.n")
            return spaces.MultiBinary(n)
        if kind == "Dict":
            return parse_space_repr(f"Dict({entry['spaces']!s})", what)
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, NotReadable):
            raise
        raise NotReadable(
            f"{what} could not be read from its readable fields ({type(exc).__name__}: {exc})"
        ) from None
    raise NotReadable(f"{what} is a {kind or 'unknown'} space, which lit-sb3 cannot rebuild from text")


def _type_name(entry: dict[str, Any]) -> str:
    match = re.match(r"<class '([\w.]+)'>", str(entry.get(":type:", "")))
    return match.group(1).rsplit(".", 1)[-1] if match else ""


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets and parentheses."""
    parts: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current).strip())
    return parts


def parse_space_repr(text: str, what: str = "space", depth: int = 0) -> spaces.Space:
    """A gymnasium space from its ``repr`` (``Box(-1.0, 1.0, (3,), float32)``, ``Discrete(3)``, ``Dict(...)``).

    Parsed as text, never evaluated; shapes and sizes are bounded before anything is allocated, and
    ``Dict`` nesting at ``_MAX_SPACE_DEPTH`` levels.
    """
    if depth > _MAX_SPACE_DEPTH:
        raise NotReadable(f"{what} nests Dict spaces more than {_MAX_SPACE_DEPTH} levels deep")
    text = text.strip()
    match = re.match(r"^(\w+)\((.*)\)$", text, flags=re.S)
    if not match:
        raise NotReadable(f"{what} could not be read from {text!r}")
    kind, inner = match.groups()
    if kind == "Dict":
        inner = inner.strip()
        if inner.startswith("{") and inner.endswith("}"):
            inner = inner[1:-1]
        result = {}
        for part in _split_top_level(inner):
            key, _, value = part.partition(":")
            result[key.strip().strip("'\"")] = parse_space_repr(value, f"{what}[{key.strip()}]", depth + 1)
        return spaces.Dict(result)
    args = _split_top_level(inner)
    positional = [a for a in args if not re.match(r"^\w+=", a)]
    named = dict(a.split("=", 1) for a in args if re.match(r"^\w+=", a))
    if kind == "Box" and len(positional) == 4:
        shape = tuple(int(n) for n in positional[2].strip("()").replace(",", " ").split())
        _check_shape(shape, f"{what}.shape")
        dtype = np.dtype(positional[3])
        low = parse_numpy_text(positional[0], shape, dtype, f"{what}.low")
        high = parse_numpy_text(positional[1], shape, dtype, f"{what}.high")
        return spaces.Box(low=low, high=high, shape=shape, dtype=dtype)
    if kind == "Discrete" and len(positional) == 1:
        return spaces.Discrete(_check_n(int(positional[0]), f"{what}.n"), start=int(named.get("start", 0)))
    if kind == "MultiDiscrete" and len(positional) == 1:
        _check_shape((len(positional[0].split()),), f"{what}.nvec")
        nvec = np.array(positional[0].strip("[]").split(), dtype=np.int64)
        start = named.get("start")
        starts = np.array(start.strip("[]").split(), dtype=np.int64) if start else None
        return spaces.MultiDiscrete(nvec, start=starts)
    if kind == "MultiBinary" and len(positional) == 1:
        value = positional[0]
        n = [int(v) for v in value.strip("[]()").replace(",", " ").split()]
        _check_shape(tuple(n), f"{what}.n")
        return spaces.MultiBinary(n[0] if len(n) == 1 and not value.startswith(("[", "(")) else n)
    raise NotReadable(f"{what} could not be read from {text!r}")


def parse_schedule_text(text: str) -> Any:
    """``ConstantSchedule(val=x)`` -> ``x``; ``LinearSchedule(start, end, end_fraction)`` -> a schedule."""
    text = text.strip()
    constant = re.match(r"^ConstantSchedule\(val=([^)]+)\)$", text)
    if constant:
        return float(constant.group(1))
    linear = re.match(r"^LinearSchedule\(start=([^,]+), end=([^,]+), end_fraction=([^)]+)\)$", text)
    if linear:
        start, end, fraction = (float(v) for v in linear.groups())
        return LinearSchedule(start, end, fraction)
    nested = re.match(r"^FloatSchedule\(value_schedule=(.*)\)$", text)
    if nested:
        return parse_schedule_text(nested.group(1))
    try:
        return float(text)
    except ValueError:
        raise NotReadable(f"the schedule {text!r} is a Python function, stored only as a pickle") from None


# the fields of one file ----------------------------------------------------------------------------------
@dataclass
class SB3Fields:
    """Typed access to an SB3 file's ``data``, recording what could not be read.

    ``custom_objects`` replace stored values (SB3's semantics): a key given there is never read from the
    file. Algorithms' ``hyperparameters_from_sb3`` hooks read through these methods.
    """

    file: SB3File
    custom_objects: dict[str, Any] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> dict[str, Any]:
        return self.file.data

    def has(self, key: str) -> bool:
        return key in self.custom_objects or key in self.data

    def is_pickled(self, key: str) -> bool:
        value = self.data.get(key)
        return isinstance(value, dict) and ":serialized:" in value

    def value(self, key: str, default: Any = None) -> Any:
        """A plain JSON value (or the custom object); ``default`` and a note in ``unread`` when pickled."""
        if key in self.custom_objects:
            return self.custom_objects[key]
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, dict) and ":serialized:" in value:
            self.unread[key] = f"a pickled {_type_name(value) or 'object'}"
            return default
        return value

    def schedule(self, key: str, default: Any = None) -> Any:
        """A number, or an SB3 schedule rebuilt from its readable text."""
        if key in self.custom_objects:
            return self.custom_objects[key]
        value = self.data.get(key)
        if value is None or isinstance(value, (int, float)):
            return default if value is None else value
        if isinstance(value, dict) and ":serialized:" in value:
            kind = _type_name(value)
            text = value.get("value_schedule")
            try:
                if text is not None:
                    return parse_schedule_text(str(text))
                if kind == "LinearSchedule":
                    return LinearSchedule(
                        float(value["start"]), float(value["end"]), float(value["end_fraction"])
                    )
                if kind == "ConstantSchedule":
                    return float(value["val"])
            except (NotReadable, KeyError, TypeError, ValueError):
                pass
            self.unread[key] = f"a pickled {kind or 'function'}"
            return default
        return value

    def space(self, key: str) -> spaces.Space:
        """An observation or action space; raises :class:`NotReadable` when only the pickle has it."""
        if key in self.custom_objects:
            return self.custom_objects[key]
        entry = self.data.get(key)
        if not isinstance(entry, dict):
            raise NotReadable(f"{key} is missing from the file")
        return _space_from_fields(entry, key)

    def class_name(self, key: str) -> str:
        """The name of a stored class (``policy_class``), read from the text of its methods."""
        entry = self.data.get(key)
        if not isinstance(entry, dict):
            raise NotReadable(f"{key} is missing from the file")
        names = [m.group(1) for text in entry.values() for m in [_METHOD_TEXT.search(str(text))] if m]
        if not names:
            raise NotReadable(f"{key} names no methods, so its class is known only from its pickle")
        init = [
            m.group(1)
            for k, t in entry.items()
            if k == "__init__"
            for m in [_METHOD_TEXT.search(str(t))]
            if m
        ]
        return init[0] if init else max(set(names), key=names.count)

    def class_module(self, key: str) -> str:
        entry = self.data.get(key)
        return str(entry.get("__module__", "")) if isinstance(entry, dict) else ""

    def policy_kwargs(self) -> dict[str, Any]:
        """``policy_kwargs`` with classes as lit-sb3 names; an unknown class is an error naming the fix."""
        if "policy_kwargs" in self.custom_objects:
            return dict(self.custom_objects["policy_kwargs"] or {})
        entry = self.data.get("policy_kwargs") or {}
        if not isinstance(entry, dict):
            return {}
        kwargs = {k: v for k, v in entry.items() if not k.startswith(":")}
        kwargs.pop("device", None)
        for key, value in list(kwargs.items()):
            if isinstance(value, str) and _CLASS_TEXT.match(value):
                kwargs[key] = _lit_class_name(key, _CLASS_TEXT.match(value).group(1))  # type: ignore[union-attr]
            elif isinstance(value, str) and (value.startswith("<") or value.startswith("functools.partial")):
                raise NotReadable(
                    f"policy_kwargs[{key!r}] is {value!r}, stored only as a pickle; pass "
                    f"custom_objects={{'policy_kwargs': {{..., {key!r}: ...}}}}"
                )
        arch = kwargs.get("net_arch")
        if isinstance(arch, list) and arch and isinstance(arch[0], dict):
            kwargs["net_arch"] = arch[0]  # SB3 < 1.8 form, as SB3's load converts it
        return kwargs

    def noise(self, key: str = "action_noise") -> Any:
        """SB3's Normal / Ornstein-Uhlenbeck action noise as a lit-sb3 noise spec (or None)."""
        if key in self.custom_objects:
            return self.custom_objects[key]
        entry = self.data.get(key)
        if not isinstance(entry, dict):
            return entry
        kind = _type_name(entry)
        try:
            if kind == "NormalActionNoise":
                return {
                    "type": "normal",
                    "mean": np.array(str(entry["_mu"]).strip("[]").split(), dtype=float).tolist(),
                    "sigma": np.array(str(entry["_sigma"]).strip("[]").split(), dtype=float).tolist(),
                }
            if kind == "OrnsteinUhlenbeckActionNoise":
                return {
                    "type": "ornstein-uhlenbeck",
                    "mean": np.array(str(entry["_mu"]).strip("[]").split(), dtype=float).tolist(),
                    "sigma": np.array(str(entry["_sigma"]).strip("[]").split(), dtype=float).tolist(),
                    "theta": float(entry["_theta"]),
                    "dt": float(entry["_dt"]),
                }
        except (KeyError, ValueError):
            pass
        self.unread[key] = f"a pickled {kind or 'object'}"
        return None


def _lit_class_name(key: str, path: str) -> str:
    """A class named in an SB3 file, as lit-sb3 resolves it: torch classes by path, SB3's by name."""
    module, _, name = path.rpartition(".")
    if module.startswith("torch."):
        return f"{module}:{name}"
    if module.startswith(("stable_baselines3.", "sb3_contrib.")) and name in _SB3_EXTRACTORS:
        return name
    raise NotReadable(
        f"policy_kwargs[{key!r}] is the class {path}, which lit-sb3 does not import from a file; pass "
        f"custom_objects={{'policy_kwargs': {{..., {key!r}: <your class>}}}} (the other policy_kwargs too)"
    )


# loading ---------------------------------------------------------------------------------------------------
def _spaces_close(a: Any, b: Any) -> bool:
    """Equal, up to the last digit numpy's text printing may drop from a bound (or an image's transpose)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, spaces.Dict):
        return set(a.spaces) == set(b.spaces) and all(_spaces_close(a[k], b[k]) for k in a.spaces)
    if isinstance(a, spaces.Box):
        if a.dtype != b.dtype:
            return False
        if a.shape != b.shape:
            # SB3 stores image spaces transposed to channel-first (VecTransposeImage).
            if len(a.shape) == 3 and a.shape == (b.shape[2], b.shape[0], b.shape[1]):
                return bool(np.all(a.low == np.transpose(b.low, (2, 0, 1)))) and bool(
                    np.all(a.high == np.transpose(b.high, (2, 0, 1)))
                )
            return False
        return bool(np.allclose(a.low, b.low, rtol=1e-6, equal_nan=True)) and bool(
            np.allclose(a.high, b.high, rtol=1e-6, equal_nan=True)
        )
    return a == b


def _file_space(fields: SB3Fields, key: str, env_space: spaces.Space | None, path: str) -> spaces.Space:
    try:
        stored = fields.space(key)
    except NotReadable as exc:
        if env_space is not None:
            return env_space
        raise ModelFileError(
            f"{path!r}: {exc}. lit-sb3 never unpickles, so pass the environment: load({path!r}, env=...) "
            f"(its {key} is used), or custom_objects={{{key!r}: <the space>}}."
        ) from None
    if env_space is None:
        return stored
    if not _spaces_close(stored, env_space):
        raise ModelFileError(
            f"{path!r} was saved for {key} {describe_space(stored)}, but the given env has "
            f"{describe_space(env_space)}."
        )
    return env_space


def load_sb3_model(
    path: str | Path,
    cls: Any,
    env: Any = None,
    device: str = "auto",
    custom_objects: dict[str, Any] | None = None,
    print_system_info: bool = False,
    **kwargs: Any,
) -> Any:
    """Build ``cls`` (an algorithm class) from an SB3 model file: hyperparameters, spaces and weights.

    ``cls`` provides the mapping through class methods (``hyperparameters_from_sb3``,
    ``state_dict_from_sb3``; defaults in ``lit_sb3_core.sb3.file_hooks``) and ``sb3_policy_classes``.
    ``kwargs`` override hyperparameters, as in ``load`` of lit-sb3 files.
    """
    given = str(path)
    if cls is None or not getattr(cls, "algo_name", ""):
        raise ModelFileError(
            f"{given!r} is a Stable-Baselines3 model file, which does not name its algorithm: load it with the "
            f"algorithm's class, e.g. lit_sb3.PPO.load({given!r})."
        )
    file = read_sb3_file(path)
    if print_system_info:
        print("== SAVED MODEL SYSTEM INFO ==")
        print(file.system_info or f"(not stored; Stable-Baselines3 {file.sb3_version})")
    fields = SB3Fields(file, dict(custom_objects or {}))
    env_obs = env_act = None
    if env is not None:
        from lit_sb3_core.engine.datamodule import probe_spaces

        env_obs, env_act = probe_spaces(env)
    observation_space = _file_space(fields, "observation_space", env_obs, given)
    action_space = _file_space(fields, "action_space", env_act, given)
    try:
        policy = fields.custom_objects.get("policy_class") or _policy_alias(cls, fields)
        hyperparameters = cls.hyperparameters_from_sb3(fields)
    except NotReadable as exc:
        raise ModelFileError(f"{given!r}: {exc}.") from None
    if "policy_kwargs" in kwargs and kwargs["policy_kwargs"] != hyperparameters.get("policy_kwargs"):
        raise ValueError(
            f"The specified policy_kwargs {kwargs['policy_kwargs']} differ from those stored in {given!r}: "
            f"{hyperparameters.get('policy_kwargs')}."
        )
    hyperparameters.update(policy=policy, device=device, **kwargs)
    if fields.unread:
        unread = ", ".join(
            f"{key} ({why})" for key, why in sorted(fields.unread.items()) if key not in kwargs
        )
        if unread:
            warnings.warn(
                f"{given!r}: these values exist only as pickles, which lit-sb3 never loads, so the defaults of "
                f"{cls.__name__} apply: {unread}. Pass them to load(...) as keyword arguments, or as "
                "custom_objects, to set them.",
                UserWarning,
                stacklevel=3,
            )
    # Every class the file names goes through the allow-list before anything is built (safety's one path).
    check_named_classes(cls, hyperparameters, given, "data.")
    num_timesteps = check_counter(fields.value("num_timesteps", 0) or 0, given, "data.num_timesteps")
    if "policy_kwargs" not in kwargs and "policy_kwargs" not in fields.custom_objects:
        _check_net_arch_fits(hyperparameters.get("policy_kwargs"), file.policy_state, given)
    model = cls(**hyperparameters)
    model.build_policy(observation_space, action_space)
    try:
        state = cls.state_dict_from_sb3(file, model)
    except NotReadable as exc:
        raise ModelFileError(f"{given!r}: {exc}.") from None
    _load_sb3_state(model, state, given)
    model.num_timesteps = num_timesteps
    model.sb3_file_info = {"sb3_version": file.sb3_version, "unread": dict(fields.unread)}
    if env is not None:
        model.set_env(env)
    return model


def _policy_alias(cls: Any, fields: SB3Fields) -> str:
    """The policy alias for the file's ``policy_class``."""
    name = fields.class_name("policy_class")
    module = fields.class_module("policy_class")
    alias = cls.sb3_policy_classes.get(f"{module}.{name}", cls.sb3_policy_classes.get(name))
    if alias is None:
        known = ", ".join(sorted(cls.sb3_policy_classes)) or "none"
        raise NotReadable(
            f"its policy class is {module + '.' if module else ''}{name}, which {cls.__name__} does not "
            f"rebuild (it reads {known}). Load the file with the algorithm it was trained with, or pass "
            "custom_objects={'policy_class': 'MlpPolicy'} (or a policy class) when the weights fit that policy"
        )
    return alias


def _load_sb3_state(model: Any, state: dict[str, torch.Tensor], path: str) -> None:
    """Load ``state`` into the model: every policy weight must be there, and nothing else."""
    ours = model.state_dict()
    unexpected = sorted(k for k in state if k not in ours)
    missing = sorted(k for k in ours if k.startswith("policy.") and k not in state)
    name = type(model).__name__
    if unexpected or missing:
        details = []
        if unexpected:
            details.append(f"weights {name} has no place for: {unexpected[:8]}")
        if missing:
            details.append(f"{name} weights the file does not have: {missing[:8]}")
        raise ModelFileError(
            f"The weights in the SB3 file {path!r} do not fit {name}'s policy ({'; '.join(details)}). Was "
            f"it trained with another algorithm or policy_kwargs?"
        )
    mismatched = [
        f"{k}: file {tuple(v.shape)}, model {tuple(ours[k].shape)}"
        for k, v in state.items()
        if tuple(v.shape) != tuple(ours[k].shape)
    ]
    if mismatched:
        raise ModelFileError(
            f"The weights in the SB3 file {path!r} have other shapes than {name}'s policy: {mismatched[:6]}."
        )
    with torch.no_grad():
        model.load_state_dict(state, strict=False)


def _check_net_arch_fits(policy_kwargs: Any, policy_state: dict[str, torch.Tensor], given: str) -> None:
    """Every layer width in ``net_arch`` is a dimension of some weight in ``policy.pth``, before building.

    An honest file's hidden layers each have a weight of that width; ``net_arch: [100000, 100000]`` next to
    small weights would allocate gigabytes for a policy whose weights then do not fit.
    """
    kwargs = policy_kwargs if isinstance(policy_kwargs, dict) else {}
    extractor = kwargs.get("features_extractor_kwargs")
    sizes = [  # other widths the policy is built with (RecurrentPPO's LSTM, a CNN's features)
        (f"data.policy_kwargs.{key}", kwargs.get(key)) for key in ("lstm_hidden_size",)
    ] + [
        (
            "data.policy_kwargs.features_extractor_kwargs.features_dim",
            (extractor if isinstance(extractor, dict) else {}).get("features_dim"),
        )
    ]
    dims = {n for tensor in policy_state.values() for n in tensor.shape}
    for field_name, size in sizes:
        if size is None:
            continue
        if not is_int(size, 1):
            raise ModelFileError(
                f"{given!r}: {field_name} must be a positive integer, got {size!r:.80}. The policy was not built."
            )
        if size not in dims:
            raise ModelFileError(
                f"{given!r}: {field_name} is {size}, but no weight in policy.pth has that size: the file's data "
                "does not describe its weights (damaged or tampered with). The policy was not built."
            )
    layers = kwargs.get("n_lstm_layers")
    found = sum(1 for key in policy_state if re.fullmatch(r"lstm_actor\.weight_ih_l\d+", key))
    if layers is not None and (not is_int(layers) or layers != found):
        raise ModelFileError(
            f"{given!r}: data.policy_kwargs.n_lstm_layers is {layers!r:.80}, but policy.pth holds {found} LSTM "
            "layer(s): the file's data does not describe its weights (damaged or tampered with). The policy was "
            "not built."
        )
    arch = kwargs.get("net_arch")
    widths: list[Any] = []
    pending = [arch]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif item is not None:
            widths.append(item)
    for width in widths:
        if not is_int(width, 1):
            raise ModelFileError(
                f"{given!r}: data.policy_kwargs.net_arch must hold positive layer widths, got {width!r}."
            )
        if width not in dims:
            raise ModelFileError(
                f"{given!r}: data.policy_kwargs.net_arch asks for a layer of width {width}, but no weight in "
                "policy.pth has that size: the file's data does not describe its weights (damaged or tampered "
                "with). The policy was not built."
            )
