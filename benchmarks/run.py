"""lit-sb3 beside Stable-Baselines3 / sb3-contrib: speed, memory and learning, case by case.

    python benchmarks/run.py --quick                   # a representative subset, short budgets (minutes)
    python benchmarks/run.py                           # every case at rl-zoo3's budget, seeds 0 1 2 (hours)
    python benchmarks/run.py --algos ppo dqn           # only these algorithms
    python benchmarks/run.py --cases sac-zoo --repeats 3 --seeds 0 1
    python benchmarks/run.py --list                    # the cases and their settings
    python benchmarks/run.py --quick --libraries lit-sb3 sb3 sbx   # SBX too (bash dev.sh setup-jax first)
    python benchmarks/run.py --quick --compare-with ../old/.venv/bin/python --repeats 7   # lit-sb3 now
                                                       # against another checkout's lit-sb3 (before/after)

Every case trains the same algorithm with identical hyperparameters on the same environment in both
libraries. Each run (one library, one case, one seed) is a fresh process with the same torch thread
setting; only ``learn()`` is timed; the library that goes first alternates. SBX (SB3 in JAX) is an optional
third library: it needs its own venv (``bash dev.sh setup-jax``, the ``benchmark-jax`` extra, ~1.7 GB);
without it the suite runs SB3 and lit-sb3 and says that SBX was not run. Writes ``OUT/results.md``
(the table, also printed as it goes), ``OUT/results.json`` (every run, with its learning curve) and
``OUT/<case>.png`` (learning curves, lit-sb3 beside SB3). Cases whose lit-sb3 plugin is not installed
are listed as skipped. Progress goes to stderr, the table to stdout.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import report
from suite.cases import CASES, QUICK, Case
from suite.runner import (
    ALL_LIBRARIES,
    DEFAULT_JAX_PYTHON,
    Settings,
    jax_python_problem,
    lit_algorithms,
    run_case,
    unavailable,
    unavailable_library,
)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
FULL_SEEDS, FULL_REPEATS = [0, 1, 2], 1
QUICK_SEEDS, QUICK_REPEATS = [0], 2


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"short budgets, seed {QUICK_SEEDS} x {QUICK_REPEATS} repeats; "
        f"without --algos/--cases only {', '.join(QUICK)}",
    )
    parser.add_argument("--algos", nargs="+", metavar="ALGO", help="run the cases of these algorithms")
    parser.add_argument("--cases", nargs="+", metavar="CASE", help="run these cases (see --list)")
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        metavar="SEED",
        help=f"training seeds (default {FULL_SEEDS}, quick {QUICK_SEEDS})",
    )
    parser.add_argument(
        "--repeats",
        type=_positive,
        help=f"runs per seed and library (default {FULL_REPEATS}, quick {QUICK_REPEATS})",
    )
    parser.add_argument("--steps", type=_positive, help="environment steps per run for every case")
    parser.add_argument("--threads", type=_positive, default=1, help="torch threads in every run (default 1)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--libraries",
        nargs="+",
        metavar="LIB",
        default=["sb3", "lit"],
        help="libraries to run: sb3, lit-sb3 (or lit), sbx (default: sb3 lit-sb3; SB3 and lit-sb3 always run)",
    )
    parser.add_argument(
        "--jax-python",
        type=Path,
        default=DEFAULT_JAX_PYTHON,
        help=f"Python of the venv with SBX and JAX (default {DEFAULT_JAX_PYTHON})",
    )
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="with --threads 1, do not pin each run to one CPU (by default every library gets one core: "
        "SBX's XLA would otherwise compute on a second core while Python dispatches)",
    )
    parser.add_argument(
        "--compare-with",
        type=Path,
        metavar="PYTHON",
        help="instead of SB3, run lit-sb3 against the lit-sb3 that PYTHON imports (another checkout's venv): "
        "alternating rounds (--repeats, default 5), CPU time, per-case ratios with their range",
    )
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    args = parser.parse_args(argv)
    libraries = {"lit-sb3": "lit"}
    chosen = {libraries.get(name, name) for name in args.libraries}
    unknown_libraries = sorted(chosen - set(ALL_LIBRARIES))
    if unknown_libraries:
        parser.error(f"--libraries: unknown {', '.join(unknown_libraries)}; choose from sb3, lit-sb3, sbx.")
    # SB3 and lit-sb3 always run (the table is their ratio); the order is the rotation's start.
    args.libraries = tuple(lib for lib in ALL_LIBRARIES if lib in chosen | {"sb3", "lit"})
    algos = {case.algo for case in CASES}
    names = {case.name for case in CASES}
    for label, given, valid in (("--algos", args.algos, algos), ("--cases", args.cases, names)):
        unknown = sorted(set(given or ()) - valid)
        if unknown:
            parser.error(f"{label}: unknown {', '.join(unknown)}; choose from {', '.join(sorted(valid))}.")
    if args.seeds is not None and len(set(args.seeds)) != len(args.seeds):
        parser.error(f"--seeds: each seed once, got {args.seeds}.")
    return args


def select(args: argparse.Namespace) -> list[Case]:
    """The cases to run: --algos and --cases together, or the quick subset, or everything."""
    if args.algos or args.cases:
        return [c for c in CASES if c.algo in (args.algos or ()) or c.name in (args.cases or ())]
    return [c for c in CASES if c.name in QUICK] if args.quick else list(CASES)


def _versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for distribution in (
        "torch",
        "stable-baselines3",
        "sb3-contrib",
        "lit-sb3-core",
        "gymnasium",
        "lightning",
    ):
        try:
            versions[distribution] = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            versions[distribution] = None
    return versions


def _sbx_versions(jax_python: Path) -> dict[str, str] | None:
    """sbx-rl, jax and flax versions in the SBX venv (for the record of what ran)."""
    import subprocess

    code = (
        "import importlib.metadata as m, json; "
        "print(json.dumps({d: m.version(d) for d in ('sbx-rl', 'jax', 'jaxlib', 'flax', 'stable-baselines3')}))"
    )
    probe = subprocess.run([str(jax_python), "-c", code], check=False, capture_output=True, text=True)
    if probe.returncode != 0:
        return None
    import json

    return dict(json.loads(probe.stdout))


def _progress(run: dict[str, Any]) -> None:
    label = f"  {run['case']:<32} {run['library']:<4} seed {run['seed']} repeat {run['repeat']}"
    if "error" in run:
        print(f"{label}  FAILED: {run['error']}", file=sys.stderr, flush=True)
        return
    print(
        f"{label}  {run['steps_per_s']:>8.0f} steps/s  steady {run.get('steady_steps_per_s') or 0:>8.0f}  "
        f"learn {run['learn_s']:6.1f} s  "
        f"{run['peak_rss_mib']:4.0f} MiB  return {run['eval_mean']:8.1f}",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = select(args)
    settings = Settings(
        seeds=args.seeds or (QUICK_SEEDS if args.quick else FULL_SEEDS),
        repeats=args.repeats or (QUICK_REPEATS if args.quick else FULL_REPEATS),
        threads=args.threads,
        quick=args.quick,
        steps=args.steps,
        libraries=args.libraries,
        jax_python=args.jax_python.absolute(),  # each run starts in a scratch folder: no relative path
        pin=not args.no_pin,
    )
    if args.compare_with is not None and not args.list:
        return _compare(args, cases, settings)
    if args.list:
        for case in CASES:
            mark = "*" if case.name in QUICK else " "
            print(
                f"{mark} {case.name:<32} {case.algo:<14} {case.env:<20} steps {case.steps:>7,} "
                f"(quick {case.quick_steps:,})  {case.config}"
            )
        print("\n* in the --quick subset")
        return 0

    args.out.mkdir(parents=True, exist_ok=True)
    lit_algos = lit_algorithms()
    sbx_problem = jax_python_problem(args.jax_python) if "sbx" in settings.libraries else None
    sbx_note = None
    if "sbx" not in settings.libraries:
        sbx_note = "SBX not run (add it with `--libraries lit-sb3 sb3 sbx` after `bash dev.sh setup-jax`)."
    elif sbx_problem is not None:
        sbx_note = f"SBX not run: {sbx_problem}."
        print(sbx_note, file=sys.stderr, flush=True)
    meta: dict[str, Any] = {
        "argv": sys.argv[1:] if argv is None else argv,
        "quick": settings.quick,
        "seeds": list(settings.seeds),
        "repeats": settings.repeats,
        "threads": settings.threads,
        "pinned_cpu": settings.cpu(),
        "steps_override": settings.steps,
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "versions": _versions(),
        "lit_sb3_algorithms": lit_algos,
        "libraries": list(settings.libraries),
        "sbx_note": sbx_note,
        "sbx_versions": _sbx_versions(args.jax_python)
        if "sbx" in settings.libraries and not sbx_problem
        else None,
    }
    print(
        f"{len(cases)} case(s), seeds {list(settings.seeds)} x {settings.repeats} repeat(s), "
        f"torch threads = {settings.threads}, results in {args.out}\n"
    )
    print(report.TABLE_HEADER, flush=True)
    start = time.perf_counter()
    done: list[tuple[Case, dict[str, Any]]] = []
    failed = False
    for case in cases:
        result: dict[str, Any] = {"steps": settings.budget(case)}
        reason = unavailable(case, lit_algos)
        if reason is not None:
            result.update(status="skipped", reason=reason)
            print(f"  {case.name}: skipped, {reason}", file=sys.stderr, flush=True)
        else:
            skipped = {lib: unavailable_library(case, lib, sbx_problem) for lib in settings.libraries}
            libraries = [lib for lib in settings.libraries if skipped[lib] is None]
            if "sbx" in settings.libraries and skipped["sbx"] is not None and sbx_problem is None:
                result["sbx_skipped"] = skipped["sbx"]
            runs = run_case(case, settings, progress=_progress, libraries=libraries)
            result.update(status="ran", summary=report.summarize(runs), runs=runs)
            failed |= any("error" in run for run in runs)
            report.plot_curves(args.out / f"{case.name}.png", case, runs)
        done.append((case, result))
        print(report.table_row(case, result), flush=True)
        # Rewritten after every case: an interrupted suite keeps what it measured.
        meta.update(
            finished=datetime.datetime.now().isoformat(timespec="seconds"), wall_s=time.perf_counter() - start
        )
        report.write_markdown(args.out / "results.md", meta, done)
        report.write_json(args.out / "results.json", meta, done)
    print(
        f"\nWall time {meta['wall_s'] / 60:.1f} min. Wrote {args.out / 'results.md'}, results.json and plots."
    )
    return 1 if failed else 0


def _compare(args: argparse.Namespace, cases: list[Case], settings: Settings) -> int:
    """``--compare-with``: lit-sb3 here against lit-sb3 under another interpreter (suite/compare.py)."""
    from suite import compare

    rounds = args.repeats or 5
    print(
        f"lit-sb3 of {sys.executable} (this) against {args.compare_with} (other): {len(cases)} case(s), "
        f"{rounds} rounds, seed {settings.seeds[0]}, torch threads = {settings.threads}\n",
        file=sys.stderr,
        flush=True,
    )

    def progress(run: dict[str, Any]) -> None:
        label = f"  round {run['round']} {run['case']:<24} {run['tree']:<5}"
        if "error" in run:
            print(f"{label}  FAILED: {run['error']}\n{run.get('traceback', '')}", file=sys.stderr, flush=True)
        else:
            print(
                f"{label}  CPU {run['cpu_s']:7.2f} s  return {run['eval_mean']:8.1f}",
                file=sys.stderr,
                flush=True,
            )

    runs = compare.compare_cases(cases, settings, args.compare_with.absolute(), rounds, progress)
    text = compare.table(cases, runs)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare.md").write_text(
        f"lit-sb3 of {sys.executable} (this) against {args.compare_with} (other); ratio this/other of "
        f"learn()'s process CPU time per round, median (range); above 1: this is slower.\n\n{text}\n"
    )
    (args.out / "compare.json").write_text(json.dumps({"argv": sys.argv[1:], "runs": runs}, indent=1))
    print(text)
    return 1 if any("error" in run for run in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
