"""The benchmark loop: for every case, seed and repeat, one SB3 run and one lit-sb3 run, each in a fresh
process, the order alternating so that warm caches and machine load favour neither library."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suite.cases import Case

__all__ = ["LIBRARY_ORDER", "Settings", "lit_algorithms", "order", "run_case", "run_one", "unavailable"]

BENCHMARKS_DIR = Path(__file__).resolve().parents[1]
LIBRARY_ORDER = ("sb3", "lit")


@dataclass(frozen=True)
class Settings:
    """How every case is run.

    Args:
        seeds: training seeds; the same seed for both libraries of a pair.
        repeats: how many times each (case, seed) pair runs; the speed is the median over all runs.
        threads: ``torch.set_num_threads`` in every run (and OMP/MKL threads), the same for both.
        quick: use each case's ``quick_steps`` instead of ``steps``.
        steps: environment steps per run for every case, overriding the case's budget.
    """

    seeds: Sequence[int]
    repeats: int
    threads: int = 1
    quick: bool = False
    steps: int | None = None

    def budget(self, case: Case) -> int:
        return self.steps or (case.quick_steps if self.quick else case.steps)


def lit_algorithms() -> list[str]:
    """The algorithms lit-sb3 can build here: its registry, with every installed plugin."""
    import lit_sb3

    return list(lit_sb3.list_algos())


def unavailable(case: Case, lit_algos: Sequence[str]) -> str | None:
    """Why ``case`` cannot run here (a missing plugin or library), or None when it can."""
    if case.algo not in lit_algos:
        return (
            f"lit-sb3 has no {case.algo!r} algorithm installed (its plugin, lit-sb3-{case.algo}, is missing)"
        )
    module = case.sb3.split(":")[0]
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed (pip install lit-sb3-core[benchmark])"
    return None


def order(repeat: int, seed_index: int) -> tuple[str, str]:
    """Which library goes first: SB3 on even ``repeat + seed_index``, lit-sb3 on odd. With one seed that
    is SB3 first on even repeats; with several, each repeat and each seed see both orders."""
    return LIBRARY_ORDER if (repeat + seed_index) % 2 == 0 else LIBRARY_ORDER[::-1]


def run_one(case: Case, library: str, seed: int, steps: int, threads: int) -> dict[str, Any]:
    """One run in a fresh Python process (``suite.worker``), in a scratch working directory."""
    spec = {"case": case.name, "library": library, "seed": seed, "steps": steps, "threads": threads}
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCHMARKS_DIR), env.get("PYTHONPATH")]))
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[variable] = str(threads)
    with tempfile.TemporaryDirectory(prefix="lit-sb3-bench-") as scratch:
        spec_path, result_path = Path(scratch, "spec.json"), Path(scratch, "result.json")
        spec_path.write_text(json.dumps(spec))
        process = subprocess.run(
            [sys.executable, "-m", "suite.worker", str(spec_path), str(result_path)],
            check=False,
            cwd=scratch,
            env=env,
            capture_output=True,
            text=True,
        )
        if result_path.exists():
            return dict(json.loads(result_path.read_text()))
    tail = (process.stderr or process.stdout).strip().splitlines()[-15:]
    return {**spec, "error": f"worker exited with code {process.returncode}", "traceback": "\n".join(tail)}


def run_case(
    case: Case, settings: Settings, progress: Callable[[dict[str, Any]], None] | None = None
) -> list[dict[str, Any]]:
    """Every run of ``case``: repeats x seeds pairs, each pair one run per library, order alternating."""
    steps = settings.budget(case)
    runs = []
    for repeat in range(settings.repeats):
        for index, seed in enumerate(settings.seeds):
            for position, library in enumerate(order(repeat, index)):
                run = run_one(case, library, seed, steps, settings.threads)
                run.update(repeat=repeat, position=position)
                runs.append(run)
                if progress is not None:
                    progress(run)
    return runs
