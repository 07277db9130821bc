"""The micro-benchmarks of issue 25 run and print their tables (tiny sizes: they must not rot)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture(autouse=True)
def _benchmarks_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The scripts import the suite's helpers (``suite.timing``), as they do when run from benchmarks/."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"lit_sb3_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fast_matmul_benchmark_prints_both_tables(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lit_sb3_core.nets import fast_matmul

    monkeypatch.setattr(fast_matmul, "MIN_FLOPS", fast_matmul.MIN_FLOPS)  # the script lowers it
    monkeypatch.setenv(fast_matmul.ENV_VAR, "0")  # the script switches it on; restored after
    assert _load("fast_matmul").main(["--sizes", "8x16x4", "--repeats", "1", "--calls", "2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 8x16x4 |")]
    assert len(rows) == 2 and all(line.endswith("|") for line in rows)


def test_bf16_autocast_benchmark_prints_a_row_per_network(capsys: pytest.CaptureFixture[str]) -> None:
    main = _load("bf16_autocast").main
    assert main(["--networks", "mlp-64", "--repeats", "1", "--calls", "1"]) == 0
    out = capsys.readouterr().out
    assert "| PPO/DQN 64x64, batch 64 |" in out and out.rstrip().endswith("x |")


def test_files_per_step_counts_the_files_of_one_ppo_iteration(capsys: pytest.CaptureFixture[str]) -> None:
    """The issue-23 measure: the library files one PPO iteration and its update pass through."""
    import torch

    threads = torch.get_num_threads()
    try:
        assert _load("files_per_step").main(["--algos", "ppo", "--list"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    rows = {line.split("|")[2].strip(): line for line in out.splitlines() if line.startswith("| ppo |")}
    assert set(rows) == {"iteration", "update"}
    listed = out.split("\nppo iteration: ")[1].split("\nppo update: ")
    iteration, update = ({line.strip() for line in part.splitlines()[1:] if line.strip()} for part in listed)
    root = str(BENCHMARKS.parent)
    assert all(name.startswith(root) and "/.venv" not in name and "/tests/" not in name for name in iteration)
    assert update < iteration  # the update is part of the iteration, which also collects and logs
    assert any(name.endswith("lit_sb3_ppo/ppo.py") for name in update)
    assert any(name.endswith("lit_sb3_core/sdk/on_policy.py") for name in iteration)
