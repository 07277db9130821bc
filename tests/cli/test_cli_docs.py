"""docs/cli.md's blocks marked ``<!-- run by tests/cli/test_cli_docs.py -->`` run as they are, in order, in one
folder: each ``lit-sb3`` line in this process (``main(argv)``, so torch and Lightning load once), other
command lines in a subprocess, Python blocks as scripts. ``lit-sb3 train`` lines without ``-n`` are capped at
256 environment steps (the tuned budgets take minutes); nothing else is changed."""

from __future__ import annotations

import os
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from lit_sb3_core.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cli.md"
MARK = "<!-- run by tests/cli/test_cli_docs.py -->"
FENCE = re.compile(r"^" + re.escape(MARK) + r"\n```(\w+)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)
ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=\S*$")


def marked_blocks() -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in FENCE.finditer(DOC.read_text())]


def command_lines(code: str) -> list[str]:
    joined = code.replace("\\\n", " ")
    lines = [line.split("  #", 1)[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def run_line(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    words = shlex.split(line)
    while words and ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        monkeypatch.setenv(name, value)
    if words[0] == "lit-sb3":
        argv = words[1:]
        if argv[0] == "train" and not {"-n", "--n-timesteps", "--steps"} & set(argv):
            argv += ["-n", "256"]
        assert main(argv) == 0, line
        return
    if words[0] == "python":
        words[0] = sys.executable
    result = subprocess.run(words, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert result.returncode == 0, line + "\n" + result.stdout[-2000:] + result.stderr[-3000:]


def test_every_block_marked_to_run_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime", reason="pip install 'lit-sb3-core[onnx]'")
    pytest.importorskip("moviepy", reason="pip install 'lit-sb3-core[video]'")
    pytest.importorskip("wandb", reason="pip install 'lit-sb3-core[loggers]'")
    pytest.importorskip("mlflow", reason="pip install 'lit-sb3-core[loggers]'")
    pytest.importorskip("matplotlib", reason="pip install 'lit-sb3-core[plot]'")
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    blocks = marked_blocks()
    assert [lang for lang, _ in blocks] == ["bash", "bash", "bash", "python", "python"]
    import wandb

    wandb.finish()  # a run left open by an earlier test would be reused
    try:
        for lang, code in blocks:
            if lang == "bash":
                for line in command_lines(code):
                    run_line(line, monkeypatch)
            else:
                (tmp_path / "block.py").write_text(code)
                runpy.run_path(str(tmp_path / "block.py"), run_name="__main__")
    finally:
        wandb.finish()
    out = capsys.readouterr().out
    # What the blocks claim: the zoo layout, the lookups, the videos, the exports.
    assert {p.name for p in (tmp_path / "logs" / "ppo").iterdir()} >= {
        "CartPole-v1_1",
        "CartPole-v1_2",
        "CartPole-v1_3",
    }
    assert (tmp_path / "logs/ppo/CartPole-v1_2/rl_model_512_steps.zip").is_file()
    assert "Continuing logs/ppo/CartPole-v1_2/CartPole-v1.zip from 1024 steps." in out
    assert list((tmp_path / "logs/a2c/CartPole-v1_1").glob("wandb/offline-run-*/run-*.wandb"))
    assert "Loading logs/ppo/CartPole-v1_2/best_model.zip" in out
    assert len(list((tmp_path / "videos").glob("*.mp4"))) == 3
    assert "inputs:  obs (batch, 4) float32" in out and "outputs: actions (batch) int64" in out
    assert {"ppo_cartpole.onnx", "sac_pendulum.pt", "sac_pendulum.pt2", "ppo.onnx"} <= {
        p.name for p in tmp_path.iterdir()
    }
    assert list((tmp_path / "runs" / "ppo_csv" / "version_0").glob("metrics.csv"))
    assert list((tmp_path / "mlruns").iterdir())
    assert (tmp_path / "zoo.png").stat().st_size > 1000
