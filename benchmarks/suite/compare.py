"""lit-sb3 against another lit-sb3: this checkout's interpreter and another one (an older checkout's venv),
case by case, in alternating rounds, by process CPU time.

A refactor should leave speed where it was. Two runs of one tree on a shared machine already differ by
tens of percent in wall time, so the two trees run side by side: every round runs each case once with
each interpreter, the one that goes first alternating from round to round, and the measure is the CPU
time of ``learn()`` (``time.process_time``: time the process spent on a core, which other processes on the
machine barely move). The report gives, per case, the ratio ``this / other`` of each round's pair and its
median and range over the rounds: 1.00 is the same speed, above 1 this tree is slower.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from suite.cases import Case
from suite.runner import Settings, run_one

__all__ = ["TREES", "compare_cases", "pair_ratios", "table"]

TREES = ("this", "other")


def compare_cases(
    cases: Sequence[Case],
    settings: Settings,
    other_python: Path,
    rounds: int,
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every run: ``rounds`` rounds, each running every case once per tree (``this``: this interpreter;
    ``other``: ``other_python``), ``this`` first in even rounds and ``other`` first in odd ones. Rounds go
    over all cases before the next starts, so a change in the machine's load spreads over every case."""
    pythons: dict[str, Path | None] = {"this": None, "other": other_python}
    runs = []
    for round_index in range(rounds):
        trees = TREES if round_index % 2 == 0 else TREES[::-1]
        for case in cases:
            for tree in trees:
                run = run_one(
                    case,
                    "lit",
                    settings.seeds[0],
                    settings.budget(case),
                    settings.threads,
                    pythons[tree],
                    settings.cpu(),
                )
                run.update(tree=tree, round=round_index)
                runs.append(run)
                if progress is not None:
                    progress(run)
    return runs


def pair_ratios(runs: Sequence[dict[str, Any]], case: str, key: str = "cpu_s") -> list[float]:
    """``this / other`` of ``key`` for each round where both trees ran ``case`` without error."""
    by_round: dict[int, dict[str, float]] = {}
    for run in runs:
        if run["case"] == case and "error" not in run and run.get(key):
            by_round.setdefault(run["round"], {})[run["tree"]] = float(run[key])
    return [pair["this"] / pair["other"] for _, pair in sorted(by_round.items()) if len(pair) == 2]


def table(cases: Sequence[Case], runs: Sequence[dict[str, Any]]) -> str:
    """The markdown table: per case, median CPU seconds of each tree, and the per-round ratio of the whole
    ``learn()`` and of its steady part (steps per CPU second, inverted so that above 1 is slower too)."""
    lines = [
        "| case | CPU s this | CPU s other | this/other, whole learn() | steady part | rounds |",
        "|---|--:|--:|---|---|--:|",
    ]
    for case in cases:
        seconds = {
            tree: [
                r["cpu_s"] for r in runs if r["case"] == case.name and r["tree"] == tree and "error" not in r
            ]
            for tree in TREES
        }
        whole = pair_ratios(runs, case.name)
        # Steady rates are steps per CPU second: other/this is this tree's time over the other's.
        steady = [1 / ratio for ratio in pair_ratios(runs, case.name, "steady_cpu_steps_per_s")]
        lines.append(
            f"| {case.name} | {_median(seconds['this'])} | {_median(seconds['other'])} | {_spread(whole)} "
            f"| {_spread(steady)} | {len(whole)} |"
        )
    return "\n".join(lines)


def _median(values: Sequence[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def _spread(ratios: Sequence[float]) -> str:
    if not ratios:
        return "-"
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})"
