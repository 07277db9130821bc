"""The learning ledger (benchmarks/learning/): its runner writes real records and resumes killed runs; its
report turns records into the README table, curves and the rliable aggregate; its cases are rl-zoo3's.

The runner tests train the test-only CartPole DQN (600 steps, evaluated at 200, 400, 600) for real in
fresh processes, once per library; a run is interrupted by the runner's fault hook, which exits the
process hard right after its first checkpoint, as a kill would.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
RUN = BENCHMARKS / "learning" / "run.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RECORD_KEYS = {
    "case", "algo", "env", "library", "seed", "steps", "curve", "final_mean", "seconds", "cpu_seconds",
    "peak_rss_mib", "versions", "commit", "hyperparams", "eval_every", "budget", "torch_threads",
}  # fmt: skip


@pytest.fixture
def learning(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The ``learning`` package of benchmarks/, importable as run.py imports it."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import learning
    import learning.cases  # a submodule is an attribute only once imported; alone, no other test did

    yield learning


def _needs(*modules: str) -> None:
    for module in modules:
        pytest.importorskip(module)


def _run(*args: str, tmp: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable,
        str(RUN),
        *args,
        "--scratch",
        str(tmp / "scratch"),
        "--results",
        str(tmp / "results"),
    ]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, check=False
    )


@pytest.mark.parametrize("library", ["sb3", "lit-sb3"])
def test_a_killed_run_resumes_its_curve_and_writes_a_valid_record(tmp_path: Path, library: str) -> None:
    _needs("stable_baselines3", "lit_sb3_dqn")
    args = ("--case", "test-dqn-cartpole", "--library", library, "--seed", "0")
    killed = _run(*args, tmp=tmp_path, env={"LEDGER_CRASH_AFTER_CHECKPOINTS": "1"})
    assert killed.returncode == 75, killed.stdout + killed.stderr
    scratch = tmp_path / "scratch" / "test-dqn-cartpole" / f"{library}-seed0"
    state = json.loads((scratch / "state.json").read_text())
    assert [point for point, _ in state["curve"]] == [200]
    assert state["num_timesteps"] >= 200
    assert (scratch / "model.zip").is_file()
    assert any(scratch.glob("replay.*")), "an off-policy checkpoint holds its replay buffer"
    record_path = tmp_path / "results" / "test-dqn-cartpole" / f"{library}-seed0.json"
    assert not record_path.exists()

    resumed = _run(*args, tmp=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming at step" in resumed.stdout
    record = json.loads(record_path.read_text())
    assert RECORD_KEYS <= set(record)
    assert record["library"] == library and record["algo"] == "dqn" and record["env"] == "CartPole-v1"
    assert [point for point, _ in record["curve"]] == [200, 400, 600]
    assert record["curve"][0] == state["curve"][0], "the points before the interruption are kept"
    assert record["final_mean"] == record["curve"][-1][1]
    assert record["steps"] >= 600 and record["resumed"] == 1 and record["complete"] is True
    assert record["cpu_seconds"] > state["cpu_seconds"] > 0, "CPU time adds up over the two processes"
    assert record["torch_threads"] == 1 and record["peak_rss_mib"] > 0
    assert record["versions"]["stable-baselines3"] and record["versions"]["torch"]
    assert record["hyperparams"]["learning_starts"] == 100
    assert all(len(returns) == 2 for returns in record["eval_returns"])
    assert [point for point, _, _ in record["train_curve"]] == [200, 400, 600]
    assert record["train_curve"][0] == state["train_curve"][0]
    assert sum(count for _, _, count in record["train_curve"]) > 0, "600 CartPole steps end episodes"
    assert all(mean is None or mean > 0 for _, mean, _ in record["train_curve"]), "CartPole pays +1 a step"
    assert record["eval_deterministic"] is True
    assert not scratch.exists(), "a finished run's checkpoint is removed"


def test_until_cuts_the_run_outside_the_ledger(tmp_path: Path) -> None:
    _needs("stable_baselines3")
    done = _run("--case", "test-ppo-cartpole", "--library", "sb3", "--seed", "3", tmp=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    full = json.loads((tmp_path / "results" / "test-ppo-cartpole" / "sb3-seed3.json").read_text())
    cut = _run(
        "--case", "test-ppo-cartpole", "--library", "sb3", "--seed", "3", "--until", "100", tmp=tmp_path
    )
    assert cut.returncode == 0, cut.stdout + cut.stderr
    partial = json.loads(
        (tmp_path / "scratch" / "until" / "100" / "test-ppo-cartpole" / "sb3-seed3.json").read_text()
    )
    assert partial["complete"] is False and partial["until"] == 100
    assert 100 <= partial["steps"] < partial["budget"] == full["budget"], "steps: what the cut run trained"
    assert len(partial["curve"]) == 1
    assert partial["curve"][0] == full["curve"][0], "--until reproduces the record's first evaluation point"
    # and the training before it, which the learning rate's schedule over the whole budget steers (a run
    # cut by --until once learned over the cut's steps: another schedule, other training episodes)
    assert partial["train_curve"][0] == full["train_curve"][0]
    assert sorted(p.name for p in (tmp_path / "results").rglob("*.json")) == ["sb3-seed3.json"]


def test_next_takes_the_first_missing_record_and_skips_failed_ones(
    learning: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import learning.run as run

    monkeypatch.setattr(run, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(run, "SCRATCH", tmp_path / "scratch")
    order = run.ledger_order()
    assert len(order) == sum(len(case.seeds) for case in learning.cases.CASES) * 2
    assert len(set(order)) == len(order)
    first_extra = next(i for i, (_, _, seed) in enumerate(order) if seed >= 3)
    assert {seed for _, _, seed in order[:first_extra]} == {0, 1, 2}, "every case's 3 seeds before any 4th"
    assert all(seed >= 3 for _, _, seed in order[first_extra:])
    assert order[0][2] == order[1][2] == 0 and {order[0][1], order[1][1]} == {"sb3", "lit-sb3"}
    assert {case for case, _, seed in order if seed == 0} == {case.name for case in learning.cases.CASES}
    assert run.next_missing() == order[0]
    case = learning.cases.by_name(order[0][0])
    run.write_json(run.record_path(*order[0]), {"case": case.name, **case.describe()})
    assert run.next_missing() == order[1]
    scratch = run.scratch_dir(*order[1])
    scratch.parent.mkdir(parents=True, exist_ok=True)
    (scratch.parent / f".{scratch.name}.failed").write_text("Traceback ...")
    assert run.next_missing() == order[2]


def _synthetic(
    results: Path,
    case: Any,
    library: str,
    seed: int,
    offset: float,
    host_cpu: str = "CPU A",
    cpu_s: float = 0.0,
) -> None:
    rng = random.Random(
        zlib.crc32(f"{case.name}/{library}/{seed}".encode())
    )  # hash() of str varies per process
    curve = [
        [p, case.random_return + offset * (i + 1) + rng.random()] for i, p in enumerate(case.eval_points)
    ]
    record = {
        "case": case.name, "algo": case.algo, "env": case.env, "library": library, "seed": seed,
        "steps": case.steps, "curve": curve, "final_mean": curve[-1][1], "seconds": 100.0,
        "cpu_seconds": cpu_s or (90.0 if library == "sb3" else 60.0), "peak_rss_mib": 400.0,
        "train_steps_per_s": 250.0, "complete": True, "eval_deterministic": case.eval_deterministic,
        "host_cpu": host_cpu, "atari_frames": case.describe()["atari_frames"],
    }  # fmt: skip
    path = results / case.name / f"{library}-seed{seed}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))


def test_report_writes_table_curves_and_rliable_aggregate(learning: ModuleType, tmp_path: Path) -> None:
    _needs("matplotlib", "rliable")
    import learning.report as report

    cases = learning.cases.CASES
    results = tmp_path / "results"
    assert len(cases[1].seeds) == 5, "the second case is a cheap one"
    for case in cases[:3]:  # complete: 3 seeds per library (5 for the cheap one); lit-sb3 below on the third
        for seed in case.seeds:
            _synthetic(results, case, "sb3", seed, 10.0)
            _synthetic(results, case, "lit-sb3", seed, 10.0 if case is not cases[2] else 2.0)
    # cases[1]: seed 4's lit-sb3 record ran on another, slower CPU: its CPU time is not compared with SB3's
    _synthetic(results, cases[1], "lit-sb3", 4, 10.0, host_cpu="CPU B", cpu_s=120.0)
    _synthetic(results, cases[3], "sb3", 0, 10.0)  # partial: one seed, one library
    text = report.build(results, tmp_path / "out")

    assert text == (tmp_path / "out" / "README.md").read_text()
    expected = 2 * sum(len(case.seeds) for case in cases)
    assert f"**Records: 23 of {expected}**" in text and expected > 2 * 3 * len(cases)
    assert "Cells marked *partial* have fewer than 3 seeds" in text, "said while a cell is partial"
    results_table = text.split("## Aggregate")[0].splitlines()
    rows = {line.split(" | ")[0].strip("| "): line for line in results_table if line.startswith("| ")}
    assert "within noise" in rows[cases[0].name] and "(n=3)" in rows[cases[0].name]
    assert "(n=5)" in rows[cases[1].name]
    for case in cases[:3]:  # flagged where neither library's mean clears the best held action
        means = [statistics.fmean(
            json.loads(p.read_text())["final_mean"] for p in (results / case.name).glob(f"{lib}-seed*.json")
        ) for lib in ("sb3", "lit-sb3")]  # fmt: skip
        stuck = case.held_action_return is not None and max(means) <= case.held_action_return
        assert ("at or below the best held action" in rows[case.name]) == stuck, case.name
    assert any("at or below the best held action" in rows[case.name] for case in cases[:3]), (
        "the synthetic records put one case under its held action's score"
    )
    assert "**lit-sb3 below**" in rows[cases[2].name]
    assert "1.50x (n=3)" in rows[cases[0].name], "CPU-time ratio: SB3's 90 s over lit-sb3's 60 s"
    assert "1.50x (n=4)" in rows[cases[1].name], "the seed whose records ran on two CPUs is not paired"
    assert "(n=1 *partial*)" in rows[cases[3].name] and rows[cases[3].name].count("–") >= 3
    for case in cases[:4]:
        assert (tmp_path / "out" / "curves" / f"{case.name}.png").read_bytes().startswith(PNG_SIGNATURE)
    assert not (tmp_path / "out" / "curves" / f"{cases[4].name}.png").exists()
    assert (tmp_path / "out" / "curves" / "performance-profile.png").read_bytes().startswith(PNG_SIGNATURE)
    summary = json.loads((tmp_path / "out" / "aggregate.json").read_text())
    aggregate = summary["aggregate"]
    assert aggregate["cases"] == [case.name for case in cases[:3]], "the 5-seed case counts with 3 seeds"
    assert aggregate["seeds_per_case"] == 3
    assert aggregate["iqm"]["lit-sb3"] < aggregate["iqm"]["SB3"]
    low, high = aggregate["iqm_ci"]["SB3"]
    assert low <= aggregate["iqm"]["SB3"] <= high
    assert "| SB3 | " in text and "![performance profile]" in text
    case_rows = {  # the Cases table's cells, by case name
        cells[0]: cells
        for line in text.split("## Cases")[1].splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.strip("|").split("|")]) > 6
    }
    cost = {name: cells[6] for name, cells in case_rows.items()}  # the seventh column
    assert cost[cases[0].name] == f"{75 / 60:.0f}", "cost: the mean of SB3's 90 s and lit-sb3's 60 s"
    assert cost[cases[3].name] == f"~{cases[3].cpu_s / 60:.0f}", "one library only: the estimate"
    for case in cases:  # the best held action, the sixth column: Atari cases only
        held = case.held_action_return
        assert case_rows[case.name][5] == ("–" if held is None else f"{held:,.0f}"), case.name
    for retired in learning.cases.RETIRED:
        assert f"| {retired.name} | {retired.replaced_by} | " in text


def test_records_of_an_older_evaluation_are_left_out_and_trained_again(
    learning: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _needs("matplotlib")
    import learning.report as report
    import learning.run as run

    atari = next(case for case in learning.cases.CASES if case.atari)
    mujoco = next(case for case in learning.cases.CASES if not case.atari)
    assert atari.eval_deterministic is False and mujoco.eval_deterministic is True
    results = tmp_path / "results"
    for library in ("sb3", "lit-sb3"):
        _synthetic(results, atari, library, 0, 10.0)
        _synthetic(results, mujoco, library, 0, 10.0)
    for old in (results / atari.name / "sb3-seed0.json", results / mujoco.name / "sb3-seed0.json"):
        record = json.loads(old.read_text())  # as the ledger wrote records before: all deterministic
        del record["eval_deterministic"]
        old.write_text(json.dumps(record))

    assert set(report.load_records(results)[atari.name]) == {"lit-sb3"}
    assert [(r["case"], r["library"]) for r in report.stale_records(results)] == [(atari.name, "sb3")]
    text = report.build(results, tmp_path / "out")
    assert "**1 record(s) left out" in text and f"{atari.name} sb3 seed 0" in text
    monkeypatch.setattr(run, "RESULTS", results)
    monkeypatch.setattr(run, "SCRATCH", tmp_path / "scratch")
    assert not run.has_record(atari.name, "sb3", 0) and run.has_record(atari.name, "lit-sb3", 0)
    assert run.has_record(mujoco.name, "sb3", 0), "a record without the field was deterministic: MuJoCo's"
    assert run.next_missing() == (atari.name, "sb3", 0), "--next trains the stale record again"


def test_lit_sb3_atari_records_of_grey_max_pooling_are_stale(
    learning: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """lit-sb3 max-pooled grey frames before 2026-12-06: its Atari records without ``atari_frames`` are
    stale and trained again; SB3's (always colour frames first) and MuJoCo records without it are not."""
    _needs("matplotlib")
    import learning.report as report
    import learning.run as run

    atari = next(case for case in learning.cases.CASES if case.atari)
    mujoco = next(case for case in learning.cases.CASES if not case.atari)
    assert atari.describe()["atari_frames"] == learning.cases.ATARI_FRAMES
    results = tmp_path / "results"
    for case in (atari, mujoco):
        for library in ("sb3", "lit-sb3"):
            _synthetic(results, case, library, 0, 10.0)
            path = results / case.name / f"{library}-seed0.json"
            record = json.loads(path.read_text())  # as records were written before the field
            record.pop("atari_frames")
            path.write_text(json.dumps(record))

    assert [(r["case"], r["library"]) for r in report.stale_records(results)] == [(atari.name, "lit-sb3")]
    assert "; atari_frames)" in report.build(results, tmp_path / "out")
    monkeypatch.setattr(run, "RESULTS", results)
    monkeypatch.setattr(run, "SCRATCH", tmp_path / "scratch")
    assert run.has_record(atari.name, "sb3", 0) and run.has_record(mujoco.name, "lit-sb3", 0)
    assert run.next_missing() == (atari.name, "lit-sb3", 0), "--next trains the stale record again"
    before = {k: v for k, v in json.loads(json.dumps(atari.describe())).items() if k != "atari_frames"}
    for library, current in (("sb3", True), ("lit-sb3", False)):  # a checkpoint made before the field
        scratch = run.scratch_dir(atari.name, library, 0)
        scratch.mkdir(parents=True)
        (scratch / "state.json").write_text(json.dumps({"curve": [], "settings": before}))
        assert run.Run(atari, library, 0, None, scratch)._checkpoint_is_current() is current
        assert scratch.exists() is current, "a stale checkpoint is deleted, not resumed"


def test_records_of_other_settings_are_left_out_and_trained_again(
    learning: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record made before its case's budget, evaluation schedule or hyperparameters changed (the 100k
    Breakout records once the case went to 500k) is stale: the report names it with what changed."""
    _needs("matplotlib")
    import learning.report as report
    import learning.run as run

    case = learning.cases.CASES[0]
    results = tmp_path / "results"
    for library in ("sb3", "lit-sb3"):
        _synthetic(results, case, library, 0, 10.0)
    for library, change in (("sb3", {"budget": 100_000, "eval_every": 10_000}), ("lit-sb3", {})):
        path = results / case.name / f"{library}-seed0.json"
        record = {**json.loads(path.read_text()), **json.loads(json.dumps(case.describe())), **change}
        path.write_text(json.dumps(record))
    assert case.stale_settings(json.loads((results / case.name / "sb3-seed0.json").read_text())) == [
        "budget", "eval_every",
    ]  # fmt: skip
    changed = {**case.describe(), "hyperparams": {**case.hyperparams, "ent_coef": 0.5}}
    assert case.stale_settings(changed) == ["hyperparams"]
    assert case.stale_settings({**case.describe(), "why": "another reason"}) == [], (
        "an explanation is not a setting"
    )

    assert set(report.load_records(results)[case.name]) == {"lit-sb3"}
    text = report.build(results, tmp_path / "out")
    assert (
        "**1 record(s) left out" in text
        and f"{case.name} sb3 seed 0" in text
        and "budget, eval_every)" in text
    )
    monkeypatch.setattr(run, "RESULTS", results)
    monkeypatch.setattr(run, "SCRATCH", tmp_path / "scratch")
    assert not run.has_record(case.name, "sb3", 0) and run.has_record(case.name, "lit-sb3", 0)
    assert run.next_missing() == (case.name, "sb3", 0)


def test_a_checkpoint_of_other_settings_is_not_resumed(
    learning: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkpoint left by a run of the case's old settings is deleted and the run starts afresh, with
    saved settings and without (checkpoints from before they were saved: judged by their eval points)."""
    _needs("stable_baselines3")
    import learning.run as run

    case = learning.cases.by_name("test-ppo-cartpole")
    monkeypatch.setattr(run, "SCRATCH", tmp_path / "scratch")
    scratch = run.scratch_dir(case.name, "sb3", 0)
    now = json.loads(json.dumps(case.describe()))
    other = {**now, "budget": 2 * case.steps}
    before_budget = {**{k: v for k, v in now.items() if k != "budget"}, "steps": 2 * case.steps}
    for saved in (
        {"curve": [[case.eval_every, 1.0]], "settings": other},
        {"curve": [[case.eval_every, 1.0]], "settings": before_budget},  # the budget saved as "steps"
        {"curve": [[100, 1.0]]},
    ):
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / "state.json").write_text(json.dumps({**saved, "seconds": 1e6, "cpu_seconds": 1e6}))
        record = run.Run(case, "sb3", 0, None, scratch).execute()
        assert record["resumed"] == 0 and record["cpu_seconds"] < 1e6, "the old clocks are not carried on"
        assert [point for point, _ in record["curve"]] == case.eval_points
    kept = {"curve": [[case.eval_every, 1.0]], "settings": json.loads(json.dumps(case.describe()))}
    (scratch / "state.json").write_text(json.dumps(kept))
    assert run.Run(case, "sb3", 0, None, scratch)._checkpoint_is_current()


def test_report_bootstrap_interval_covers_the_mean(learning: ModuleType) -> None:
    import learning.report as report

    low, high = report.bootstrap_ci([1.0, 2.0, 3.0, 10.0])
    assert low < 4.0 < high and low >= 1.0 and high <= 10.0
    assert report.bootstrap_ci([5.0]) == (5.0, 5.0)


def test_aggregate_covers_the_most_runs_while_the_ledger_fills(learning: ModuleType, tmp_path: Path) -> None:
    """One seed of every case and a second of one: 1 seed x all cases beats 2 seeds x one case."""
    _needs("matplotlib", "rliable")
    import learning.report as report

    cases = learning.cases.CASES
    results = tmp_path / "results"
    for case in cases:
        for library in ("sb3", "lit-sb3"):
            _synthetic(results, case, library, 0, 10.0)
    for library in ("sb3", "lit-sb3"):
        _synthetic(results, cases[0], library, 1, 10.0)
    report.build(results, tmp_path / "out")
    aggregate = json.loads((tmp_path / "out" / "aggregate.json").read_text())["aggregate"]
    assert aggregate["seeds_per_case"] == 1 and aggregate["cases"] == [case.name for case in cases]


def test_the_same_records_give_the_same_report(learning: ModuleType, tmp_path: Path) -> None:
    """rliable bootstraps from numpy's global generator: the report seeds it (and puts the caller's back)."""
    _needs("matplotlib", "rliable")
    import learning.report as report

    results = tmp_path / "results"
    for case in learning.cases.CASES[:3]:
        for seed in (0, 1, 2):
            _synthetic(results, case, "sb3", seed, 10.0)
            _synthetic(results, case, "lit-sb3", seed, 3.0 + 4.0 * seed)
    np.random.seed(123)
    expected_draw = np.random.random()
    np.random.seed(123)
    first = report.build(results, tmp_path / "first")
    assert np.random.random() == expected_draw, "the caller's global numpy stream was moved"
    second = report.build(results, tmp_path / "second")
    assert first == second
    assert "*partial*" not in first, "records are missing, but no case has a partial cell to explain"
    aggregates = [json.loads((tmp_path / out / "aggregate.json").read_text()) for out in ("first", "second")]
    assert aggregates[0] == aggregates[1]
    low, high = aggregates[0]["aggregate"]["iqm_ci"]["lit-sb3"]
    assert low < high, "the synthetic lit-sb3 seeds differ, so the interval has width"


def test_the_committed_readme_is_the_report_of_the_committed_records(
    learning: ModuleType, tmp_path: Path
) -> None:
    """A record committed without running report.py would leave the README's table behind its records."""
    _needs("matplotlib", "rliable")
    import learning.report as report

    here = BENCHMARKS / "learning"
    text = report.build(here / "results", tmp_path / "out")
    assert text == (here / "README.md").read_text(), "run `python benchmarks/learning/report.py` and commit"


def test_cases_are_rl_zoo_entries_within_budget(learning: ModuleType) -> None:
    import lit_sb3

    cases = learning.cases.CASES
    assert len(cases) >= 10
    atari = {case.algo for case in cases if case.atari}
    mujoco = {case.algo for case in cases if not case.atari}
    assert {"ppo", "a2c", "dqn", "qrdqn"} <= atari and {"sac", "td3", "tqc", "ppo"} <= mujoco
    assert len([case for case in cases if case.atari]) >= 4 and len(mujoco) >= 4
    for case in cases:  # a collapsed-policy floor beside every Atari curve, none where it means nothing
        assert (case.held_action_return is not None) == case.atari, case.name
    missing = sorted({case.algo for case in cases} - set(lit_sb3.list_algos()))
    if missing:
        pytest.skip(f"lit-sb3 plugins not installed: {missing}")
    for case in cases:
        tuned = lit_sb3.tuned_hyperparameters(case.algo, case.env)
        model = dict(tuned["model"])
        assert model.pop("policy", "MlpPolicy") == case.policy, case.name
        assert model == case.zoo, f"{case.name}: zoo differs from rl-zoo3's entry"
        assert tuned["data"].get("n_envs", 1) == case.n_envs, case.name
        assert bool(tuned["data"].get("normalize", False)) == case.normalize, case.name
        assert not case.overrides or case.why, f"{case.name}: every override is explained"
        assert case.eval_points[-1] == case.steps and case.cpu_s > 0, case.name
    names = {case.name for case in cases}
    for retired in learning.cases.RETIRED:
        assert retired.name not in names and retired.replaced_by in names, retired.name
    more = learning.cases.MORE_SEEDS_WHY
    assert set(more) <= names and all(more.values()), "every extra-seed case exists and says why"
    for case in cases:  # five seeds where a record is cheap or a verdict needs them, three elsewhere
        five = case.cpu_s <= learning.cases.CHEAP_CPU_S or case.name in more
        assert case.seeds == (learning.cases.CHEAP_SEEDS if five else learning.cases.SEEDS), case.name
    base = {case.name: len(learning.cases.SEEDS) if case.name in more else len(case.seeds) for case in cases}
    hours = sum(case.cpu_s * base[case.name] for case in cases) * 2 / 3600
    assert hours <= 30, f"the ledger costs {hours:.1f} CPU-hours, the issue's bound is ~30"
    extra = sum(case.cpu_s * (len(case.seeds) - base[case.name]) for case in cases) * 2 / 3600
    assert extra <= 2, f"the extra seeds that settle verdicts cost {extra:.1f} CPU-hours"


def test_an_evaluation_leaves_trainings_random_streams_where_they_were(learning: ModuleType) -> None:
    """Sampled evaluation actions must not shift what training draws next (torch, numpy, ``random``)."""
    import numpy as np
    import torch
    from learning import run

    torch.manual_seed(3)
    np.random.seed(3)
    random.seed(3)
    with run._training_random_state_kept():
        torch.rand(5), np.random.rand(5), random.random()  # an evaluation's draws
    after = (torch.rand(3), np.random.rand(3), random.random())
    torch.manual_seed(3)
    np.random.seed(3)
    random.seed(3)
    untouched = (torch.rand(3), np.random.rand(3), random.random())
    assert torch.equal(after[0], untouched[0])
    assert np.array_equal(after[1], untouched[1])
    assert after[2] == untouched[2]


def test_both_libraries_evaluate_the_same_weights_on_the_same_games(learning: ModuleType) -> None:
    """An Atari evaluation point of either library plays the same game with the same weights: same env
    stack, same seeded first reset (lit-sb3's once started its first game from the seed's second no-op
    draw: 1,000 against SB3's 900 here), the whole game's unclipped score. DQN on Road Runner with
    SB3's initial weights copied into lit-sb3's network, greedy actions."""
    _needs("ale_py", "stable_baselines3")
    from suite.libraries import LitRun, Sb3Run

    case = learning.cases.by_name("dqn-roadrunner").suite_case()
    sb3, lit = Sb3Run(case, 0), LitRun(case, 0)
    lit.learn(1)  # lit-sb3 builds its networks once it has seen the env
    lit.model.policy.load_state_dict(sb3.model.policy.state_dict())
    assert sb3.evaluate_games(1) == lit.evaluate_games(1)


def test_constant_policies_score_every_action_over_whole_games(learning: ModuleType) -> None:
    """The degenerate-policy floor: one whole Breakout game per held action (short games: ~2 s)."""
    _needs("ale_py")
    import learning.constant_policies as constant_policies

    scores = constant_policies.constant_scores("Breakout", games=1)
    assert list(scores) == ["NOOP", "FIRE", "RIGHT", "LEFT"]
    assert all(score >= 0.0 for score in scores.values())
    assert constant_policies.constant_scores("Breakout", games=1) == scores, "seeded: the same games again"


def test_atari_bench_times_any_ledger_atari_case_beside_sb3(
    learning: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    """``bench_atari.py --case``: DQN on Road Runner with the case's replay settings and an earlier first
    update, SB3 beside lit-sb3 on SB3's layout; a case that is not Atari, or an on-policy one given
    ``--learning-starts``, is refused by name."""
    import torch
    from learning import bench_atari

    threads = torch.get_num_threads()
    argv = ["--case", "dqn-roadrunner", "--steps", "300", "--learning-starts", "100", "--rounds", "1"]
    try:
        assert bench_atari.main([*argv, "--only", "lit-sb3 fp32 contiguous"]) == 0
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().out
    assert out.startswith("dqn-roadrunner: dqn on RoadRunnerNoFrameskip-v4, 300 steps per run")
    rows = [line for line in out.splitlines() if line.startswith(("| SB3 |", "| lit-sb3 fp32 contiguous |"))]
    assert len(rows) == 2 and all(line.endswith("x |") for line in rows)
    for bad, message in [
        ("sac-hopper", "not a ledger Atari case"),
        ("a2c-seaquest", "has no learning_starts"),
    ]:
        with pytest.raises(SystemExit):
            bench_atari.main(["--case", bad, "--learning-starts", "100"])
        assert message in capsys.readouterr().err
