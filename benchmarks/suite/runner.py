"""The benchmark loop: for every case, seed and repeat, one run per library (SB3, lit-sb3 and, where it is
installed, SBX), each in a fresh process, the order rotating so that warm caches and machine load favour
no library.

SBX (SB3 in JAX) lives in its own virtual environment (``bash dev.sh setup-jax`` makes ``.venv-jax/``):
its runs start that venv's Python, given as ``Settings.jax_python``. One torch thread for everyone means
one XLA CPU thread for SBX too (``--xla_cpu_multi_thread_eigen=false``).
"""

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

__all__ = [
    "ALL_LIBRARIES",
    "DEFAULT_JAX_PYTHON",
    "LIBRARY_ORDER",
    "Settings",
    "jax_python_problem",
    "lit_algorithms",
    "order",
    "pinned_cpu",
    "run_case",
    "run_one",
    "unavailable",
    "unavailable_library",
]

BENCHMARKS_DIR = Path(__file__).resolve().parents[1]
LIBRARY_ORDER = ("sb3", "lit")
ALL_LIBRARIES = ("sb3", "sbx", "lit")
DEFAULT_JAX_PYTHON = BENCHMARKS_DIR.parent / ".venv-jax" / "bin" / "python"


@dataclass(frozen=True)
class Settings:
    """How every case is run.

    Args:
        seeds: training seeds; the same seed for both libraries of a pair.
        repeats: how many times each (case, seed) pair runs; the speed is the median over all runs.
        threads: ``torch.set_num_threads`` in every run (and OMP/MKL threads), the same for both.
        quick: use each case's ``quick_steps`` instead of ``steps``.
        steps: environment steps per run for every case, overriding the case's budget.
        libraries: which libraries run, in rotation order (``"sb3"``, ``"sbx"``, ``"lit"``).
        jax_python: the Python of the venv that has SBX and JAX (SBX runs only).
        pin: run each process on one CPU (``pinned_cpu()``) when ``threads`` is 1. One torch thread is not
            one core for JAX: XLA computes on a runtime thread while Python dispatches the next step, so an
            unpinned SBX run also uses a second core. Pinned, every library gets one core.
    """

    seeds: Sequence[int]
    repeats: int
    threads: int = 1
    quick: bool = False
    steps: int | None = None
    libraries: tuple[str, ...] = LIBRARY_ORDER
    jax_python: Path | None = None
    pin: bool = True

    def budget(self, case: Case) -> int:
        return self.steps or (case.quick_steps if self.quick else case.steps)

    def cpu(self) -> int | None:
        """The CPU every run is pinned to, or None (not pinned)."""
        return pinned_cpu() if self.pin and self.threads == 1 else None


def pinned_cpu() -> int:
    """The highest-numbered CPU this process may use: the same for every run (CPU 0 also serves most
    interrupts)."""
    return max(os.sched_getaffinity(0))


def lit_algorithms() -> list[str]:
    """The algorithms lit-sb3 can build here: its registry, with every installed plugin."""
    import lit_sb3

    return list(lit_sb3.list_algos())


def jax_python_problem(jax_python: Path | None) -> str | None:
    """Why SBX cannot run with ``jax_python``, or None when it can (one short probe process)."""
    if jax_python is None or not Path(jax_python).exists():
        return (
            f"SBX is not installed: no Python at {jax_python} (bash dev.sh setup-jax makes .venv-jax/ with "
            "the benchmark-jax extra, about 1.7 GB)"
        )
    probe = subprocess.run(
        [str(jax_python), "-c", "import sbx, jax"], check=False, capture_output=True, text=True
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return f"SBX does not import with {jax_python}: {last} (bash dev.sh setup-jax installs it)"
    return None


def unavailable_library(case: Case, library: str, sbx_problem: str | None) -> str | None:
    """Why ``library`` has no run of ``case`` (SBX lacks the algorithm or is not installed), or None."""
    if library != "sbx":
        return None
    if case.sbx is None:
        return f"SBX has no {case.algo!r} with {case.policy}"
    return sbx_problem


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


def order(repeat: int, seed_index: int, libraries: Sequence[str] = LIBRARY_ORDER) -> tuple[str, ...]:
    """The libraries in the order they run: ``libraries`` rotated by ``repeat + seed_index``. With two
    libraries SB3 goes first on even ``repeat + seed_index`` and lit-sb3 on odd; with three, each goes
    first once in three repeats (or seeds)."""
    shift = (repeat + seed_index) % len(libraries)
    return tuple(libraries[shift:]) + tuple(libraries[:shift])


def run_one(
    case: Case,
    library: str,
    seed: int,
    steps: int,
    threads: int,
    python: Path | str | None = None,
    cpu: int | None = None,
) -> dict[str, Any]:
    """One run in a fresh Python process (``suite.worker``; ``python``, default this one), in a scratch
    working directory, on CPU ``cpu`` alone when given."""
    spec = {
        "case": case.name,
        "library": library,
        "seed": seed,
        "steps": steps,
        "threads": threads,
        "cpu": cpu,
    }
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(BENCHMARKS_DIR), env.get("PYTHONPATH")]))
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[variable] = str(threads)
    if library == "sbx":
        env["JAX_PLATFORMS"] = "cpu"
        if threads == 1:  # XLA's CPU matmuls on one thread, as torch's
            env["XLA_FLAGS"] = " ".join(
                filter(None, [env.get("XLA_FLAGS"), "--xla_cpu_multi_thread_eigen=false"])
            )
    with tempfile.TemporaryDirectory(prefix="lit-sb3-bench-") as scratch:
        spec_path, result_path = Path(scratch, "spec.json"), Path(scratch, "result.json")
        spec_path.write_text(json.dumps(spec))
        process = subprocess.run(
            [str(python or sys.executable), "-m", "suite.worker", str(spec_path), str(result_path)],
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
    case: Case,
    settings: Settings,
    progress: Callable[[dict[str, Any]], None] | None = None,
    libraries: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Every run of ``case``: repeats x seeds, each one run per library (``libraries``, default
    ``settings.libraries``), the order rotating."""
    steps = settings.budget(case)
    chosen = tuple(libraries or settings.libraries)
    runs = []
    for repeat in range(settings.repeats):
        for index, seed in enumerate(settings.seeds):
            for position, library in enumerate(order(repeat, index, chosen)):
                python = settings.jax_python if library == "sbx" else None
                run = run_one(case, library, seed, steps, settings.threads, python, settings.cpu())
                run.update(repeat=repeat, position=position)
                runs.append(run)
                if progress is not None:
                    progress(run)
    return runs
