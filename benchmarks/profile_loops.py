"""Where a whole training loop's time goes: lit-sb3 beside SB3, per environment step, in one process.

    python benchmarks/profile_loops.py                                  # the cases below, both libraries
    python benchmarks/profile_loops.py --cases dqn-default --cprofile 25  # and lit-sb3's top functions

``profile_updates.py`` times one gradient step; this times everything a run does per environment step
(env step, action selection, buffer writes, sampling, updates, Lightning's batch loop), after the warm-up,
with the benchmark suite's hyperparameters and envs. Each case trains lit-sb3 and SB3 in turns in this
process (one torch thread, CPU time of the process: other processes' load does not count), each turn a
fresh ``learn`` of ``--steps`` steady-state steps after ``--warmup`` steps, and reports the medians as
microseconds per env step and the ratio, and each run's whole CPU time (warm-up, Lightning's set-up and,
with ``--compiled``, the compilation included). ``--compiled`` adds lit-sb3 with ``compile=True`` (DQN's
compiled gradient step) as a third library in the turns. ``--cprofile N`` adds lit-sb3's N heaviest functions (cProfile,
by own time and by cumulative time) over one more turn: cProfile's own cost inflates Python-heavy parts,
so read its shares, not its absolute times.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import pstats
import sys
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

CASES = ["dqn-default", "dqn-zoo", "ppo-zoo-8env", "ppo-default-8env", "a2c-zoo-cartpole"]


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _warmup_steps(case: Any) -> int:
    """Steps before the steady state: past off-policy warm-ups (learning_starts) and the first updates."""
    starts = int(case.hyperparams.get("learning_starts", 100 if case.algo in ("dqn", "qrdqn") else 0))
    return max(starts + 1_000, 2_048 * 2 if case.algo == "ppo" else 1_000)


def one_turn(
    library: str, case: Any, warmup: int, steps: int, profiler: cProfile.Profile | None
) -> tuple[float, float]:
    """CPU microseconds per env step of one fresh run from step ``warmup`` to ``warmup + steps``, and the
    run's whole CPU seconds (``learn`` from its start)."""
    from suite.libraries import LIBRARIES
    from suite.measure import RECORD

    if library == "lit-compiled":
        library, case = "lit", dataclasses.replace(case, hyperparams={**case.hyperparams, "compile": True})
    run = LIBRARIES[library](case, seed=0)
    RECORD.steps, RECORD.episodes = 0, []
    RECORD.steady_from, RECORD.steady_start, RECORD.steady_cpu_start = warmup, None, None
    start = time.process_time()
    if profiler is not None:
        profiler.enable()
    run.learn(warmup + steps)
    if profiler is not None:
        profiler.disable()
    end = time.process_time()
    rate = RECORD.steady_cpu_rate(end, run.num_timesteps)
    assert rate is not None, "the run did not pass its warm-up"
    return 1e6 / rate, end - start


NAMES = {"sb3": "SB3", "lit": "lit-sb3", "lit-compiled": "lit-sb3, compile=True"}


def profile_case(name: str, steps: int, repeats: int, top: int, compiled: bool) -> list[str]:
    from suite.cases import by_name

    case = by_name(name)
    warmup = _warmup_steps(case)
    libraries = ["lit", "sb3", *(["lit-compiled"] if compiled and case.algo == "dqn" else [])]
    times: dict[str, list[float]] = {library: [] for library in libraries}
    whole: dict[str, list[float]] = {library: [] for library in libraries}
    for repeat in range(repeats):
        order = libraries if repeat % 2 == 0 else libraries[::-1]
        for library in order:
            per_step, seconds = one_turn(library, case, warmup, steps, None)
            times[library].append(per_step)
            whole[library].append(seconds)
    sb3 = _median(times["sb3"])
    lines = [
        f"### {name}: {case.algo} on {case.env} ({case.config}), {case.n_envs} env(s)",
        "",
        f"CPU us per env step from step {warmup:,} to {warmup + steps:,}, median of {repeats} alternating runs; "
        f"CPU seconds of the whole run ({warmup + steps:,} steps):",
        "",
        "| library | us / env step | range | speed-up vs SB3 | whole run CPU s | whole-run speed-up |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for library in ["sb3", *[lib for lib in libraries if lib != "sb3"]]:
        median, run_s = _median(times[library]), _median(whole[library])
        lines.append(
            f"| {NAMES[library]} | {median:.1f} | {min(times[library]):.0f}-{max(times[library]):.0f} | "
            f"**{sb3 / median:.2f}x** | {run_s:.2f} | {_median(whole['sb3']) / run_s:.2f}x |"
        )
    lines.append("")
    if top:
        profiler = cProfile.Profile()
        one_turn("lit", case, warmup, steps, profiler)
        for sort in ("tottime", "cumulative"):
            out = io.StringIO()
            stats = pstats.Stats(profiler, stream=out)
            stats.sort_stats(sort).print_stats(top)
            body = out.getvalue()
            start = body.find("   ncalls")
            lines += [f"lit-sb3's top {top} functions by {sort} (whole run, cProfile):", "", "```"]
            lines += [line.rstrip() for line in body[start:].splitlines() if line.strip()]
            lines += ["```", ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=CASES)
    parser.add_argument("--steps", type=int, default=5_000, help="steady-state env steps timed per run")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per library (median)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="list lit-sb3's N top functions")
    parser.add_argument("--compiled", action="store_true", help="DQN cases: lit-sb3 with compile=True too")
    args = parser.parse_args(argv)
    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread\n")
    for name in args.cases:
        print(
            "\n".join(profile_case(name, args.steps, args.repeats, args.cprofile, args.compiled)), flush=True
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
