"""One benchmark run in its own process: one library, one case, one seed.

Whole-run speed is environment steps over the wall time of ``learn()``; steady-state speed the same from
the case's ``steady_from`` step to the end (past warm-up, first updates and SBX's JIT compilation).

    python -m suite.worker SPEC.json RESULT.json      (started by ``suite.runner``, never by hand)

A fresh process per run makes ``ru_maxrss`` that run's peak memory and keeps one library's imports and
caches from touching the other's timing. The timed region is ``learn()`` only; evaluation follows it.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

__all__ = ["run"]

N_ATARI_GAMES = 3


def run(spec: dict[str, Any]) -> dict[str, Any]:
    """Train and evaluate as ``spec`` says (case, library, seed, steps, threads, cpu); return the measurements."""
    import os

    if spec.get("cpu") is not None:  # before torch or JAX start their thread pools
        os.sched_setaffinity(0, {int(spec["cpu"])})
    import torch

    # Before any model exists: the same thread settings for both libraries.
    torch.set_num_threads(int(spec["threads"]))

    from suite.cases import by_name
    from suite.libraries import LIBRARIES
    from suite.measure import RECORD, evaluate, peak_rss_mib

    case = by_name(spec["case"])
    seed, steps = int(spec["seed"]), int(spec["steps"])
    job = LIBRARIES[spec["library"]](case, seed)
    RECORD.steady_from = case.steady_from(steps)
    wall, cpu, children = time.perf_counter(), time.process_time(), children_cpu_s()
    job.learn(steps)
    end, cpu_end = time.perf_counter(), time.process_time()
    # Child processes' CPU (torch.compile's compile workers) is part of what the run cost.
    children = children_cpu_s() - children
    learn_s, cpu_s = end - wall, cpu_end - cpu + children
    steady = RECORD.steady_rate(end, job.num_timesteps)
    steady_cpu = RECORD.steady_cpu_rate(cpu_end, job.num_timesteps)
    # Atari: whole games on each library's own preprocessing; a few, as games take thousands of steps.
    returns = job.evaluate_games(N_ATARI_GAMES) if case.atari else evaluate(case, job.predict, seed)
    other = "stable_baselines3" if spec["library"] == "lit" else "lit_sb3"
    return {
        "num_timesteps": job.num_timesteps,
        "recorded_steps": RECORD.steps,
        "learn_s": learn_s,
        "cpu_s": cpu_s,
        "children_cpu_s": children,
        "steps_per_s": job.num_timesteps / learn_s,
        "steady_from": RECORD.steady_from,
        "steady_steps_per_s": steady,
        "steady_cpu_steps_per_s": steady_cpu,
        "cpu_steps_per_s": job.num_timesteps / cpu_s if cpu_s > 0 else float("nan"),
        "peak_rss_mib": peak_rss_mib(),
        "eval_returns": returns,
        "eval_mean": statistics.fmean(returns),
        "episodes": RECORD.episodes,
        "invalid_actions": RECORD.invalid_actions,
        "other_library_imported": other in sys.modules,
        "torch_threads": torch.get_num_threads(),
        "cpus": sorted(os.sched_getaffinity(0)),
    }


def children_cpu_s() -> float:
    """CPU seconds of this process's child processes so far, live (psutil, where installed) and exited."""
    import os

    times = os.times()
    total = times.children_user + times.children_system
    try:
        import psutil
    except ImportError:  # SBX's venv: no child processes to count there
        return total
    for child in psutil.Process().children(recursive=True):
        try:
            child_times = child.cpu_times()
        except psutil.Error:  # exited meanwhile
            continue
        total += child_times.user + child_times.system
    return total


def main() -> int:
    spec_path, result_path = sys.argv[1:3]
    spec = json.loads(Path(spec_path).read_text())
    warnings.filterwarnings("ignore")
    try:
        result = {**spec, **run(spec)}
        code = 0
    except Exception as exc:
        result = {**spec, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        code = 1
    Path(result_path).write_text(json.dumps(result))
    return code


if __name__ == "__main__":
    sys.exit(main())
