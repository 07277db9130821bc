"""The benchmark suite (benchmarks/run.py) runs end to end and its parts do what the table claims.

The end-to-end test runs the real suite on a tiny budget (PPO and DQN on CartPole, one seed, one repeat):
four fresh worker processes training both libraries for real. It checks what is written, not how fast
anything ran.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def suite(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The ``suite`` package of benchmarks/, importable as run.py imports it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import suite

    yield suite


def _needs(*algos: str) -> None:
    pytest.importorskip("stable_baselines3")
    pytest.importorskip("matplotlib")
    from lit_sb3 import list_algos

    missing = sorted(set(algos) - set(list_algos()))
    if missing:
        pytest.skip(f"lit-sb3 plugins not installed: {missing}")


def test_the_suite_writes_table_json_and_plots(tmp_path: Path) -> None:
    _needs("ppo", "dqn")
    cases, steps = ["ppo-zoo-8env", "dqn-default"], 512
    command = [
        sys.executable, str(BENCHMARKS / "run.py"), "--cases", *cases, "--steps", str(steps),
        "--seeds", "0", "--repeats", "1", "--out", str(tmp_path),
    ]  # fmt: skip
    process = subprocess.run(command, check=False, capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stdout + process.stderr

    table = (tmp_path / "results.md").read_text()
    assert "| algorithm | env | config | steps | SB3 steps/s | lit-sb3 steps/s | ratio |" in table
    rows = [line for line in table.splitlines() if line.startswith(("| PPO (SB3)", "| DQN (SB3)"))]
    assert len(rows) == 2, table
    for row in rows:
        assert "CartPole-v1" in row and "x**" in row and "error" not in row and "skipped" not in row
        assert row in process.stdout  # printed as it went

    data = json.loads((tmp_path / "results.json").read_text())
    assert data["meta"]["threads"] == 1 and data["meta"]["seeds"] == [0]
    assert [entry["case"]["name"] for entry in data["cases"]] == cases
    for entry in data["cases"]:
        assert entry["status"] == "ran"
        summary = entry["summary"]
        assert summary["ratio"] > 0 and summary["cpu_ratio"] > 0
        for library in ("sb3", "lit"):
            side = summary[library]
            assert side["runs"] == 1 and side["errors"] == 0
            assert side["steps_per_s_median"] > 0 and side["peak_rss_mib"] > 50
            assert math.isfinite(side["return_mean"]) and side["return_mean"] > 0  # CartPole pays 1 per step
        runs: list[dict[str, Any]] = entry["runs"]
        assert sorted(run["library"] for run in runs) == ["lit", "sb3"]
        assert runs[0]["library"] == "sb3"  # repeat 0: SB3 goes first
        for run in runs:
            assert run["num_timesteps"] >= steps and run["recorded_steps"] == run["num_timesteps"]
            assert run["torch_threads"] == 1 and not run["other_library_imported"]
            assert len(run["eval_returns"]) == 10
            episode_steps = [step for step, _ in run["episodes"]]
            assert episode_steps and episode_steps == sorted(episode_steps)
            assert episode_steps[-1] <= run["num_timesteps"]
            assert all(value >= 1 for _, value in run["episodes"])

        png = (tmp_path / f"{entry['case']['name']}.png").read_bytes()
        assert png.startswith(PNG_SIGNATURE) and len(png) > 10_000


def test_sb3_gets_schedules_and_noise_as_objects(suite: ModuleType) -> None:
    pytest.importorskip("stable_baselines3")
    from gymnasium import spaces
    from stable_baselines3.common.noise import NormalActionNoise
    from suite.libraries import sb3_hyperparams

    shared = {
        "learning_rate": "lin_0.001",
        "action_noise": {"type": "normal", "sigma": 0.1},
        "policy_kwargs": {"net_arch": [400, 300]},
        "gamma": 0.98,
    }
    out = sb3_hyperparams(shared, spaces.Box(-1.0, 1.0, (3,)))
    assert out["learning_rate"](1.0) == pytest.approx(1e-3)  # progress_remaining 1: the start value
    assert out["learning_rate"](0.25) == pytest.approx(2.5e-4)  # rl-zoo3's lin_x: x * progress_remaining
    assert isinstance(out["action_noise"], NormalActionNoise)
    assert np.allclose(out["action_noise"]._sigma, [0.1, 0.1, 0.1])
    assert out["gamma"] == 0.98 and out["policy_kwargs"] == {"net_arch": [400, 300]}
    assert out["policy_kwargs"] is not shared["policy_kwargs"]  # the case's data stays untouched
    with pytest.raises(ValueError, match="ornstein_uhlenbeck"):
        sb3_hyperparams({"action_noise": {"type": "pink", "sigma": 0.1}}, spaces.Box(-1.0, 1.0, (1,)))


def test_cases_without_a_lit_plugin_are_skipped_with_a_reason(suite: ModuleType) -> None:
    from suite.cases import by_name
    from suite.runner import unavailable

    pytest.importorskip("sb3_contrib")
    case = by_name("crossq-zoo")
    reason = unavailable(case, lit_algos=["ppo", "sac"])
    assert reason is not None and "'crossq'" in reason and "lit-sb3-crossq" in reason
    assert unavailable(case, lit_algos=["crossq"]) is None


def test_library_order_alternates(suite: ModuleType) -> None:
    from suite.runner import order

    assert order(0, 0) == ("sb3", "lit") and order(1, 0) == ("lit", "sb3") and order(2, 0) == ("sb3", "lit")
    # With two seeds every repeat and every seed sees both orders.
    pairs = {(r, s): order(r, s)[0] for r in range(2) for s in range(2)}
    assert {pairs[0, 0], pairs[0, 1]} == {pairs[0, 0], pairs[1, 0]} == {"sb3", "lit"}


def test_learning_curve_is_a_running_mean_of_finished_episodes(suite: ModuleType) -> None:
    from suite.report import CURVE_WINDOW, _smoothed

    episodes = [[10 * (i + 1), float(i)] for i in range(CURVE_WINDOW + 5)]
    curve = _smoothed(episodes, np.array([5.0, 10.0, 25.0, 10.0 * len(episodes)]))
    assert math.isnan(curve[0])  # nothing finished yet
    assert curve[1] == 0.0 and curve[2] == pytest.approx(0.5)  # episodes 0 and 1 by step 25
    assert curve[3] == pytest.approx(np.mean([float(i) for i in range(5, CURVE_WINDOW + 5)]))


def test_unknown_names_are_refused_with_the_valid_ones(
    suite: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = importlib.util.spec_from_file_location("lit_sb3_bench_run", BENCHMARKS / "run.py")
    assert spec is not None and spec.loader is not None
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)  # its sys.path entry goes when the suite fixture restores sys.path
    with pytest.raises(SystemExit):
        run.parse_args(["--algos", "ppo", "dpq"])
    error = capsys.readouterr().err
    assert "unknown dpq" in error and "dqn" in error
    assert [case.name for case in run.select(run.parse_args(["--quick"]))] == run.QUICK
