"""SIGKILL a process in the middle of a save: the fault tests' way to check that a save is atomic."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def kill_mid_save(folder: Path, script: str, *args: str, after: str | None = None) -> None:
    """Run ``script`` (saving into ``folder`` in a loop after printing ``ready``) and SIGKILL it while it
    writes a file in ``folder`` that is not yet in place (and, with ``after``, once that file exists: a kill
    during the first save would leave no earlier file to check).

    A write in progress is either an unnamed file (Linux's ``O_TMPFILE``, which the saver holds open and
    ``/proc/<pid>/fd`` shows as ``<folder>/#<inode> (deleted)``) or a named temporary ``*.tmp``; either one
    must already hold data, so the kill lands in the middle of writing it.
    """
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while not ((after is None or (folder / after).exists()) and writing_into(folder, child.pid)):
            assert child.poll() is None, "the saver died on its own"
            assert time.monotonic() < deadline, "no save in progress was seen"
            time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL


def writing_into(folder: Path, pid: int) -> bool:
    """Whether process ``pid`` holds a non-empty file in ``folder`` that has no name yet (or a ``*.tmp``)."""
    if any(p.name.endswith(".tmp") and _size(p) for p in folder.iterdir()):
        return True
    unnamed = f"{os.path.realpath(folder)}/#"
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
            if (
                link.startswith(unnamed)
                and link.endswith(" (deleted)")
                and os.stat(f"/proc/{pid}/fd/{fd}").st_size
            ):
                return True
        except OSError:
            continue  # closed meanwhile
    return False


def _size(path: Path) -> int:
    """``path``'s size, 0 once it is gone: the saver may rename its temporary between listing and stat."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
