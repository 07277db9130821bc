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
    "| algorithm | env | config | steps | SB3 steps/s | lit-sb3 steps/s | ratio | CPU-time ratio "
    "| SB3 peak MiB | lit-sb3 peak MiB | SB3 return | lit-sb3 return |\n"
    "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
)


def _library_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Median speed over all runs, peak memory, and the final return over seeds (repeats of a seed
    averaged first)."""
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
        "cpu_steps_per_s_median": statistics.median(run["cpu_steps_per_s"] for run in done),
        "peak_rss_mib": max(run["peak_rss_mib"] for run in done),
        "return_per_seed": seed_returns,
        "return_mean": statistics.fmean(seed_returns),
        "return_std": statistics.pstdev(seed_returns),
        "invalid_actions": sum(run["invalid_actions"] for run in done),
    }


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Both libraries' summaries and the ratios lit-sb3 / SB3 (of the median steps per second, wall
    clock and CPU time)."""
    sb3 = _library_summary([run for run in runs if run["library"] == "sb3"])
    lit = _library_summary([run for run in runs if run["library"] == "lit"])
    summary: dict[str, Any] = {"sb3": sb3, "lit": lit}
    if sb3["runs"] and lit["runs"]:
        summary["ratio"] = lit["steps_per_s_median"] / sb3["steps_per_s_median"]
        summary["cpu_ratio"] = lit["cpu_steps_per_s_median"] / sb3["cpu_steps_per_s_median"]
    return summary


def _speed(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _return(side: dict[str, Any]) -> str:
    if not side.get("runs"):
        return "error"
    n = len(side["return_per_seed"])
    return f"{side['return_mean']:.1f} ± {side['return_std']:.1f} (n={n})"


def table_row(case: Case, result: dict[str, Any]) -> str:
    """The case's Markdown row; skipped and failed cases say so."""
    head = (
        f"| {case.sb3.split(':')[1]} ({case.sb3_label}) | {case.env} | {case.config} | {result['steps']:,} |"
    )
    if result["status"] == "skipped":
        return head + " skipped | | | | | | | |"
    summary = result["summary"]
    sb3, lit = summary["sb3"], summary["lit"]

    def cells(side: dict[str, Any], key: str, fmt: str) -> str:
        return format(side[key], fmt) if side.get("runs") else "error"

    ratio = f"**{summary['ratio']:.2f}x**" if "ratio" in summary else "–"
    cpu_ratio = f"{summary['cpu_ratio']:.2f}x" if "cpu_ratio" in summary else "–"
    return (
        f"{head} {_speed(sb3.get('steps_per_s_median'))} | {_speed(lit.get('steps_per_s_median'))} | {ratio} "
        f"| {cpu_ratio} | {cells(sb3, 'peak_rss_mib', '.0f')} | {cells(lit, 'peak_rss_mib', '.0f')} "
        f"| {_return(sb3)} | {_return(lit)} |"
    )


def _notes(cases: Sequence[tuple[Case, dict[str, Any]]]) -> list[str]:
    notes = []
    for case, result in cases:
        lines = [case.note] if case.note else []
        if result["status"] == "skipped":
            lines.append(f"skipped: {result['reason']}")
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
        "# lit-sb3 beside Stable-Baselines3",
        "",
        (
            f"{budget}, {meta['finished']}, {meta['wall_s'] / 60:.1f} min: "
            f"seeds {seeds} x {meta['repeats']} repeat(s), torch threads = {meta['threads']}, "
            f"{meta['cpu_count']} CPUs; torch {meta['versions'].get('torch')}, "
            f"stable-baselines3 {meta['versions'].get('stable-baselines3')}, "
            f"sb3-contrib {meta['versions'].get('sb3-contrib')}, lit-sb3-core {meta['versions'].get('lit-sb3-core')}."
        ),
        "",
        (
            "Steps/s: median over every run of `learn()` (environment steps / wall-clock seconds), each run in a "
            "fresh process, libraries alternating. Ratio: lit-sb3 / SB3 of those medians (CPU-time ratio: the "
            "same with process CPU time, steadier on a shared machine). Peak MiB: the largest `ru_maxrss` of a "
            "run's process. Return: deterministic evaluation, 10 episodes on separately seeded envs, mean ± std "
            'over seeds. "SB3" is the library named beside the algorithm.'
        ),
        "",
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
    for library, label, color in (("sb3", case.sb3_label, "tab:blue"), ("lit", LIT, "tab:orange")):
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
