"""Atomic file writes (a save that fails or is killed never destroys the file it replaces), and run folders.

Every file lit-sb3 writes (model files, replay buffers, Lightning checkpoints) goes through
:func:`write_atomically`: the data goes to a temporary file in the target's own folder (same filesystem,
so the final rename is atomic), is flushed and fsynced, then renamed over the target, and the folder is
fsynced so the rename itself survives a power cut. A failed write (a full disk, an exception, Ctrl+C)
removes its temporary and leaves the previous file as it was.

A save killed outright (``kill -9``, a crash of the machine) cannot clean up after itself. Its temporary
is named ``.<target name>.<pid>.<random>.tmp`` (an export's ``.<stem>.partial-<pid>.<suffix>``); the next
successful write into that folder removes the temporaries of processes that no longer run, so a killed save
leaves nothing that outlives the next one.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["next_run_id", "remove_stale_temporaries", "write_atomically"]

_TEMPORARY = re.compile(r"^\..+\.(\d+)\.[^.]+\.tmp$")
# What an export writes before its rename (``.policy.partial-<pid>.onnx``, see engine/export.py).
_PARTIAL_EXPORT = re.compile(r"^\..+\.partial-(\d+)(\.[^.]+)?$")


def write_atomically(target: str | Path, write: Callable[[IO[bytes]], None]) -> Path:
    """Write ``target`` through ``write(handle)`` so that it is either the new file or the old one.

    Args:
        target: The file to (re)place; its folder is created if needed.
        write: Called with a binary file handle open on the temporary file.

    Returns:
        ``target`` as a ``Path``.

    Raises:
        Whatever ``write`` or the filesystem raises (``OSError`` with ``ENOSPC`` on a full disk); the
        temporary is removed first and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_folder(target.parent)
    remove_stale_temporaries(target.parent)
    return target


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
