"""Lightning checkpoints that cannot lose a run and cannot run code: one writer, one reader.

* :class:`AtomicCheckpointIO`, the ``CheckpointIO`` plugin ``RLTrainer`` installs by default: every
  checkpoint of a run (``ModelCheckpoint``'s, ``trainer.save_checkpoint``, the interrupt checkpoint) is
  written to a temporary file in the target's folder, flushed, fsynced and renamed into place
  (:func:`~lit_sb3_core.foundation.files.write_atomically`). A full disk leaves the previous
  ``last.ckpt`` whole; a killed save leaves a temporary that the next successful save removes.
* :func:`read_checkpoint`, the one way lit-sb3 reads a checkpoint, local or remote (``http(s)://``,
  ``s3://``, ...): always ``weights_only=True`` unless the caller passes ``weights_only=False`` for a file
  they trust, every field validated. ``trainer.fit/validate/test/predict(ckpt_path=...)`` (through the
  plugin), ``Algo.load_from_checkpoint`` and ``lit-sb3 validate/test --ckpt_path`` all read through it, so
  an unsafe, damaged or tampered file gets the same :class:`~lit_sb3_core.errors.ModelFileError`,
  whichever way it is loaded.
"""

from __future__ import annotations

import io
import pickle
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO

from lit_sb3_core.engine.file_checks import (
    check_counter,
    check_normalization,
    check_plain_values,
    check_rng_state,
    check_spaces,
    check_tensor_values,
    refuse,
)
from lit_sb3_core.errors import ModelFileError
from lit_sb3_core.foundation.checks import is_int
from lit_sb3_core.foundation.files import write_atomically

__all__ = [
    "AtomicCheckpointIO",
    "check_checkpoint",
    "is_remote",
    "load_algorithm_checkpoint",
    "read_checkpoint",
    "unsafe_checkpoint_error",
]

# Seconds to wait for a remote server, and the most bytes read from one (a checkpoint with a replay buffer
# of a million Atari frames is a few GiB).
REMOTE_TIMEOUT_S = 60.0
MAX_REMOTE_BYTES = 16 * 2**30
_ZIP_MAGIC = b"PK\x03\x04"
_PICKLE_PROTOCOL = b"\x80"


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's ``TorchCheckpointIO``, writing atomically and reading through :func:`read_checkpoint`.

    Remote targets (``s3://...``) are written by Lightning's own code through fsspec: object stores
    replace an object whole on upload, so there is no partial file to protect.
    """

    def save_checkpoint(
        self, checkpoint: dict[str, Any], path: Any, storage_options: Any | None = None
    ) -> None:
        if storage_options is not None or is_remote(path):
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        write_atomically(_local(path), lambda handle: torch.save(checkpoint, handle))

    def load_checkpoint(
        self, path: Any, map_location: Any = lambda storage, loc: storage, weights_only: bool | None = None
    ) -> dict[str, Any]:
        return read_checkpoint(path, map_location=map_location, weights_only=weights_only)


def is_remote(path: Any) -> bool:
    """A URL other than ``file://`` (fsspec's protocols: http, https, s3, gs, ...)."""
    text = str(path)
    return "://" in text and not text.startswith("file://")


def read_checkpoint(path: Any, map_location: Any = "cpu", weights_only: bool | None = None) -> dict[str, Any]:
    """Read and validate a Lightning checkpoint, refusing anything that could run code.

    Args:
        path: A local path, ``file://`` or a remote URL (``http(s)://`` read with urllib; other protocols
            through fsspec, whose filesystem package must be installed, e.g. ``s3fs``).
        map_location: As ``torch.load``'s.
        weights_only: ``None`` or ``True``: only tensors and plain values load (remote files too, unlike
            Lightning's default for URLs). ``False`` unpickles anything: only for files you trust.

    Raises:
        FileNotFoundError: No file at ``path``.
        ModelFileError: Unsafe (pickled code), garbage, truncated, or a field that is not valid; the
            message starts with the file.
    """
    data: Any
    if hasattr(path, "read"):  # a file object, as Lightning's load_from_checkpoint accepts
        source = str(getattr(path, "name", "<file object>"))
        data = io.BytesIO(path.read())
        _check_magic(data.getvalue()[:4], source)
    else:
        source = str(path)
        data = _download(source) if is_remote(source) else _open_local(source)
    safe = weights_only is not False
    try:
        checkpoint = torch.load(data, map_location=map_location, weights_only=safe)
    except pickle.UnpicklingError as exc:
        if safe and "Weights only load failed" in str(exc):
            raise unsafe_checkpoint_error(source, exc) from None
        raise refuse(
            source, None, f"is truncated or corrupt ({type(exc).__name__}: {_first_line(exc)})."
        ) from None
    except RecursionError:
        raise refuse(
            source, None, "holds values nested too deeply to be a checkpoint (damaged or tampered with)."
        ) from None
    except (RuntimeError, EOFError, OSError, ValueError, IndexError, KeyError, zipfile.BadZipFile) as exc:
        raise refuse(
            source, None, f"is truncated or corrupt ({type(exc).__name__}: {_first_line(exc)})."
        ) from None
    if not isinstance(checkpoint, dict):
        raise refuse(
            source, None, f"holds a {type(checkpoint).__name__}, not a Lightning checkpoint (a dict)."
        )
    check_checkpoint(checkpoint, source)
    return checkpoint


def load_algorithm_checkpoint(
    cls: type,
    checkpoint_path: Any,
    map_location: Any = None,
    hparams_file: Any = None,
    strict: bool | None = None,
    weights_only: bool | None = None,
    **kwargs: Any,
) -> Any:
    """``cls.load_from_checkpoint`` through :func:`read_checkpoint`: Lightning's steps, lit-sb3's reader.

    What Lightning's ``_load_from_checkpoint`` does after reading (legacy migration, ``hparams_file``,
    keyword overrides, rebuilding the module from its hyperparameters, moving it to the weights' device),
    with every refusal a ``ModelFileError`` naming the file and the field. The Lightning internals this
    needs are in ``engine/lightning_internals.py``.
    """
    from lightning.pytorch.core.saving import load_hparams_from_tags_csv
    from lightning.pytorch.utilities.migration import pl_legacy_patch

    from lit_sb3_core.engine.file_checks import check_named_classes, check_plain_values, rebuild_error
    from lit_sb3_core.engine.lightning_internals import (
        DEFAULT_MAP_LOCATION,
        migrate_checkpoint,
        module_from_checkpoint,
    )
    from lit_sb3_core.errors import ConfigurationError

    source = (
        str(getattr(checkpoint_path, "name", "<file object>"))
        if hasattr(checkpoint_path, "read")
        else str(checkpoint_path)
    )
    with pl_legacy_patch():
        checkpoint = read_checkpoint(
            checkpoint_path, map_location=map_location or DEFAULT_MAP_LOCATION, weights_only=weights_only
        )
    checkpoint = migrate_checkpoint(
        checkpoint, checkpoint_path if isinstance(checkpoint_path, (str, Path)) else None
    )
    if hparams_file is not None:
        extension = str(hparams_file).rpartition(".")[2].lower()
        if extension == "csv":
            checkpoint["hyper_parameters"] = load_hparams_from_tags_csv(hparams_file)
        elif extension in ("yml", "yaml"):
            checkpoint["hyper_parameters"] = read_hparams_yaml(hparams_file)
        else:
            raise ValueError(".csv, .yml or .yaml is required for `hparams_file`")
        check_plain_values(checkpoint["hyper_parameters"], str(hparams_file), "hyperparameters")
    checkpoint.setdefault("hyper_parameters", {})
    check_plain_values(checkpoint["hyper_parameters"], source, "hyper_parameters")
    checkpoint["hyper_parameters"].update(kwargs)
    check_named_classes(cls, checkpoint["hyper_parameters"], source, "hyper_parameters.")
    try:
        model = module_from_checkpoint(cls, checkpoint, strict=strict, **kwargs)
    except ModelFileError as exc:
        if exc.path is None:  # raised by on_load_checkpoint, which does not know the file
            raise ModelFileError(f"{source!r}: {exc}", path=source, field=exc.field) from None
        raise
    except (ConfigurationError, TypeError) as exc:
        explained = rebuild_error(exc, source, "hyper_parameters.")
        if explained is None:
            raise
        raise explained from exc
    except RuntimeError as exc:
        if "state_dict" not in str(exc):
            raise
        raise refuse(source, "state_dict", f"does not fit the model: {_first_line(exc)}") from None
    state_dict = checkpoint["state_dict"]
    tensor = next((t for t in state_dict.values() if isinstance(t, torch.Tensor)), None)
    return model if tensor is None else model.to(tensor.device)


MAX_HPARAMS_BYTES = 16 * 2**20


def read_hparams_yaml(path: Any) -> dict[str, Any]:
    """An ``hparams_file`` read with YAML's safe loader: plain values only, never a Python object.

    Lightning's ``load_hparams_from_yaml`` uses ``yaml.full_load``, which turns
    ``!!python/name:module.function`` into that function; a hyperparameter is a number, a string (schedules
    are strings such as ``lin_3e-4``), a list or a mapping, so any tag that builds an object is refused.
    """
    import yaml

    source = str(path)
    file = Path(source)
    if not file.is_file():
        raise FileNotFoundError(f"No hyperparameter file at {source!r}.")
    if file.stat().st_size > MAX_HPARAMS_BYTES:
        raise refuse(
            source, None, f"is larger than the {MAX_HPARAMS_BYTES} bytes a hyperparameter file may be."
        )
    try:
        loaded = yaml.safe_load(file.read_text(encoding="utf-8"))
    except yaml.constructor.ConstructorError as exc:
        raise refuse(
            source,
            None,
            f"asks YAML to build a Python object ({_first_line(exc)}): lit-sb3 reads "
            "hyperparameter files with a safe loader and never imports or calls what a file names. Write "
            "plain values (schedules as strings such as 'lin_3e-4').",
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise refuse(source, None, f"is not valid YAML ({type(exc).__name__}: {_first_line(exc)}).") from None
    except RecursionError:
        raise refuse(source, None, "is nested too deeply to be a hyperparameter file.") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict) or not all(isinstance(key, str) for key in loaded):
        raise refuse(source, None, f"must map argument names to values, got {_short(loaded)}.")
    return loaded


def unsafe_checkpoint_error(path: Any, exc: BaseException) -> ModelFileError:
    """The refusal of a checkpoint that ``weights_only`` loading turned down: it holds pickled code."""
    detail = next(
        (line.strip() for line in str(exc).splitlines() if "GLOBAL" in line or "global" in line), ""
    )
    return ModelFileError(
        f"{str(path)!r}: refused to load the checkpoint: it holds pickled objects other than tensors and plain "
        f"values, which could run code when loaded{f' ({detail})' if detail else ''}. lit-sb3 checkpoints "
        "load with weights_only=True; if you wrote this file yourself and trust it, load it with "
        "weights_only=False.",
        path=path,
    )


def check_checkpoint(checkpoint: dict[str, Any], source: str) -> None:
    """The fields lit-sb3 reads from a checkpoint are what lit-sb3 writes (see ``on_save_checkpoint``)."""
    state_dict = checkpoint.get("state_dict", {})
    if not isinstance(state_dict, dict) or not all(isinstance(key, str) for key in state_dict):
        raise refuse(source, "state_dict", f"must map names to tensors, got {type(state_dict).__name__}.")
    check_tensor_values(state_dict, source, "state_dict.")
    for key in ("hparams", "module_arguments"):  # older Lightning keys, still read by Lightning
        if key in checkpoint and not isinstance(checkpoint[key], dict):
            raise refuse(
                source, key, f"must map argument names to values (a dict), got {_short(checkpoint[key])}."
            )
    hyperparameters = checkpoint.get("hyper_parameters", {})
    if not isinstance(hyperparameters, dict) or not all(isinstance(key, str) for key in hyperparameters):
        raise refuse(
            source,
            "hyper_parameters",
            f"must map argument names to values (a dict), got {_short(hyperparameters)}.",
        )
    check_plain_values(hyperparameters, source, "hyper_parameters")
    state = checkpoint.get("lit_sb3")
    if state is None:
        return  # not a lit-sb3 checkpoint: RLAlgorithm.on_load_checkpoint says so
    if not isinstance(state, dict):
        raise refuse(source, "lit_sb3", f"must be a dict of run state, got {_short(state)}.")
    algo = state.get("algo")
    if algo is not None and not isinstance(algo, str):  # "" for algorithms without a registry name
        raise refuse(source, "lit_sb3.algo", f"must be an algorithm's registry name, got {_short(algo)}.")
    check_spaces(state, source, prefix="lit_sb3.")
    for key in ("num_timesteps", "iterations", "n_updates"):
        if key not in state:
            raise refuse(source, None, f"has no lit_sb3.{key}.")
        check_counter(state[key], source, f"lit_sb3.{key}")
    check_normalization(state.get("normalization"), source, "lit_sb3.normalization")
    returns, lengths = state.get("episode_returns", []), state.get("episode_lengths", [])
    if not isinstance(returns, list) or not all(
        isinstance(r, (int, float)) and not isinstance(r, bool) and r == r for r in returns
    ):
        raise refuse(source, "lit_sb3.episode_returns", "must be a list of numbers.")
    if not isinstance(lengths, list) or not all(is_int(n, 0) for n in lengths):
        raise refuse(source, "lit_sb3.episode_lengths", "must be a list of non-negative integers.")
    if "rng" in state:
        check_rng_state(state["rng"], source, "lit_sb3.rng")


def _open_local(source: str) -> Path:
    path = Path(source[len("file://") :] if source.startswith("file://") else source)
    if not path.exists():
        raise FileNotFoundError(f"No checkpoint file at {source!r}.")
    if path.is_dir():
        raise refuse(source, None, "is a directory, not a checkpoint file.")
    if path.stat().st_size == 0:
        raise refuse(source, None, "is empty (0 bytes): the save that wrote it failed.")
    with path.open("rb") as handle:
        _check_magic(handle.read(4), source)
    return path


def _check_magic(head: bytes, source: str) -> None:
    """torch.save writes a zip archive (legacy files: a pickle); anything else is not a checkpoint."""
    if not (head.startswith(_ZIP_MAGIC) or head.startswith(_PICKLE_PROTOCOL)):
        raise refuse(
            source,
            None,
            f"is not a checkpoint: it is neither a torch checkpoint (a zip archive) nor a legacy torch file "
            f"(it starts with {head!r}).",
        )


def _download(url: str) -> io.BytesIO:
    """The bytes at ``url``, read into memory (never into a cache folder), up to ``MAX_REMOTE_BYTES``."""
    reader = _http_reader if url.startswith(("http://", "https://")) else _fsspec_reader
    try:
        data = reader(url)
    except ModelFileError:
        raise
    except FileNotFoundError:
        raise FileNotFoundError(f"No checkpoint file at {url!r}.") from None
    except ImportError as exc:
        raise refuse(
            url, None, f"cannot be read: its protocol needs a package that is not installed ({exc})."
        ) from None
    except Exception as exc:
        raise refuse(url, None, f"could not be downloaded ({type(exc).__name__}: {exc}).") from None
    if not data:
        raise refuse(url, None, "is empty (0 bytes).")
    _check_magic(data[:4], url)
    return io.BytesIO(data)


def _http_reader(url: str) -> bytes:
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=REMOTE_TIMEOUT_S) as response:
            return _read_capped(response.read, url)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise FileNotFoundError(url) from None
        raise


def _fsspec_reader(url: str) -> bytes:
    import fsspec

    with fsspec.open(url, "rb") as handle:
        return _read_capped(handle.read, url)


def _read_capped(read: Callable[[int], bytes], url: str) -> bytes:
    chunks, total = [], 0
    while chunk := read(2**20):
        total += len(chunk)
        if total > MAX_REMOTE_BYTES:
            raise refuse(url, None, f"is larger than {MAX_REMOTE_BYTES} bytes, more than lit-sb3 downloads.")
        chunks.append(chunk)
    return b"".join(chunks)


def _local(path: Any) -> Path:
    text = str(path)
    return Path(text[len("file://") :] if text.startswith("file://") else text)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
