"""``lit-sb3 plot RUN_DIR... -o curve.png``: learning curves from TensorBoard event files or CSV logs.

Runs are found below each RUN_DIR (a run is a folder holding ``events.out.tfevents.*`` or a CSVLogger's
``metrics.csv``) and grouped by label: the run folder's name without its ``_<N>`` suffix (RLTrainer names
runs ``<run_name>_<N>``), or the parent's name for CSVLogger's ``version_<N>`` folders. Each group is drawn
as the mean over its runs with a ±1 std band, on the environment steps the metric was logged at.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError, positive_int_option

__all__ = ["Curve", "configure", "find_runs", "group_label", "read_curve", "run_plot"]

_RUN_SUFFIX = re.compile(r"^(?P<label>.+?)_(?P<n>\d+)$")
_CSV_VERSION = re.compile(r"^version_\d+$")
_GRID_POINTS = 300


@dataclass
class Curve:
    """One run's metric: ``values[i]`` was logged at ``steps[i]`` environment steps."""

    run: Path
    label: str
    steps: Any  # numpy arrays
    values: Any


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Plot learning curves from the TensorBoard event files (or CSVLogger metrics.csv) below each RUN_DIR: "
        "one line per group of runs (mean over runs, shaded ±1 std), x-axis in environment steps."
    )
    parser.epilog = (
        "examples:\n"
        "  lit-sb3 plot lightning_logs -o curve.png\n"
        "  lit-sb3 plot runs/ppo runs/a2c --group-by arg --metric val/mean_reward -o eval.png\n"
        "groups: lightning_logs/ppo_CartPole-v1_1 and _2 form the group 'ppo_CartPole-v1'"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="a run folder, or a folder of runs (searched recursively)",
    )
    parser.add_argument(
        "-o",
        "--output",
        default="learning_curve.png",
        help="image file to write (.png, .pdf, .svg; default learning_curve.png)",
    )
    parser.add_argument(
        "--metric",
        default="rollout/ep_rew_mean",
        help="scalar to plot (default rollout/ep_rew_mean; e.g. val/mean_reward)",
    )
    parser.add_argument(
        "--group-by",
        choices=("name", "arg"),
        default="name",
        help="'name': by run folder name without _<N> (default); 'arg': one group per RUN_DIR argument",
    )
    parser.add_argument(
        "--smooth",
        type=int,
        default=1,
        metavar="N",
        help="moving average over N logged points (default 1: none)",
    )
    parser.add_argument("--title", default=None, help="figure title (default: the metric)")
    parser.add_argument(
        "--max-steps", type=float, default=None, help="cut the x-axis at this many environment steps"
    )


def run_plot(args: argparse.Namespace) -> int:
    positive_int_option("--smooth", args.smooth)
    curves = []
    for run_dir in args.run_dirs:
        root = Path(run_dir)
        if not root.exists():
            raise CliError(f"No such directory: {run_dir!r}.")
        runs = find_runs(root)
        if not runs:
            raise CliError(
                f"No logs below {run_dir!r}: expected events.out.tfevents.* (TensorBoard) or metrics.csv "
                "(CSVLogger) files, as RLTrainer writes under <root>/lightning_logs/<run_name>_<N>/."
            )
        for run in runs:
            label = root.name if args.group_by == "arg" else group_label(run)
            curve = read_curve(run, args.metric, label or run_dir)
            if curve is not None:
                curves.append(curve)
    if not curves:
        available = sorted(
            {tag for run_dir in args.run_dirs for run in find_runs(Path(run_dir)) for tag in _tags(run)}
        )
        raise CliError(
            f"No run logged {args.metric!r}. Logged scalars: {', '.join(available) or 'none'}. Pick one with --metric."
        )
    groups = _group(curves)
    output = Path(args.output)
    _draw(groups, args, output)
    _print_summary(groups, args.metric)
    print(f"Wrote {output} ({len(curves)} run(s) in {len(groups)} group(s)).")
    return 0


# --- reading ------------------------------------------------------------------------------------------


def find_runs(root: Path) -> list[Path]:
    """Folders at or below ``root`` holding TensorBoard event files or a ``metrics.csv``, sorted."""
    found = {path.parent for path in root.rglob("events.out.tfevents.*")}
    found |= {path.parent for path in root.rglob("metrics.csv")}
    if root.is_file():
        found.add(root.parent)
    return sorted(found)


def group_label(run: Path) -> str:
    """``ppo_CartPole-v1_3`` -> ``ppo_CartPole-v1``; CSVLogger's ``name/version_0`` -> ``name``."""
    if _CSV_VERSION.match(run.name):
        return run.parent.name
    match = _RUN_SUFFIX.match(run.name)
    return match.group("label") if match else run.name


def read_curve(run: Path, metric: str, label: str) -> Curve | None:
    """The metric's (steps, values) in ``run``, sorted by step; None when the run did not log it."""
    import numpy as np

    points = _read_csv(run / "metrics.csv", metric) if (run / "metrics.csv").exists() else []
    if not points and any(run.glob("events.out.tfevents.*")):
        points = _read_tensorboard(run, metric)
    if not points:
        return None
    # A resumed run may log a step twice; keep the last value for each step.
    by_step = dict(sorted(points))
    steps = np.fromiter(by_step.keys(), dtype=float)
    values = np.fromiter(by_step.values(), dtype=float)
    return Curve(run, label, steps, values)


def _read_tensorboard(run: Path, metric: str) -> list[tuple[float, float]]:
    accumulator = _accumulator(run)
    if metric not in accumulator.Tags().get("scalars", []):
        return []
    return [(float(event.step), float(event.value)) for event in accumulator.Scalars(metric)]


def _accumulator(run: Path) -> Any:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(str(run), size_guidance={"scalars": 0})  # 0: keep every point
    accumulator.Reload()
    return accumulator


def _read_csv(path: Path, metric: str) -> list[tuple[float, float]]:
    import csv

    points = []
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            value, step = row.get(metric), row.get("step")
            if value not in (None, "") and step not in (None, ""):
                points.append((float(step), float(value)))
    return points


def _tags(run: Path) -> list[str]:
    if (run / "metrics.csv").exists():
        import csv

        with (run / "metrics.csv").open(newline="") as handle:
            header = next(csv.reader(handle), [])
        return [name for name in header if name not in ("step", "epoch")]
    return list(_accumulator(run).Tags().get("scalars", []))


# --- aggregating and drawing --------------------------------------------------------------------------


def _group(curves: list[Curve]) -> dict[str, list[Curve]]:
    groups: dict[str, list[Curve]] = {}
    for curve in curves:
        groups.setdefault(curve.label, []).append(curve)
    return groups


def _smooth(values: Any, window: int) -> Any:
    import numpy as np

    if window <= 1 or len(values) < 2:
        return values
    window = min(window, len(values))
    kernel = np.ones(window)
    # A trailing average that uses fewer points at the start instead of padding.
    return (
        np.convolve(values, kernel, mode="full")[: len(values)]
        / np.convolve(np.ones_like(values), kernel, mode="full")[: len(values)]
    )


def aggregate(curves: list[Curve], smooth: int = 1, max_steps: float | None = None) -> tuple[Any, Any, Any]:
    """``(steps, mean, std)`` over runs, on a common grid where every run has data (interpolated)."""
    import numpy as np

    series = []
    for curve in curves:
        keep = curve.steps <= max_steps if max_steps is not None else np.ones_like(curve.steps, dtype=bool)
        if keep.any():
            series.append((curve.steps[keep], _smooth(curve.values[keep], smooth)))
    if not series:
        return np.array([]), np.array([]), np.array([])
    if len(series) == 1:
        steps, values = series[0]
        return steps, values, np.zeros_like(values)
    start = max(steps[0] for steps, _ in series)
    end = min(steps[-1] for steps, _ in series)
    if end <= start:  # runs that do not overlap: fall back to the union of their steps
        start, end = min(steps[0] for steps, _ in series), max(steps[-1] for steps, _ in series)
    grid = np.linspace(start, end, _GRID_POINTS)
    stacked = np.stack([np.interp(grid, steps, values) for steps, values in series])
    return grid, stacked.mean(axis=0), stacked.std(axis=0)


def _draw(groups: dict[str, list[Curve]], args: argparse.Namespace, output: Path) -> None:
    try:
        import matplotlib
    except ImportError:
        raise CliError(
            "lit-sb3 plot needs matplotlib: pip install matplotlib (or 'lit-sb3-core[plot]')."
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import EngFormatter

    figure, axes = plt.subplots(figsize=(8, 5), dpi=150)
    colors = plt.get_cmap("tab10")
    for i, (label, curves) in enumerate(sorted(groups.items())):
        steps, mean, std = aggregate(curves, args.smooth, args.max_steps)
        if len(steps) == 0:
            continue
        color = colors(i % 10)
        runs = f" ({len(curves)} runs)" if len(curves) > 1 else ""
        axes.plot(steps, mean, color=color, linewidth=2, label=f"{label}{runs}")
        if len(curves) > 1:
            axes.fill_between(steps, mean - std, mean + std, color=color, alpha=0.2, linewidth=0)
    axes.set_xlabel("Environment steps")
    axes.set_ylabel(args.metric)
    axes.xaxis.set_major_formatter(EngFormatter(sep=""))
    axes.set_title(args.title or f"{args.metric} (mean ± std over runs)")
    axes.grid(True, alpha=0.3)
    axes.spines[["top", "right"]].set_visible(False)
    axes.legend(loc="best", frameon=False)
    figure.tight_layout()
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output)
    plt.close(figure)


def _print_summary(groups: dict[str, list[Curve]], metric: str) -> None:
    import numpy as np

    width = max(len(label) for label in groups)
    print(f"{'group':<{width}}  runs  {'last ' + metric} (mean ± std)   steps")
    for label, curves in sorted(groups.items()):
        finals = np.array([curve.values[-1] for curve in curves])
        steps = int(min(curve.steps[-1] for curve in curves))
        print(f"{label:<{width}}  {len(curves):>4}  {finals.mean():>10.2f} ± {finals.std():<10.2f}   {steps}")
