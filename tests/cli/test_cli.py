"""The ``lit-sb3`` command: ``algos``, ``plugins`` and ``--version``."""

from __future__ import annotations

import subprocess
import sys

import pytest

import lit_sb3_core
from lit_sb3_core.cli.main import main


def run_cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lit_sb3_core", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def row(output: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is ``first_cell``."""
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{output}")


def test_algos_lists_name_class_plugin_distribution_version_description(fake_plugins, capsys) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA, version="0.1.7")
    assert main(["algos"]) == 0
    out = capsys.readouterr().out
    assert row(out, "alpha") == [
        "alpha",
        "Alpha",
        "alpha",
        "lit-sb3-alpha",
        "0.1.7",
        "The",
        "first",
        "fake",
        "algorithm",
    ]


def test_algos_filters_by_pattern(fake_plugins, capsys) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    assert main(["algos", "b*"]) == 0
    assert "alpha" not in capsys.readouterr().out


def test_plugins_lists_status_and_errors(fake_plugins, capsys) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    fake_plugins.add("broken", "raise RuntimeError('[no] GPU')\n")
    assert main(["plugins"]) == 0
    captured = capsys.readouterr()
    assert row(captured.out, "alpha")[:5] == ["alpha", "lit-sb3-alpha", "0.1.0", "loaded", "algorithm:alpha"]
    assert row(captured.out, "broken")[:4] == ["broken", "lit-sb3-broken", "0.1.0", "failed"]
    assert "RuntimeError: [no] GPU" in captured.out
    assert row(captured.out, "core")[3] == "loaded"
    assert "Warning" not in captured.err


def test_algos_notes_plugins_that_failed(fake_plugins, capsys) -> None:
    fake_plugins.add("broken", "raise RuntimeError('no GPU')\n")
    main(["algos"])
    assert "1 plugin(s) could not be loaded (broken); see `lit-sb3 plugins`" in capsys.readouterr().err


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"lit-sb3-core {lit_sb3_core.__version__}"


def test_no_command_prints_help(capsys) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "algos" in out and "plugins" in out


def test_python_dash_m_lists_installed_plugins(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    fake_plugins.add("future", fake_plugins.ALPHA, requires=["lit-sb3-core>=9"])
    env = fake_plugins.subprocess_env()

    algos = run_cli("algos", env=env)
    assert algos.returncode == 0, algos.stderr
    assert row(algos.stdout, "alpha")[1:4] == ["Alpha", "alpha", "lit-sb3-alpha"]
    assert "could not be loaded (future)" in algos.stderr

    plugins = run_cli("plugins", env=env)
    assert plugins.returncode == 0, plugins.stderr
    assert row(plugins.stdout, "future")[3] == "incompatible"
    assert "requires lit-sb3-core>=9" in plugins.stdout


def test_listing_does_not_import_torch_or_lightning(child_env) -> None:
    code = "import sys\nfrom lit_sb3_core.cli.main import main\nmain(['algos'])\nmain(['plugins'])\n"
    code += "assert not {'torch', 'lightning', 'gymnasium'} & set(sys.modules), sorted(sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], env=child_env, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr


def test_a_raw_command_receives_its_argv_untouched(monkeypatch) -> None:
    from lit_sb3_core.cli import main as cli

    seen: list[list[str]] = []
    command = cli.Command("fit", "train", raw=lambda argv: seen.append(argv) or 3)
    monkeypatch.setattr(cli, "COMMANDS", [*cli.COMMANDS, command])
    assert main(["fit", "--config", "x.yaml", "--help"]) == 3
    assert seen == [["--config", "x.yaml", "--help"]]
