"""Atomic file writes (a save that fails or is killed never destroys the file it replaces), and run folders.

Every file lit-sb3 writes (model files, replay buffers, Lightning checkpoints, VecNormalize statistics,
evaluation files, run configurations) goes through :func:`write_atomically`: the data goes to a new file in
the target's own folder (same filesystem, so the final rename is atomic), is flushed and fsynced, then renamed
over the target, and the folder is fsynced so the rename itself survives a power cut. A failed write (a full
disk, an exception, Ctrl+C) removes what it wrote and leaves the previous file as it was.

A save killed outright (``kill -9``, the OOM killer) cannot clean up after itself, so on Linux the data is
written to an *unnamed* file (``O_TMPFILE``): the kernel frees it with the killed process, and it gets a name
only once it is whole, for the microseconds between linking it and renaming it over the target. Where the
filesystem has no unnamed files (NFS, some FUSE mounts, macOS, Windows) the data goes to a named temporary,
``.<target name>.<pid>.<random>.tmp``. Either way (and for an export's ``.<stem>.partial-<pid>.<suffix>``) the
next successful write into that folder removes the temporaries of processes that no longer run.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

__all__ = ["is_file_object", "next_run_id", "remove_stale_temporaries", "spooled_copy", "write_atomically"]

_TEMPORARY = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")
# What an export writes before its rename (``.policy.partial-<pid>.onnx``, see engine/export.py).
_PARTIAL_EXPORT = re.compile(r"^\..+\.partial-(\d+)(\.[^.]+)?$")
# False once naming an unnamed file failed in this process (no /proc): named temporaries from then on.
_UNNAMED_FILES = True


def write_atomically(target: str | Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Write ``target`` through ``write(handle)`` so that it is either the new file or the old one.

    Args:
        target: The file to (re)place; its folder is created if needed.
        write: Called once with a binary file handle open on the new, not yet visible file (what it
            returns is ignored).

    Returns:
        ``target`` as a ``Path``.

    Raises:
        Whatever ``write`` or the filesystem raises (``OSError`` with ``ENOSPC`` on a full disk, naming
        ``target``); what was written is removed first and ``target`` is untouched.
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = _write_unnamed(target, write) or _write_named(target, write)
        try:
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        # fsync and write failures name no file: name the one being written ("[Errno 28] No space left on
        # device: 'logs/evaluations.npz'"). OSError(errno, ...) is the subclass the errno maps to.
        raise OSError(exc.errno, exc.strerror, str(target)) from exc
    _fsync_folder(target.parent)
    remove_stale_temporaries(target.parent)
    return target


def is_file_object(value: object) -> bool:
    """Whether ``value`` is an open binary file (``open(..., "rb")``, ``io.BytesIO``, a temporary file)
    rather than a path: SB3's ``save``/``load`` accept both, and leave a file object open."""
    return not isinstance(value, (str, bytes, os.PathLike)) and all(
        callable(getattr(value, name, None)) for name in ("read", "seek")
    )


@contextlib.contextmanager
def spooled_copy(handle: IO[bytes], suffix: str) -> Iterator[Path]:
    """The whole content of an open file, from its start, as a temporary file that is removed afterwards;
    the handle stays open (its position moves to the end). For readers that check a file by its path."""
    with tempfile.TemporaryDirectory(prefix="lit-sb3-") as folder:
        path = Path(folder) / f"from-file-object{suffix}"
        handle.seek(0)
        with path.open("wb") as copy:
            shutil.copyfileobj(handle, copy)
        yield path


def _temporary_beside(target: Path) -> Path:
    """``.<target name>.<pid>.<random>.tmp``: the name :func:`remove_stale_temporaries` recognises."""
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")


def _write_unnamed(target: Path, write: Callable[[IO[bytes]], object]) -> Path | None:
    """Write an unnamed file in ``target``'s folder and name it once it is whole; ``None`` (and nothing
    written) where the platform or the filesystem has no unnamed files, or they cannot be named."""
    global _UNNAMED_FILES
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not _UNNAMED_FILES:
        return None
    try:
        fd = os.open(target.parent, flag | os.O_RDWR, 0o666)  # the umask applies, as to open(path, "wb")
    except OSError:  # EOPNOTSUPP (NFS, FUSE), EISDIR or EINVAL (kernels before 3.11)
        return None
    temporary = _temporary_beside(target)
    with os.fdopen(fd, "w+b") as handle:
        write(handle)
        handle.flush()
        os.fsync(fd)
        folder = os.open(target.parent, os.O_RDONLY)
        try:
            # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N: the documented way to name an O_TMPFILE file
            # without privileges (a dir fd makes os.link call linkat, not link, which would not follow).
            os.link(f"/proc/self/fd/{fd}", temporary.name, dst_dir_fd=folder, follow_symlinks=True)
        except OSError:  # no /proc (some sandboxes): copy what was written, named temporaries from now on
            _UNNAMED_FILES = False
            handle.seek(0)
            return _write_named(target, lambda named: shutil.copyfileobj(handle, named))
        finally:
            os.close(folder)
    return temporary


def _write_named(target: Path, write: Callable[[IO[bytes]], object]) -> Path:
    """Write a named temporary beside ``target`` and return it (removed again if the write fails)."""
    temporary = _temporary_beside(target)
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return temporary


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete the temporaries that killed saves left in ``folder`` (their process is gone); returns them."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            match = _TEMPORARY.match(entry.name) or _PARTIAL_EXPORT.match(entry.name)
            if match is None or not entry.is_file(follow_symlinks=False):
                continue
            if _process_alive(int(match.group(1))):
                continue  # a save in progress (this process's or another's)
            with contextlib.suppress(OSError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _process_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    except OSError:
        return False
    return True


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable (a no-op where folders cannot be opened, as on Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def next_run_id(log_root: Path, run_name: str) -> int:
    """1 + the largest N among ``<log_root>/<run_name>_<N>`` folders (1 when there are none)."""
    pattern = re.compile(rf"^{re.escape(run_name)}_(\d+)$")
    found = [
        int(m.group(1)) for p in log_root.glob(f"{glob.escape(run_name)}_*") if (m := pattern.match(p.name))
    ]
    return max(found, default=0) + 1
