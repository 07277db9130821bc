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
    """Run ``script`` (saving into ``folder`` in a loop after printing ``ready``) and SIGKILL it while a
    temporary ``*.tmp`` file in ``folder`` is being written (and, with ``after``, once that file exists:
    a kill during the first save would leave no earlier file to check)."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 120
        while not (
            (after is None or (folder / after).exists())
            and any(p.name.endswith(".tmp") and p.stat().st_size for p in folder.iterdir())
        ):
            assert child.poll() is None, "the saver died on its own"
            assert time.monotonic() < deadline, "no save in progress was seen"
            time.sleep(0.001)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == -signal.SIGKILL
