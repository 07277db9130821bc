"""Results: per-case summaries, the Markdown table, ``results.json`` and the learning-curve plots."""

from __future__ import annotations

import json
import statistics
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from suite.cases import Case

__all__ = ["TABLE_HEADER", "plot_curves", "summarize", "table_row", "write_json", "write_markdown"]

LIT = "lit-sb3"
CURVE_WINDOW = 10  # a curve point is the mean return of the last 10 episodes finished by then
CURVE_POINTS = 200

TABLE_HEADER = (
    "| algorithm | env | config | steps | SB3 steps/s | lit-sb3 steps/s | ratio | steady ratio "
    "| SBX steps/s | vs SBX | steady vs SBX | CPU-time ratio | CPU-time vs SBX | SB3 peak MiB | lit-sb3 peak MiB "
    "| SB3 return | lit-sb3 return | SBX return |\n"
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
)
LIBRARY_NAMES = {"sb3": "SB3", "sbx": "SBX", "lit": LIT}


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _library_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median speeds (whole run, steady state, CPU time) over all runs, peak memory, and the final return
    over seeds (repeats of a seed averaged first)."""
    done = [run for run in runs if "error" not in run]
    if not done:
        return {"runs": 0, "errors": len(runs)}
    by_seed: dict[int, list[float]] = defaultdict(list)
    for run in done:
        by_seed[run["seed"]].append(run["eval_mean"])
    seed_returns = [statistics.fmean(values) for _, values in sorted(by_seed.items())]
    return {
        "runs": len(done),
        "errors": len(runs) - len(done),
        "steps_per_s_median": statistics.median(run["steps_per_s"] for run in done),
        "steady_steps_per_s_median": _median([run.get("steady_steps_per_s") for run in done]),
        "cpu_steps_per_s_median": statistics.median(run["cpu_steps_per_s"] for run in done),
        "steady_cpu_steps_per_s_median": _median([run.get("steady_cpu_steps_per_s") for run in done]),
        "peak_rss_mib": max(run["peak_rss_mib"] for run in done),
        "return_per_seed": seed_returns,
        "return_mean": statistics.fmean(seed_returns),
        "return_std": statistics.pstdev(seed_returns),
        "invalid_actions": sum(run["invalid_actions"] for run in done),
    }


def _ratio(lit: dict[str, Any], other: dict[str, Any], key: str) -> float | None:
    if not (lit.get("runs") and other.get("runs")) or lit.get(key) is None or not other.get(key):
        return None
    return float(lit[key] / other[key])


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each library's summary (SB3 and lit-sb3 always, SBX when it ran) and the ratios lit-sb3 / SB3 and
    lit-sb3 / SBX of the median steps per second: whole run (``ratio``, ``sbx_ratio``), steady state
    (``steady_ratio``, ``sbx_steady_ratio``) and CPU time (``cpu_ratio``)."""
    summary: dict[str, Any] = {
        library: _library_summary([run for run in runs if run["library"] == library])
        for library in ("sb3", "lit")
    }
    if any(run["library"] == "sbx" for run in runs):
        summary["sbx"] = _library_summary([run for run in runs if run["library"] == "sbx"])
    lit = summary["lit"]
    ratios = {
        "ratio": _ratio(lit, summary["sb3"], "steps_per_s_median"),
        "cpu_ratio": _ratio(lit, summary["sb3"], "cpu_steps_per_s_median"),
        "steady_ratio": _ratio(lit, summary["sb3"], "steady_steps_per_s_median"),
    }
    if "sbx" in summary:
        ratios["sbx_ratio"] = _ratio(lit, summary["sbx"], "steps_per_s_median")
        ratios["sbx_steady_ratio"] = _ratio(lit, summary["sbx"], "steady_steps_per_s_median")
        ratios["sbx_cpu_ratio"] = _ratio(lit, summary["sbx"], "cpu_steps_per_s_median")
        ratios["sbx_steady_cpu_ratio"] = _ratio(lit, summary["sbx"], "steady_cpu_steps_per_s_median")
    summary.update({key: value for key, value in ratios.items() if value is not None})
    return summary


def _speed(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _speeds(side: dict[str, Any] | None) -> str:
    """``whole (steady)`` steps per second of a library, ``–`` if it did not run."""
    if side is None:
        return "–"
    if not side.get("runs"):
        return "error"
    steady = side.get("steady_steps_per_s_median")
    whole = _speed(side["steps_per_s_median"])
    return whole if steady is None else f"{whole} ({_speed(steady)})"


def _return(side: dict[str, Any] | None) -> str:
    if side is None:
        return "–"
    if not side.get("runs"):
        return "error"
    n = len(side["return_per_seed"])
    return f"{side['return_mean']:.1f} ± {side['return_std']:.1f} (n={n})"


def _times(value: float | None, bold: bool = False) -> str:
    if value is None:
        return "–"
    return f"**{value:.2f}x**" if bold else f"{value:.2f}x"


def _cpu_times(summary: dict[str, Any]) -> str:
    """lit-sb3 / SBX in CPU time, whole run (steady state)."""
    whole, steady = summary.get("sbx_cpu_ratio"), summary.get("sbx_steady_cpu_ratio")
    if whole is None:
        return "–"
    return _times(whole) if steady is None else f"{_times(whole)} ({_times(steady)})"


def table_row(case: Case, result: dict[str, Any]) -> str:
    """The case's Markdown row; skipped and failed cases say so. Steps/s cells read ``whole (steady)``."""
    head = (
        f"| {case.sb3.split(':')[1]} ({case.sb3_label}) | {case.env} | {case.config} | {result['steps']:,} |"
    )
    if result["status"] == "skipped":
        return head + " skipped |" + " |" * 13
    summary = result["summary"]
    sb3, lit, sbx = summary["sb3"], summary["lit"], summary.get("sbx")

    def cells(side: dict[str, Any], key: str, fmt: str) -> str:
        return format(side[key], fmt) if side.get("runs") else "error"

    return (
        f"{head} {_speeds(sb3)} | {_speeds(lit)} | {_times(summary.get('ratio'), bold=True)} "
        f"| {_times(summary.get('steady_ratio'))} | {_speeds(sbx)} | {_times(summary.get('sbx_ratio'), bold=True)} "
        f"| {_times(summary.get('sbx_steady_ratio'))} | {_times(summary.get('cpu_ratio'))} "
        f"| {_cpu_times(summary)} "
        f"| {cells(sb3, 'peak_rss_mib', '.0f')} | {cells(lit, 'peak_rss_mib', '.0f')} "
        f"| {_return(sb3)} | {_return(lit)} | {_return(sbx)} |"
    )


def _notes(cases: Sequence[tuple[Case, dict[str, Any]]]) -> list[str]:
    notes = []
    for case, result in cases:
        lines = [case.note] if case.note else []
        if result["status"] == "skipped":
            lines.append(f"skipped: {result['reason']}")
        if result.get("sbx_skipped"):
            lines.append(f"no SBX run: {result['sbx_skipped']}")
        for run in result.get("runs", []):
            if "error" in run:
                lines.append(
                    f"{run['library']} seed {run['seed']} repeat {run['repeat']} failed: {run['error']}"
                )
        if case.action_masks and result["status"] == "ran":
            counts = {key: result["summary"][key].get("invalid_actions") for key in ("sb3", "lit")}
            lines.append(
                f"forbidden actions in training: {case.sb3_label} {counts['sb3']}, {LIT} {counts['lit']}"
            )
        notes += [f"- `{case.name}`: {line}" for line in lines]
    return notes


def write_markdown(path: Path, meta: dict[str, Any], cases: Sequence[tuple[Case, dict[str, Any]]]) -> None:
    """``results.md``: how it was measured, the table, notes, and links to the plots."""
    seeds = ", ".join(map(str, meta["seeds"]))
    budget = "Quick budgets" if meta["quick"] else "rl-zoo3 budgets"
    if meta["steps_override"]:
        budget = f"{meta['steps_override']:,} steps per run"
    lines = [
        "# lit-sb3 beside Stable-Baselines3 (and SBX)",
        "",
        (
            f"{budget}, {meta['finished']}, {meta['wall_s'] / 60:.1f} min: "
            f"seeds {seeds} x {meta['repeats']} repeat(s), torch threads = {meta['threads']}"
            f"{'' if meta.get('pinned_cpu') is None else ', every run pinned to CPU ' + str(meta['pinned_cpu'])}, "
            f"{meta['cpu_count']} CPUs; torch {meta['versions'].get('torch')}, "
            f"stable-baselines3 {meta['versions'].get('stable-baselines3')}, "
            f"sb3-contrib {meta['versions'].get('sb3-contrib')}, lit-sb3-core {meta['versions'].get('lit-sb3-core')}."
        ),
        "",
        (
            "Steps/s: median over every run of `learn()` (environment steps / wall-clock seconds), each run in a "
            "fresh process, libraries taking turns to go first; in brackets the steady state, the same from "
            "halfway through the learning part of the run (after `learning_starts`) to its end, past warm-up "
            "and SBX's JIT compilation. Ratio: lit-sb3 / SB3 of those medians, whole run and steady state; "
            "vs SBX: lit-sb3 / SBX (CPU-time ratios: the same with process CPU time, all threads counted, "
            "steadier on a shared machine). Peak MiB: the largest `ru_maxrss` of a run's process. Return: "
            'deterministic evaluation, 10 episodes on separately seeded envs, mean ± std over seeds. "SB3" is '
            "the library named beside the algorithm; SBX (SB3 in JAX) runs with SB3's defaults where its own "
            "differ."
        ),
        "",
        *([meta["sbx_note"], ""] if meta.get("sbx_note") else []),
        TABLE_HEADER,
        *(table_row(case, result) for case, result in cases),
    ]
    notes = _notes(cases)
    if notes:
        lines += ["", "Notes:", "", *notes]
    plots = [f"- [{case.name}]({case.name}.png)" for case, result in cases if result["status"] == "ran"]
    if plots:
        lines += [
            "",
            "Learning curves (episode return vs environment steps, mean over seeds ± std):",
            "",
            *plots,
        ]
    path.write_text("\n".join(lines) + "\n")


def write_json(path: Path, meta: dict[str, Any], cases: Sequence[tuple[Case, dict[str, Any]]]) -> None:
    """``results.json``: settings, and for every case its definition, summary and every run."""
    data = {"meta": meta, "cases": [{"case": case.as_dict(), **result} for case, result in cases]}
    path.write_text(json.dumps(data, indent=1, default=_jsonable))


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    raise TypeError(f"not JSON-serializable: {type(value).__name__}")


def _smoothed(episodes: list[list[float]], grid: np.ndarray) -> np.ndarray:
    """At each grid step: the mean return of the last CURVE_WINDOW episodes finished by then (NaN before
    the first)."""
    if not episodes:
        return np.full(len(grid), np.nan)
    steps = np.array([step for step, _ in episodes], dtype=float)
    cumulative = np.concatenate([[0.0], np.cumsum([ret for _, ret in episodes])])
    finished = np.searchsorted(steps, grid, side="right")
    first = np.maximum(finished - CURVE_WINDOW, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = (cumulative[finished] - cumulative[first]) / (finished - first)
    return np.where(finished > 0, values, np.nan)


def plot_curves(path: Path, case: Case, runs: list[dict[str, Any]]) -> None:
    """Episode return vs environment steps, lit-sb3 beside SB3: mean over seeds (repeats of a seed
    averaged), a band of ± one standard deviation across seeds, and the final evaluation at the end."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [run for run in runs if "error" not in run]
    end = max((run["num_timesteps"] for run in done), default=1)
    grid = np.linspace(0, end, CURVE_POINTS)
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for library, label, color in (
        ("sb3", case.sb3_label, "tab:blue"),
        ("sbx", "SBX", "tab:green"),
        ("lit", LIT, "tab:orange"),
    ):
        by_seed: dict[int, list[np.ndarray]] = defaultdict(list)
        finals = []
        for run in done:
            if run["library"] == library:
                by_seed[run["seed"]].append(_smoothed(run["episodes"], grid))
                finals.append(run["eval_mean"])
        if not by_seed:
            continue
        with warnings.catch_warnings():  # an all-NaN column (no episode finished yet) is expected
            warnings.simplefilter("ignore", RuntimeWarning)
            seeds = np.array([np.nanmean(curves, axis=0) for curves in by_seed.values()])
            mean, std = np.nanmean(seeds, axis=0), np.nanstd(seeds, axis=0)
        axes.plot(grid, mean, color=color, label=f"{label} (training episodes, {len(by_seed)} seed(s))")
        axes.fill_between(grid, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
        final = statistics.fmean(finals)
        spread = statistics.pstdev(finals) if len(finals) > 1 else 0.0
        axes.errorbar(
            [end], [final], yerr=[spread], fmt="D", color=color, capsize=3, label=f"{label} final eval"
        )
    axes.set_xlabel("environment steps")
    axes.set_ylabel(f"episode return (mean of last {CURVE_WINDOW})")
    axes.set_title(f"{case.sb3.split(':')[1]}, {case.env}: {case.config}", fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
