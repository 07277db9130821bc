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

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
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
    assert (
        "| algorithm | env | config | steps | SB3 steps/s | lit-sb3 steps/s | ratio | steady ratio |" in table
    )
    assert "SBX not run" in table  # the default libraries: SB3 and lit-sb3, and the table says so
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
        assert summary["ratio"] > 0 and summary["cpu_ratio"] > 0 and summary["steady_ratio"] > 0
        assert "sbx" not in summary
        for library in ("sb3", "lit"):
            side = summary[library]
            assert side["runs"] == 1 and side["errors"] == 0
            assert side["steps_per_s_median"] > 0 and side["peak_rss_mib"] > 50
            assert side["steady_steps_per_s_median"] > 0
            assert math.isfinite(side["return_mean"]) and side["return_mean"] > 0  # CartPole pays 1 per step
        runs: list[dict[str, Any]] = entry["runs"]
        assert sorted(run["library"] for run in runs) == ["lit", "sb3"]
        assert runs[0]["library"] == "sb3"  # repeat 0: SB3 goes first
        for run in runs:
            assert run["num_timesteps"] >= steps and run["recorded_steps"] == run["num_timesteps"]
            assert 0 < run["steady_from"] < steps and run["steady_steps_per_s"] > 0
            assert run["torch_threads"] == 1 and not run["other_library_imported"]
            assert len(run["cpus"]) == 1  # one thread: pinned to one CPU, whatever the library
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
    # Three libraries rotate: each goes first once in three repeats, and each run sees all three.
    three = ("sb3", "sbx", "lit")
    firsts = [order(r, 0, three)[0] for r in range(3)]
    assert sorted(firsts) == sorted(three) and all(
        sorted(order(r, 1, three)) == sorted(three) for r in range(3)
    )


def test_sbx_gets_sb3s_defaults_where_its_own_differ(suite: ModuleType) -> None:
    pytest.importorskip("stable_baselines3")
    from gymnasium import spaces
    from suite.cases import by_name
    from suite.libraries import sbx_hyperparams

    box, two = spaces.Box(-1.0, 1.0, (1,)), spaces.Discrete(2)
    assert sbx_hyperparams(by_name("td3-default"), box)["policy_kwargs"] == {"net_arch": [400, 300]}
    assert sbx_hyperparams(by_name("dqn-default"), two)["policy_kwargs"] == {"net_arch": [64]}  # one width
    zoo = sbx_hyperparams(by_name("dqn-zoo"), two)
    assert (
        zoo["policy_kwargs"] == {"net_arch": [256]} and zoo["target_update_interval"] == 10
    )  # the case's own
    ppo = sbx_hyperparams(by_name("ppo-zoo-8env"), two)
    assert ppo["policy_kwargs"] == {"ortho_init": True} and ppo["learning_rate"](0.5) == pytest.approx(5e-4)
    assert "policy_kwargs" not in sbx_hyperparams(by_name("sac-default"), box)  # SBX's SAC defaults are SB3's
    assert by_name("qrdqn-zoo").sbx is None and by_name("a2c-zoo-cartpole").sbx is None
    assert by_name("crossq-zoo").sbx == "sbx:CrossQ"


def test_steady_state_starts_halfway_through_learning(suite: ModuleType) -> None:
    from suite.cases import by_name
    from suite.measure import _Record

    assert by_name("td3-zoo").steady_from(12_000) == 11_000  # learning_starts 10k: halfway from there
    assert by_name("sac-default").steady_from(1_000) == 550  # SB3's default learning_starts 100
    assert by_name("ppo-zoo-8env").steady_from(20_000) == 10_000
    record = _Record()
    record.steady_from, record.steady_start = 500, 10.0
    assert record.steady_rate(12.0, 1_000) == pytest.approx(250.0)
    assert _Record().steady_rate(12.0, 1_000) is None  # never reached


def test_a_missing_sbx_is_named_with_the_way_to_install_it(suite: ModuleType, tmp_path: Path) -> None:
    from suite.cases import by_name
    from suite.runner import jax_python_problem, unavailable_library

    problem = jax_python_problem(tmp_path / "no-venv" / "bin" / "python")
    assert problem is not None and "bash dev.sh setup-jax" in problem
    assert unavailable_library(by_name("sac-default"), "sbx", problem) == problem
    assert "SBX has no 'qrdqn'" in str(unavailable_library(by_name("qrdqn-zoo"), "sbx", None))
    assert unavailable_library(by_name("sac-default"), "lit", problem) is None


def test_the_table_reports_sbx_ratios_whole_run_and_steady(suite: ModuleType) -> None:
    from suite.cases import by_name
    from suite.report import summarize, table_row

    def run(library: str, whole: float, steady: float) -> dict[str, Any]:
        return {
            "library": library, "seed": 0, "steps_per_s": whole, "steady_steps_per_s": steady,
            "cpu_steps_per_s": whole, "peak_rss_mib": 300.0, "eval_mean": -150.0, "invalid_actions": 0,
        }  # fmt: skip

    summary = summarize([run("sb3", 100.0, 110.0), run("sbx", 150.0, 200.0), run("lit", 180.0, 240.0)])
    assert summary["ratio"] == pytest.approx(1.8) and summary["steady_ratio"] == pytest.approx(240 / 110)
    assert summary["sbx_ratio"] == pytest.approx(1.2) and summary["sbx_steady_ratio"] == pytest.approx(1.2)
    row = table_row(by_name("sac-default"), {"status": "ran", "steps": 1000, "summary": summary})
    assert (
        "| 150 (200) | **1.20x** | 1.20x | 1.80x | 1.20x |" in row
        and "| 180 (240) | **1.80x** | 2.18x |" in row
    )


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


def test_compare_with_runs_both_interpreters_alternating_and_reports_ratios(tmp_path: Path) -> None:
    """--compare-with: lit-sb3 under this interpreter against another one (here the same one), round by
    round, the first to run alternating; the table gives this/other CPU-time ratios with their range."""
    _needs("ppo")
    command = [
        sys.executable, str(BENCHMARKS / "run.py"), "--cases", "ppo-zoo-8env", "--steps", "512",
        "--repeats", "2", "--compare-with", sys.executable, "--out", str(tmp_path),
    ]  # fmt: skip
    process = subprocess.run(command, check=False, capture_output=True, text=True, timeout=600)
    assert process.returncode == 0, process.stdout + process.stderr
    runs = json.loads((tmp_path / "compare.json").read_text())["runs"]
    assert [(run["round"], run["tree"]) for run in runs] == [
        (0, "this"),
        (0, "other"),
        (1, "other"),
        (1, "this"),
    ]
    assert all(run["library"] == "lit" and run["cpu_s"] > 0 and run["num_timesteps"] >= 512 for run in runs)
    table = (tmp_path / "compare.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| ppo-zoo-8env |"))
    assert row.endswith("| 2 |") and row in process.stdout


def test_compare_ratios_pair_each_round_and_skip_failed_runs(suite: ModuleType) -> None:
    from suite import compare

    def run(round_index: int, tree: str, cpu_s: float, **extra: Any) -> dict[str, Any]:
        return {"case": "c", "round": round_index, "tree": tree, "cpu_s": cpu_s, **extra}

    runs = [
        run(0, "this", 2.0), run(0, "other", 1.0),
        run(1, "other", 4.0), run(1, "this", 3.0),
        run(2, "this", 5.0), run(2, "other", 5.0, error="worker exited with code 1"),
    ]  # fmt: skip
    assert compare.pair_ratios(runs, "c") == [2.0, 0.75]
    case = next(c for c in suite.cases.CASES if c.name == "ppo-zoo-8env")
    case = type(case)(**{**case.as_dict(), "name": "c"})
    assert "| c | 3.00 | 2.50 | 1.375 (0.750–2.000) | - | 2 |" in compare.table([case], runs)


def test_lit_only_hyperparameters_reach_lit_sb3_and_not_sb3(suite: ModuleType) -> None:
    """The compile variant of a case builds lit-sb3's model with ``compile=True`` and SB3's with the case's
    shared settings only (SB3 has no such argument); the worker counts child processes' CPU."""
    _needs("ppo")
    from suite.cases import QUICK, by_name
    from suite.libraries import LitRun, Sb3Run
    from suite.worker import children_cpu_s

    case = by_name("ppo-zoo-8env-compile")
    assert case.name in QUICK and case.lit_hyperparams == {"compile": True}
    assert case.hyperparams == by_name("ppo-zoo-8env").hyperparams
    assert LitRun(case, seed=0).model.compile_update is True
    assert LitRun(by_name("ppo-zoo-8env"), seed=0).model.compile_update is False
    assert Sb3Run(case, seed=0).model.n_epochs == 20  # built without the lit-sb3-only argument
    before = children_cpu_s()
    subprocess.run([sys.executable, "-c", "sum(range(10**6))"], check=True)
    assert children_cpu_s() >= before
