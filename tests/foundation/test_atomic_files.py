"""The atomic writer every lit-sb3 file goes through (lit_sb3_core.foundation.files): the new file or the
old one, never half of one, and nothing left beside it, with unnamed files and without them."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from lit_sb3_core.foundation import files
from lit_sb3_core.foundation.files import remove_stale_temporaries, write_atomically


def _write(data: bytes):  # type: ignore[no-untyped-def]
    def write(handle: IO[bytes]) -> None:
        handle.write(data)

    return write


@pytest.fixture(params=["unnamed", "named"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test runs with Linux's unnamed files and as on a system without them (NFS, macOS, Windows)."""
    if request.param == "unnamed" and not hasattr(os, "O_TMPFILE"):
        pytest.skip("unnamed files (O_TMPFILE) are Linux's")
    if request.param == "named":
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    return str(request.param)


def test_a_write_replaces_the_file_with_the_permissions_open_gives(tmp_path: Path, mode: str) -> None:
    target = tmp_path / "sub" / "model.zip"
    write_atomically(target, _write(b"first"))
    write_atomically(target, _write(b"second"))
    assert target.read_bytes() == b"second"
    assert [p.name for p in target.parent.iterdir()] == ["model.zip"]
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    assert stat.S_IMODE(target.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_a_failing_write_keeps_the_previous_file_and_leaves_nothing(tmp_path: Path, mode: str) -> None:
    target = tmp_path / "model.zip"
    write_atomically(target, _write(b"previous"))

    def half_then_fail(handle: IO[bytes]) -> None:
        handle.write(b"half of the new")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        write_atomically(target, half_then_fail)
    assert target.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"]


def test_without_proc_the_unnamed_file_is_copied_to_a_named_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not hasattr(os, "O_TMPFILE"):
        pytest.skip("unnamed files (O_TMPFILE) are Linux's")
    calls = []

    def no_proc(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError(2, "No such file or directory", "/proc/self/fd/3")

    monkeypatch.setattr(os, "link", no_proc)
    monkeypatch.setattr(files, "_UNNAMED_FILES", True)

    def write(handle: IO[bytes]) -> None:
        calls.append(1)
        handle.write(b"x" * 100_000)

    write_atomically(tmp_path / "model.zip", write)
    assert calls == [1], "the data is copied, not written twice"
    assert (tmp_path / "model.zip").read_bytes() == b"x" * 100_000
    assert [p.name for p in tmp_path.iterdir()] == ["model.zip"]
    assert files._UNNAMED_FILES is False  # named temporaries from now on in this process


def test_temporaries_of_dead_processes_are_removed_and_those_of_live_ones_kept(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = [tmp_path / f".model.zip.{dead.pid}.ab12cd.tmp", tmp_path / f".policy.partial-{dead.pid}.onnx"]
    live = tmp_path / f".model.zip.{os.getpid()}.ab12cd.tmp"  # a save in progress in this process
    for path in [*stale, live]:
        path.write_bytes(b"half")
    other = tmp_path / ".hidden.tmp"  # not a name lit-sb3 writes
    other.write_bytes(b"")
    assert sorted(remove_stale_temporaries(tmp_path)) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
