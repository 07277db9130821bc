"""SB3's ``common.save_util``: opening save paths, dotted attribute access, and small pickles of plain data.

``load_from_pkl`` reads pickles of plain data only (numbers, strings, containers, numpy arrays): a
pickle that names any other class or function is refused before anything is imported, so a file can never
run code. Model files are lit-sb3's zip of JSON and safetensors (``model.save``/``Cls.load``).
"""

from __future__ import annotations

import functools
import io
import json
import pathlib
import pickle
import warnings
from typing import IO, Any

from lit_sb3_core.errors import ModelFileError

__all__ = [
    "data_to_json",
    "is_json_serializable",
    "json_to_data",
    "load_from_pkl",
    "open_path",
    "recursive_getattr",
    "recursive_setattr",
    "save_to_pkl",
]

_STREAMS = (io.BufferedWriter, io.BufferedReader, io.BytesIO, io.BufferedRandom)
_MODES = {"w": "w", "write": "w", "r": "r", "read": "r"}
# The globals a pickle of plain data and numpy arrays needs (numpy 1 and 2 module names).
_PLAIN_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
    ("numpy.core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
    ("builtins", "complex"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "slice"),
    ("builtins", "range"),
    ("collections", "OrderedDict"),
}


def recursive_getattr(obj: Any, attr: str, *default: Any) -> Any:
    """``getattr`` for a dotted name (``"policy.optimizer"``), with an optional default."""
    return functools.reduce(lambda current, name: getattr(current, name, *default), attr.split("."), obj)


def recursive_setattr(obj: Any, attr: str, value: Any) -> None:
    """``setattr`` for a dotted name: sets the last part on the object the rest leads to."""
    parent, _, name = attr.rpartition(".")
    setattr(recursive_getattr(obj, parent) if parent else obj, name, value)


def is_json_serializable(item: Any) -> bool:
    """Whether ``json.dumps`` can write ``item``."""
    try:
        json.dumps(item)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def data_to_json(data: dict[str, Any]) -> str:
    """The JSON-able items of ``data`` as JSON; other items become ``{":type:": ..., "__repr__": ...}``
    descriptions (readable, never code), which ``json_to_data`` leaves as they are."""
    encoded = {
        key: value if is_json_serializable(value) else {":type:": str(type(value)), "__repr__": repr(value)}
        for key, value in data.items()
    }
    return json.dumps(encoded, indent=4)


def json_to_data(json_string: str, custom_objects: dict[str, Any] | None = None) -> dict[str, Any]:
    """Parses ``data_to_json``'s output; ``custom_objects`` replace the items of the same name."""
    if custom_objects is not None and not isinstance(custom_objects, dict):
        raise ValueError(
            f"custom_objects must be a dict of names to objects, got {type(custom_objects).__name__}."
        )
    data = json.loads(json_string)
    data.update(custom_objects or {})
    return data


@functools.singledispatch
def open_path(path: Any, mode: str, verbose: int = 0, suffix: str | None = None) -> Any:
    """Opens ``path`` (a str, a ``pathlib.Path`` or an open binary stream) for ``"w"``/``"r"``.

    Writing adds ``.suffix`` to a path that has none, creates missing parent folders (with a warning),
    writes to ``<path>_2`` when ``path`` is a folder, and warns on overwrite when ``verbose >= 2``.
    Reading falls back to ``<path>.<suffix>`` when ``path`` does not exist. A stream is checked against the
    mode and returned as it is.
    """
    if not isinstance(path, _STREAMS):
        raise TypeError(f"open_path takes a str, a pathlib.Path or a binary stream {_STREAMS}, not {path!r}.")
    if path.closed:
        raise ValueError(f"The stream {path} is closed: open it again.")
    mode = _check_mode(mode)
    if (mode == "w" and not path.writable()) or (mode == "r" and not path.readable()):
        raise ValueError(
            f"open_path(mode={mode!r}) needs a {'writable' if mode == 'w' else 'readable'} stream."
        )
    return path


def _check_mode(mode: str) -> str:
    try:
        return _MODES[str(mode).lower()]
    except KeyError:
        raise ValueError(f"mode must be 'w' (write) or 'r' (read), got {mode!r}.") from None


@open_path.register(str)
def _open_str(path: str, mode: str, verbose: int = 0, suffix: str | None = None) -> IO[bytes]:
    return _open_pathlib(pathlib.Path(path), mode, verbose, suffix)


@open_path.register(pathlib.Path)
def _open_pathlib(path: pathlib.Path, mode: str, verbose: int = 0, suffix: str | None = None) -> IO[bytes]:
    mode = _check_mode(mode)
    if mode == "r":
        if not path.exists() and suffix:
            alternative = pathlib.Path(f"{path}.{suffix}")
            if verbose >= 2:
                warnings.warn(f"Path '{path}' not found: reading {alternative} instead.", stacklevel=3)
            path = alternative
        return path.open("rb")
    if path.suffix == "" and suffix:
        path = pathlib.Path(f"{path}.{suffix}")
    if path.is_dir():
        warnings.warn(f"Path '{path}' is a folder: saving to {path}_2 instead.", stacklevel=3)
        path = pathlib.Path(f"{path}_2")
    if not path.parent.exists():
        warnings.warn(f"Folder '{path.parent}' does not exist: creating it.", stacklevel=3)
        path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file() and verbose >= 2:
        warnings.warn(f"Path '{path}' exists: overwriting it.", stacklevel=3)
    return path.open("wb")


def save_to_pkl(path: str | pathlib.Path | io.BufferedIOBase, obj: Any, verbose: int = 0) -> None:
    """Pickles ``obj`` to ``path`` (``.pkl`` is added to a path without suffix)."""
    with open_path(path, "w", verbose=verbose, suffix="pkl") as file:
        pickle.dump(obj, file, protocol=pickle.HIGHEST_PROTOCOL)


class _PlainDataUnpickler(pickle.Unpickler):
    """Reads only plain data: any class or function outside ``_PLAIN_GLOBALS`` is refused unimported."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _PLAIN_GLOBALS:
            raise ModelFileError(
                f"This pickle names {module}.{name}: lit-sb3 reads only pickles of plain data (numbers, "
                "strings, containers, numpy arrays), since unpickling a class or function runs code. "
                "Save the object's data instead, or use model.save / ReplayBuffer.save."
            )
        return super().find_class(module, name)


def load_from_pkl(path: str | pathlib.Path | io.BufferedIOBase, verbose: int = 0) -> Any:
    """Reads a pickle of plain data written by ``save_to_pkl`` (``.pkl`` is tried when ``path`` is missing)."""
    with open_path(path, "r", verbose=verbose, suffix="pkl") as file:
        return _PlainDataUnpickler(file).load()
