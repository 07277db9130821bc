"""Regenerate benchmarks/learning/README.md, curves/*.png and aggregate.json from the ledger's records.

    python benchmarks/learning/report.py [--results DIR] [--out DIR]

Works on any part of the ledger: a case with fewer than 3 seeds per library is marked as such, a case
with no record says so, records made under older settings of their case (budget, evaluation, hyperparameters)
are listed and left out.
Statistics:

* per case and library: the mean over seeds of ``final_mean`` (each record's last evaluation: 10
  episodes, deterministic on MuJoCo, sampled whole games on Atari), with a 95 % percentile-bootstrap
  interval over seeds (10,000 resamples);
* training episodes: the mean over seeds of each record's last ``train_curve`` point;
* overlap: the two intervals overlap ("within noise"), or one lies above the other;
* steps per CPU-second: a record's steps over its CPU seconds (evaluation included). Not wall time: the
  ledger runs at the lowest priority beside other work, and a run starved of its core took up to 3x its CPU
  time in wall time (sac-hopper lit-sb3 seed 0: 3,888 s wall, 1,205 s CPU); CPU-time ratio: SB3's CPU
  seconds over lit-sb3's per seed, geometric mean over the seeds both libraries ran on the same host CPU
  (above 1: lit-sb3 needs less CPU);
* aggregate (rliable): each run's score normalized per case, 0 = a uniformly random policy, 1 = SB3's mean
  final score on that case in this ledger; IQM with stratified-bootstrap 95 % intervals and a performance
  profile over the cases both libraries have runs of, with the same number of seeds (the smallest n among
  them; the lowest seeds). Every bootstrap is seeded: the same records give the same README.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from learning.cases import (  # noqa: E402
    CASES,
    CHEAP_CPU_S,
    CHEAP_SEEDS,
    MORE_SEEDS_WHY,
    RETIRED,
    SEEDS,
    LearningCase,
)

LIBRARIES = ("sb3", "lit-sb3")
LABELS = {"sb3": "SB3", "lit-sb3": "lit-sb3"}
COLORS = {"sb3": "tab:blue", "lit-sb3": "tab:orange"}
N_BOOT = 10_000
AGGREGATE_SEED = 0  # the same records always give the same README


def _stale_settings(record: dict[str, Any]) -> list[str]:
    case = next((c for c in CASES if c.name == record["case"]), None)
    return [] if case is None else case.stale_settings(record)


def _made_as_now(record: dict[str, Any]) -> bool:
    return not _stale_settings(record)


def load_records(results: Path) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``{case: {library: [record, ...] by seed}}`` of every complete record under ``results`` that was
    made as its case is now (``stale_records`` are the others)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for path in sorted(results.glob("*/*.json")):
        record = json.loads(path.read_text())
        if not record.get("complete", True) or not _made_as_now(record):
            continue
        out.setdefault(record["case"], {}).setdefault(record["library"], []).append(record)
    for libraries in out.values():
        for records in libraries.values():
            records.sort(key=lambda r: r["seed"])
    return out


def stale_records(results: Path) -> list[dict[str, Any]]:
    """Complete records made under older settings of their case: left out of every statistic until
    ``run.py --next`` replaces them."""
    records = (json.loads(path.read_text()) for path in sorted(results.glob("*/*.json")))
    return [r for r in records if r.get("complete", True) and not _made_as_now(r)]


def bootstrap_ci(values: list[float], seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of the mean of ``values`` (a point for one value)."""
    data = np.asarray(values, dtype=float)
    if len(data) < 2:
        return float(data.mean()), float(data.mean())
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(N_BOOT, len(data)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    finals = [float(r["final_mean"]) for r in records]
    low, high = bootstrap_ci(finals)
    rates = [float(r["steps"]) / float(r["cpu_seconds"]) for r in records if r.get("cpu_seconds")]
    # The training episodes of each run's last interval (records from before train_curve have none).
    train = [
        r["train_curve"][-1][1]
        for r in records
        if r.get("train_curve") and r["train_curve"][-1][1] is not None
    ]
    return {
        "train_last": statistics.fmean(train) if train else None,
        "train_n": len(train),
        "n": len(records),
        "seeds": [r["seed"] for r in records],
        "mean": statistics.fmean(finals),
        "ci": [low, high],
        "steps_per_cpu_s": statistics.fmean(rates) if rates else None,
        "cpu_seconds": statistics.fmean(float(r["cpu_seconds"]) for r in records),
        "peak_rss_mib": max(float(r["peak_rss_mib"]) for r in records),
    }


def _verdict(sb3: dict[str, Any] | None, lit: dict[str, Any] | None) -> str:
    if sb3 is None or lit is None:
        return "–"
    if min(sb3["n"], lit["n"]) < 2:
        return "n < 2"
    if lit["ci"][0] > sb3["ci"][1]:
        return "lit-sb3 above"
    if lit["ci"][1] < sb3["ci"][0]:
        return "**lit-sb3 below**"
    return "within noise"


def _held(case: LearningCase, sb3: dict[str, Any] | None, lit: dict[str, Any] | None) -> bool:
    """Whether neither library's mean final score is above the case's best held action: a policy stuck
    on one button scores as much, so the case does not (yet) show learning."""
    held = case.held_action_return
    return held is not None and sb3 is not None and lit is not None and max(sb3["mean"], lit["mean"]) <= held


def normalizer(
    case: LearningCase, sb3: dict[str, Any] | None, everything: list[float]
) -> tuple[float, float, str]:
    """(floor, scale, how): a score ``s`` normalizes to ``(s - floor) / scale``. The floor is a random
    policy's return; the scale SB3's mean above it, or, where SB3 is not above random, the best run's."""
    floor = case.random_return
    if sb3 is not None and sb3["mean"] - floor > 1e-6 * (abs(floor) + 1.0):
        return floor, sb3["mean"] - floor, "SB3 mean"
    best = max(everything) - floor if everything else 0.0
    return floor, best if best > 0 else 1.0, "best run (SB3 not above random)"


def plot_curve(case: LearningCase, libraries: dict[str, list[dict[str, Any]]], path: Path) -> None:
    """Mean learning curve per library with its 95 % bootstrap band over seeds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    for library in LIBRARIES:
        records = libraries.get(library, [])
        if not records:
            continue
        length = min(len(r["curve"]) for r in records)
        steps = [records[0]["curve"][i][0] for i in range(length)]
        values = np.array([[r["curve"][i][1] for i in range(length)] for r in records])
        mean = values.mean(axis=0)
        bands = np.array([bootstrap_ci(list(values[:, i])) for i in range(length)])
        label = f"{LABELS[library]} (n={len(records)})"
        ax.plot(steps, mean, color=COLORS[library], label=label)
        if len(records) > 1:
            ax.fill_between(steps, bands[:, 0], bands[:, 1], color=COLORS[library], alpha=0.2)
    ax.axhline(case.random_return, color="grey", linestyle=":", linewidth=1, label="random policy")
    if case.held_action_return is not None:
        ax.axhline(
            case.held_action_return, color="grey", linestyle="--", linewidth=1, label="best held action"
        )
    ax.set_title(f"{case.algo.upper()} on {case.env}")
    ax.set_xlabel("environment steps" + (" (agent steps, x4 frames)" if case.atari else ""))
    how = "det. episodes" if case.eval_deterministic else "games, sampled actions"
    ax.set_ylabel(f"mean return ({case.eval_episodes} {how})")
    ax.legend(loc="best", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def aggregate(table: dict[str, dict[str, Any]], out: Path) -> dict[str, Any] | None:
    """rliable's IQM (with stratified-bootstrap 95 % intervals) and performance profile of the
    SB3-normalized final scores, over the cases both libraries have runs of."""
    both = {
        name: min(row["sb3"]["n"], row["lit-sb3"]["n"])
        for name, row in table.items()
        if row["sb3"] and row["lit-sb3"]
    }
    if not both:
        return None
    # rliable wants as many runs of every case: the seed count n (up to the ledger's, so a cheap case's fourth
    # and fifth seeds stay out) whose cases x n is largest, the larger n on a tie, over the cases that have n.
    n = max(range(1, len(SEEDS) + 1), key=lambda k: (k * sum(seeds >= k for seeds in both.values()), k))
    usable = [name for name, seeds in both.items() if seeds >= n]
    scores = {
        library: np.array([[table[c]["normalized"][library][i] for c in usable] for i in range(n)])
        for library in LIBRARIES
    }
    from rliable import library as rly
    from rliable import metrics, plot_utils

    # rliable's stratified bootstrap draws from numpy's global generator (its ``random_state`` argument does
    # not reach the draws), so without a fixed seed each build of the same records moved the intervals.
    labelled = {LABELS[k]: v for k, v in scores.items()}
    taus = np.linspace(-0.5, 2.0, 101)
    saved = np.random.get_state()
    np.random.seed(AGGREGATE_SEED)
    try:
        iqm, intervals = rly.get_interval_estimates(
            labelled, lambda x: np.array([metrics.aggregate_iqm(x)]), reps=2000
        )
        profiles, profile_cis = rly.create_performance_profile(labelled, taus)
    finally:
        np.random.set_state(saved)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    plot_utils.plot_performance_profiles(
        profiles, taus, performance_profile_cis=profile_cis, colors={LABELS[k]: COLORS[k] for k in LIBRARIES},
        xlabel=r"SB3-normalized score $\tau$", ylabel=r"fraction of runs with score $> \tau$", ax=ax,
        labelsize="medium", ticklabelsize="medium",  # rliable's x-large cut the y label off at this size
    )  # fmt: skip
    handles = [plt.Line2D([0], [0], color=COLORS[k]) for k in LIBRARIES]
    ax.legend(handles, [LABELS[k] for k in LIBRARIES], loc="upper right", fontsize=8)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "performance-profile.png")
    plt.close(fig)
    return {
        "cases": usable,
        "seeds_per_case": n,
        "iqm": {label: float(value[0]) for label, value in iqm.items()},
        "iqm_ci": {label: [float(v) for v in ci[:, 0]] for label, ci in intervals.items()},
    }


def _fmt(value: float) -> str:
    return f"{value:,.1f}" if abs(value) < 1e4 else f"{value:,.0f}"


def _is_partial(summary: dict[str, Any] | None) -> bool:
    """A library's cell of a case with some records but fewer than the ledger's seeds."""
    return summary is not None and summary["n"] < len(SEEDS)


def _cell(summary: dict[str, Any] | None) -> str:
    if summary is None:
        return "–"
    partial = " *partial*" if _is_partial(summary) else ""
    return f"{_fmt(summary['mean'])} [{_fmt(summary['ci'][0])}, {_fmt(summary['ci'][1])}] (n={summary['n']}{partial})"


def _train_cell(sb3: dict[str, Any] | None, lit: dict[str, Any] | None) -> str:
    def one(summary: dict[str, Any] | None) -> str:
        return _fmt(summary["train_last"]) if summary and summary["train_last"] is not None else "–"

    return "–" if not (sb3 or lit) else f"{one(sb3)} / {one(lit)}"


def cpu_time_ratio(sb3: list[dict[str, Any]], lit: list[dict[str, Any]]) -> tuple[float, int] | None:
    """SB3's CPU seconds over lit-sb3's, the geometric mean over the seeds whose two records ran on the same
    host CPU (``host_cpu``), and how many such seeds there are. Records from different CPUs are not compared:
    the same run took 1.5-1.8x the CPU time on this project's Intel Xeon as on its AMD EPYC machine."""
    lit_by_seed = {r["seed"]: r for r in lit}
    ratios = [
        float(s["cpu_seconds"]) / float(lit_by_seed[s["seed"]]["cpu_seconds"])
        for s in sb3
        if s["seed"] in lit_by_seed and s.get("host_cpu") == lit_by_seed[s["seed"]].get("host_cpu")
    ]
    return (float(np.exp(np.mean(np.log(ratios)))), len(ratios)) if ratios else None


def record_cost(case: LearningCase, row: dict[str, Any]) -> tuple[float, bool]:
    """CPU seconds of one record of ``case`` and whether they were measured on its records: the mean of the
    two libraries' records once both have one, the ``COSTS`` estimate before."""
    if row["sb3"] and row["lit-sb3"]:
        return (row["sb3"]["cpu_seconds"] + row["lit-sb3"]["cpu_seconds"]) / 2, True
    return case.cpu_s, False


def _hyperparams(case: LearningCase) -> str:
    text = ", ".join(f"{k}={json.dumps(v)}" for k, v in case.hyperparams.items())
    return text.replace("|", "\\|")


def build(results: Path, out: Path) -> str:
    """Write README.md, curves/ and aggregate.json under ``out``; return the README's text."""
    records = load_records(results)
    stale = stale_records(results)
    table: dict[str, dict[str, Any]] = {}
    for case in CASES:
        libraries = records.get(case.name, {})
        row: dict[str, Any] = {
            lib: _summary(libraries[lib]) if libraries.get(lib) else None for lib in LIBRARIES
        }
        everything = [float(r["final_mean"]) for lib in LIBRARIES for r in libraries.get(lib, [])]
        floor, scale, how = normalizer(case, row["sb3"], everything)
        row["normalized_by"] = how
        row["cpu_time_ratio"] = cpu_time_ratio(libraries.get("sb3", []), libraries.get("lit-sb3", []))
        row["normalized"] = {
            lib: [(float(r["final_mean"]) - floor) / scale for r in libraries.get(lib, [])]
            for lib in LIBRARIES
        }
        table[case.name] = row
        if libraries:
            plot_curve(case, libraries, out / "curves" / f"{case.name}.png")
    agg = aggregate(table, out / "curves")
    total = sum(len(v) for libs in records.values() for v in libs.values())
    expected = sum(len(case.seeds) for case in CASES) * len(LIBRARIES)
    cheap = [case.name for case in CASES if len(case.seeds) > len(SEEDS) and case.name not in MORE_SEEDS_WHY]
    lines = [
        "# Learning ledger: lit-sb3 beside SB3 on Atari and MuJoCo",
        "",
        "Generated by `python benchmarks/learning/report.py` from the records in `results/` (do not edit by "
        "hand). One record = one run (case, library, seed) of `benchmarks/learning/run.py`: its own process, one "
        "torch thread, one core, the same hyperparameters in both libraries, evaluated every `eval every` steps "
        "with 10 episodes on a separately seeded env: MuJoCo deterministic; Atari whole games with real "
        "unclipped scores and sampled actions (rl-zoo3's Atari default: on the deterministic NoFrameskip-v4 "
        "emulator a deterministic policy replays a few games and a weak one presses one button, see "
        "`LearningCase.eval_deterministic`), each library on its own Atari stack: SB3 `AtariWrapper` + "
        "`VecFrameStack(4)`, lit-sb3 `RLEnvDataModule(atari=True)`; the same weights play the same games on "
        "both (a test checks it; lit-sb3's a2c-seaquest and dqn-roadrunner records began the first game of "
        "each point from the seed's second random no-op start instead of its first, an equally likely one).",
        "",
        f"**Records: {total} of {expected}** ({len(CASES)} cases x {len(LIBRARIES)} libraries x {len(SEEDS)} "
        f"seeds, {len(CHEAP_SEEDS)} for the cases that cost at most {CHEAP_CPU_S / 60:.0f} CPU-minutes a record: "
        f"{', '.join(cheap) or 'none'})."
        + (
            f" Cells marked *partial* have fewer than {len(SEEDS)} seeds; their intervals are not yet meaningful."
            if any(_is_partial(row[lib]) for row in table.values() for lib in LIBRARIES)
            else ""
        ),
        "",
        *(f"{name} runs {len(CHEAP_SEEDS)} seeds as well: {why}." for name, why in MORE_SEEDS_WHY.items()),
        *([""] if MORE_SEEDS_WHY else []),
    ]
    if stale:
        lines += [
            f"**{len(stale)} record(s) left out: made under older settings of their case** (the settings "
            "that changed in brackets); `run.py --next` trains them again: "
            + ", ".join(
                f"{r['case']} {r['library']} seed {r['seed']} ({_fmt(float(r['final_mean']))}; "
                f"{', '.join(_stale_settings(r))})"
                for r in stale
            )
            + ".",
            "",
        ]
    lines += [
        "## Results",
        "",
        "Final mean return: the mean over seeds of each run's last evaluation, with the 95 % bootstrap interval "
        "over seeds. Steps per CPU-s: steps over the CPU seconds of the record (evaluation included; wall "
        "time varies with the load on the shared machine), mean over seeds. These mix the two host CPUs the "
        "ledger has run on (each record names its `host_cpu`): the same runs take 1.5-1.8x the CPU time on the "
        "Intel Xeon as on the AMD EPYC (ppo-breakout seed 0 on the Xeon 4,127 and 4,257 CPU-s, seed 1 on the "
        "EPYC 2,498 and 2,288; sac-hopper 2,098 and 1,780 against 1,163 and 1,205). CPU-time ratio: SB3's CPU "
        "seconds over lit-sb3's for one seed, geometric mean over the seeds whose two records ran on the same "
        "CPU (n of them; above 1: lit-sb3 is cheaper). "
        "Training episodes: the mean raw return of the episodes the run trained on in its last eval interval "
        "(Atari: whole games, the sampling policy that learns), SB3 / lit-sb3, mean over seeds: a second view of "
        "the same runs. A verdict marked (both at or below the best held action) is on an Atari case where neither "
        "library's mean beats one button held all game (the Cases table's column): there the case does not show "
        "learning.",
        "",
        "| case | algorithm | env | steps | SB3 final [95 % CI] | lit-sb3 final [95 % CI] | verdict "
        "| training episodes | SB3 steps per CPU-s | lit-sb3 steps per CPU-s | CPU-time ratio | curve |",
        "|---|---|---|--:|---|---|---|--:|--:|--:|--:|---|",
    ]
    for case in CASES:
        row = table[case.name]
        sb3, lit = row["sb3"], row["lit-sb3"]
        rate = lambda s: f"{s['steps_per_cpu_s']:.0f}" if s and s["steps_per_cpu_s"] else "–"  # noqa: E731
        paired = row["cpu_time_ratio"]
        ratio = f"{paired[0]:.2f}x (n={paired[1]})" if paired else "–"
        curve = f"[png](curves/{case.name}.png)" if (sb3 or lit) else "–"
        verdict = _verdict(sb3, lit) + (
            " (both at or below the best held action)" if _held(case, sb3, lit) else ""
        )
        lines.append(
            f"| {case.name} | {case.algo.upper()} | {case.env} | {case.steps:,} | {_cell(sb3)} | {_cell(lit)} "
            f"| {verdict} | {_train_cell(sb3, lit)} | {rate(sb3)} | {rate(lit)} | {ratio} | {curve} |"
        )
    lines += [
        "",
        "**Why one seed's two runs differ.** Both libraries compute the same thing from the same seed: "
        "`tests/compat/test_sb3_update_parity.py` trains each family in both and compares every weight, on "
        "these cases' set-ups (DQN with its CnnPolicy on Breakout and Road Runner through each library's Atari "
        "stack and `optimize_memory_usage`: bit for bit with Adam built as SB3 builds it; A2C on Seaquest with "
        "rl-zoo3's RMSpropTFLike, QR-DQN, PPO on Breakout, SAC, TD3 with action noise, TQC, and PPO with "
        "observation and reward normalization: equal to float rounding; measured 2026-12-05 and 2026-12-06 "
        "while writing those tests; A2C's and PPO's rounding on Atari has three known sources, kept for speed "
        "and named in those tests). lit-sb3's default Adam is torch's fused kernel, and since 2026-12-06 its "
        "NatureCNN runs channels-last on the CPU; both round differently in the last bits, and deep-RL runs are "
        "chaotic: a 1e-9 nudge of SB3's "
        "own initial DDPG weights ends 200 Pendulum steps 0.012 away, so from one seed the curves agree early "
        "and then only in distribution. That is why the verdicts need seeds, not single runs. Three fixes came "
        "out of those tests on 2026-12-05 and apply to records made after them (each record names its commit): "
        "TD3 and TQC started from other initial weights than SB3's for the same seed, TD3's action noise came "
        "from a stream of its own, and PPO with normalization bootstrapped from statistics one observation "
        "short (2e-4 of the weights after one rollout). A fourth came on 2026-12-06: lit-sb3's Atari stack "
        "max-pooled grey frames where SB3 max-pools colour frames and then converts them, which gave other "
        "pixels on most games (44 % of Road Runner's observations, 63 % of Seaquest's); lit-sb3 Atari records "
        "made before it carry no `atari_frames` and are left out until trained again.",
    ]
    lines += ["", "## Aggregate (rliable)", ""]
    if agg is None:
        lines.append("No case has records of both libraries yet.")
    else:
        lines += [
            "Scores normalized per case: 0 = a uniformly random policy (the `random` column below: published "
            "reference scores, Atari from the DQN tables, MuJoCo D4RL's), 1 = SB3's mean "
            "final score on that case in this ledger (where SB3 is not above random: the best run of the case). "
            f"Over {len(agg['cases'])} case(s) with {agg['seeds_per_case']} seed(s) each ({', '.join(agg['cases'])}: "
            f"the seed count, up to {len(SEEDS)}, that covers the most runs of cases having it for both "
            "libraries, their lowest seeds); "
            "stratified bootstrap, 2,000 resamples.",
            "",
            "| library | IQM | 95 % CI |",
            "|---|--:|---|",
        ]
        for label in (LABELS[k] for k in LIBRARIES):
            low, high = agg["iqm_ci"][label]
            lines.append(f"| {label} | {agg['iqm'][label]:.3f} | [{low:.3f}, {high:.3f}] |")
        lines += ["", "![performance profile](curves/performance-profile.png)"]
    lines += [
        "",
        "## Cases",
        "",
        "Budgets: Atari 100k agent steps (400k frames, the Atari-100k setting of Kaiser et al. 2019), QR-DQN "
        "200k (at 100k it stayed on a held action's plateau in both libraries), the "
        "on-policy Atari cases 500k (at 100k neither A2C nor PPO left Breakout's random level: "
        "`ON_POLICY_ATARI` in cases.py); MuJoCo SAC/TD3/TQC 100k steps, PPO 300k. Each Atari game was chosen "
        "so that its budget separates a learning run from a random policy (retired cases below). "
        "Hyperparameters: rl-zoo3's entry (`lit_sb3.tuned_hyperparameters(algo, env)`), changed only where "
        "stated. Best held action (Atari): the best mean score of one action held for whole games, evaluated "
        "as the ledger evaluates (`constant_policies.py`, 10 games per action), the dashed line on the curves: "
        "a curve near it may be a policy collapsed onto one good button, not one that learned the game. "
        "Cost: CPU minutes of one record on one core, the mean of both libraries' records (estimates "
        "from `COSTS` in cases.py, marked ~, until a case has a record of each).",
        "",
        "| case | budget | eval every | n_envs | random | best held action | cost (CPU-min/record) "
        "| hyperparameters | changed from rl-zoo3 |",
        "|---|--:|--:|--:|--:|--:|--:|---|---|",
    ]
    costs = {case.name: record_cost(case, table[case.name]) for case in CASES}
    for case in CASES:
        seconds, measured = costs[case.name]
        cost = (f"{seconds / 60:.0f}" if measured else f"~{seconds / 60:.0f}") if seconds else "–"
        held = "–" if case.held_action_return is None else f"{case.held_action_return:,.0f}"
        lines.append(
            f"| {case.name} | {case.steps:,} | {case.eval_every:,} | {case.n_envs} | {case.random_return:g} "
            f"| {held} | {cost} | {_hyperparams(case)}{', normalize' if case.normalize else ''} "
            f"| {case.why or 'nothing'} |"
        )
    total_cost = sum(costs[case.name][0] * len(case.seeds) for case in CASES) * len(LIBRARIES) / 3600
    lines += [
        "",
        f"The whole ledger ({expected} records) costs about {total_cost:.1f} CPU-hours.",
        "",
        "Retired cases: their budget could not tell a learning run from a broken one (both libraries stayed at "
        "the random level), so the ledger stopped running them; their records stay in git at the commit named.",
        "",
        "| retired case | replaced by | what its records showed | records at |",
        "|---|---|---|---|",
        *(f"| {r.name} | {r.replaced_by} | {r.records} | {r.commit} |" for r in RETIRED),
        "",
        "## Running it",
        "",
        "```",
        "nohup nice -n 19 taskset -c 1 bash benchmarks/learning/loop.sh > ledger-loop.log 2>&1 &   # fills results/",
        "git add benchmarks/learning/results && git commit -m 'ledger records'               # the runner only writes",
        "python benchmarks/learning/report.py                                                # this page",
        "python benchmarks/learning/run.py --case sac-hopper --library lit-sb3 --seed 0 --until 10000",
        "```",
        "",
        "`--next` trains the first missing record (seed 0 of every case first, the two libraries back to back); a "
        "killed run resumes from its last eval point's checkpoint (`scratch/`, ignored by git). `--until` cuts a "
        "run after its first eval point at or past the given step and writes under `scratch/until/`, never "
        "into `results/`.",
        "",
    ]
    text = "\n".join(lines)
    out.mkdir(parents=True, exist_ok=True)
    (out / "README.md").write_text(text)
    (out / "aggregate.json").write_text(json.dumps({"cases": table, "aggregate": agg}, indent=1) + "\n")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=Path, default=HERE / "results")
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    build(args.results, args.out)
    print(f"wrote {args.out / 'README.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
