"""Every ``lit-sb3`` command: a useful --help, a light start, and ``lit-sb3 doctor``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import lit_sb3_core
from lit_sb3_core.cli.main import COMMANDS, main


def test_listing_and_help_import_no_heavy_library(child_env: dict[str, str]) -> None:
    code = (
        "import sys, lit_sb3_core.cli.main as cli\n"
        "cli.build_parser()\n"
        "cli.main(['algos'])\n"
        "heavy = ('torch', 'lightning', 'gymnasium', 'optuna', 'matplotlib', 'jsonargparse')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], env=child_env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "command", [c.name for c in COMMANDS if c.raw is None and c.name not in ("algos", "plugins")]
)
def test_every_command_has_help_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: lit-sb3 {command}")
    if command not in ("doctor", "train"):
        assert f"lit-sb3 {command} " in out.split("usage:", 1)[1].split("\n", 1)[1]  # a runnable example


def test_top_level_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for command in COMMANDS:
        assert command.name in out


def test_doctor_reports_versions_and_plugins(fake_plugins, capsys: pytest.CaptureFixture[str]) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, version="0.1.7")
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    for package in ("lit-sb3-core", "torch", "lightning", "gymnasium"):
        assert package in out
    assert lit_sb3_core.__version__ in out
    assert "alpha" in out and "algorithm:alpha" in out
    assert "No problems found." in out


def test_doctor_fails_on_broken_and_incompatible_plugins(
    fake_plugins, capsys: pytest.CaptureFixture[str]
) -> None:
    fake_plugins.add("broken", "raise RuntimeError('no GPU')\n")
    fake_plugins.add("old", fake_plugins.ALPHA, requires=("lit-sb3-core>=9,<10",))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError: no GPU" in out and "LIT_SB3_BLOCK_PLUGINS=broken" in out
    assert "incompatible" in out and "pip install --upgrade lit-sb3-old" in out
    assert "Problems: plugin broken failed; plugin old incompatible." in out
