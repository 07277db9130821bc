"""One learning-ledger run: a case, a library, a seed, trained to its budget with a learning curve.

    python benchmarks/learning/run.py --case sac-hopper --library sb3 --seed 0
    python benchmarks/learning/run.py --next                 # the first record the ledger lacks
    python benchmarks/learning/run.py --case sac-hopper --library lit-sb3 --seed 0 --until 20000

Each run is its own process with one torch thread. Every ``eval_every`` steps the policy plays
``eval_episodes`` episodes on a separate, identically seeded env (MuJoCo: deterministic; Atari: whole games
with real, unclipped scores and sampled actions, on each library's own Atari stack), the record notes the
mean raw return of the training episodes finished since the last point (``train_curve``: ``[step, mean or
null, count]``; Atari: whole games, the stochastic policy that trains), and the run saves a checkpoint (model,
replay buffer, normalization statistics) and the curve so far into ``scratch/`` (ignored by git). A run
that finds such a checkpoint continues from it: an interrupted ledger loses at most one eval interval.
The record goes to ``results/<case>/<library>-seed<N>.json``, written atomically (temp file + rename).

``--until STEPS`` is the same run cut after its first eval point at or past ``STEPS``: its record and
checkpoints go under ``scratch/until/`` (never into ``results/``), so a record's first points can be
reproduced without touching the ledger. This script only writes files; committing the records is the
caller's job (see loop.sh).

Exit status: 0 a record was written, 1 the run failed (``--next`` marks it failed and moves on next
time), 3 ``--next`` found nothing missing.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # benchmarks/: the ``suite`` and ``learning`` packages

from learning.cases import CASES, LearningCase, by_name  # noqa: E402

LIBRARIES = ("sb3", "lit-sb3")
RESULTS = HERE / "results"
SCRATCH = HERE / "scratch"
DONE, FAILED, NOTHING_MISSING, CRASHED = 0, 1, 3, 75
# Set to N, the run exits hard (no cleanup) right after its N-th checkpoint: how the tests interrupt a run.
CRASH_AFTER = "LEDGER_CRASH_AFTER_CHECKPOINTS"
_DISTRIBUTIONS = (
    "lit-sb3-core", "stable-baselines3", "sb3-contrib", "torch", "lightning", "gymnasium", "numpy", "ale-py",
    "mujoco",
)  # fmt: skip


def record_path(case: str, library: str, seed: int) -> Path:
    """Where the ledger keeps the record of one run."""
    return RESULTS / case / f"{library}-seed{seed}.json"


def scratch_dir(case: str, library: str, seed: int, until: int | None = None) -> Path:
    """The run's checkpoint folder (``--until`` runs have their own, apart from the ledger's)."""
    base = SCRATCH / "until" / f"{until}" if until is not None else SCRATCH
    return base / case / f"{library}-seed{seed}"


def ledger_order() -> list[tuple[str, str, int]]:
    """Every record of the ledger in ``--next`` order: seed by seed (so the first pass covers every case
    once, and a cheap case's fourth and fifth seeds come after every case's third), cases cheapest family
    first (``CASES`` order), the two libraries of a pair back to back."""
    seeds = sorted({seed for case in CASES for seed in case.seeds})
    return [
        (case.name, library, seed)
        for seed in seeds
        for case in CASES
        if seed in case.seeds
        for library in LIBRARIES
    ]


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as JSON atomically: a reader sees the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, path)


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in _DISTRIBUTIONS:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def commit() -> str | None:
    """The checkout's commit, with ``-dirty`` when tracked library files differ from it."""
    root = HERE.parents[1]
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "lit_sb3", "lit_sb3_core", "plugins"],
            cwd=root, capture_output=True, text=True, check=True,
        )  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


# --- the two libraries -----------------------------------------------------------------------------------


@contextlib.contextmanager
def _training_random_state_kept() -> Iterator[None]:
    """Runs the block, then puts the global torch, numpy and ``random`` states back as they were."""
    import random

    import numpy as np
    import torch

    states = (torch.get_rng_state(), np.random.get_state(), random.getstate())
    try:
        yield
    finally:
        torch.set_rng_state(states[0])
        np.random.set_state(states[1])
        random.setstate(states[2])


class _Library:
    """One library's side of a run over the speed suite's code (``suite.libraries``): the same envs,
    hyperparameter translation and Atari stacks the speed benchmark uses, plus saving and resuming."""

    name = ""

    def __init__(self, case: LearningCase, seed: int) -> None:
        self.case, self.seed = case, seed
        self.suite_case = case.suite_case()

    def learn(self, steps: int, callback: Any, resume: bool) -> None:
        raise NotImplementedError

    def save(self, folder: Path) -> None:
        raise NotImplementedError

    def restore(self, folder: Path) -> None:
        raise NotImplementedError

    @property
    def num_timesteps(self) -> int:
        return int(self.job.model.num_timesteps)

    @property
    def off_policy(self) -> bool:
        return hasattr(self.job.model, "replay_buffer")

    def evaluate(self) -> list[float]:
        """``eval_episodes`` episodes on fresh, identically seeded envs: deterministic on MuJoCo, whole
        games with sampled actions on Atari (``LearningCase.eval_deterministic``). The global random
        states (torch, numpy, ``random``) are restored afterwards, so sampling in an evaluation never
        changes what training draws next: a run is the same run whatever its evaluation schedule."""
        from suite.measure import evaluate

        with _training_random_state_kept():
            if self.case.atari:
                return self.job.evaluate_games(
                    self.case.eval_episodes, deterministic=self.case.eval_deterministic
                )
            return evaluate(self.suite_case, self.job.predict, self.seed, self.case.eval_episodes)

    def callback(self, on_step: Any) -> Any:
        """A callback of this library's ``BaseCallback`` class calling ``on_step(num_timesteps)``."""
        module = importlib.import_module(self.callback_module)

        class _Eval(module.BaseCallback):  # type: ignore[name-defined,misc]
            def _on_step(self) -> bool:
                return bool(on_step(int(self.model.num_timesteps)))

        return _Eval()

    callback_module = ""


class Sb3Side(_Library):
    name = "sb3"
    callback_module = "stable_baselines3.common.callbacks"

    def __init__(self, case: LearningCase, seed: int) -> None:
        super().__init__(case, seed)
        from suite.libraries import Sb3Run

        self.job = Sb3Run(self.suite_case, seed)

    def learn(self, steps: int, callback: Any, resume: bool) -> None:
        remaining = steps - self.num_timesteps
        self.job.model.learn(total_timesteps=remaining, callback=callback, reset_num_timesteps=not resume)

    def save(self, folder: Path) -> None:
        self.job.model.save(folder / "model.zip")
        if self.off_policy:
            self.job.model.save_replay_buffer(folder / "replay.pkl")
        if self.job.normalizer is not None:
            self.job.normalizer.save(str(folder / "vecnormalize.pkl"))

    def restore(self, folder: Path) -> None:
        from stable_baselines3.common.vec_env import VecNormalize

        module, name = self.case.sb3.split(":")
        cls = getattr(importlib.import_module(module), name)
        env = self.job.model.get_env()
        if self.job.normalizer is not None:
            env = self.job.normalizer = VecNormalize.load(
                str(folder / "vecnormalize.pkl"), self.job.normalizer.venv
            )
        self.job.model = cls.load(folder / "model.zip", env=env, device="cpu")
        if self.off_policy:
            self.job.model.load_replay_buffer(folder / "replay.pkl")


class LitSide(_Library):
    name = "lit-sb3"
    callback_module = "lit_sb3.common.callbacks"

    def __init__(self, case: LearningCase, seed: int) -> None:
        super().__init__(case, seed)
        from suite.libraries import LitRun

        self.job = LitRun(self.suite_case, seed)

    def learn(self, steps: int, callback: Any, resume: bool) -> None:
        remaining = steps - self.num_timesteps
        self.job.model.learn(
            total_timesteps=remaining,
            env=self.job.datamodule,
            callback=callback,
            reset_num_timesteps=not resume,
        )

    def save(self, folder: Path) -> None:
        self.job.model.save(folder / "model.zip")  # weights, optimizer, counters, normalization statistics
        if self.off_policy and self.job.model.replay_buffer is not None:
            self.job.model.save_replay_buffer(folder / "replay.npz")

    def restore(self, folder: Path) -> None:
        import lit_sb3

        cls = lit_sb3.get_algo_class(self.case.algo)
        self.job.model = cls.load(folder / "model.zip", device="cpu")
        if self.off_policy and (folder / "replay.npz").exists():
            self.job.model.load_replay_buffer(folder / "replay.npz")


SIDES: dict[str, type[_Library]] = {"sb3": Sb3Side, "lit-sb3": LitSide}


# --- one run ---------------------------------------------------------------------------------------------


class Run:
    """A run's state between eval points: the curve, the clocks, the checkpoint folder."""

    def __init__(self, case: LearningCase, library: str, seed: int, until: int | None, scratch: Path) -> None:
        self.case, self.library, self.seed, self.until, self.scratch = case, library, seed, until, scratch
        self.state: dict[str, Any] = {"curve": [], "eval_steps": [], "seconds": 0.0, "cpu_seconds": 0.0,
                                      "eval_seconds": 0.0, "peak_rss_mib": 0.0, "resumed": 0}  # fmt: skip
        self.points = [p for p in case.eval_points if until is None or p <= _cut(case, until)]
        self.side: _Library | None = None
        self.checkpoints = 0
        self._episodes_seen = 0
        self.commit = commit()  # the code this process runs, not what HEAD is when it ends
        self._wall = time.perf_counter()
        self._cpu = time.process_time()

    # the clocks of this process, added to those of the segments before a resume
    def _clocks(self) -> dict[str, float]:
        from suite.measure import peak_rss_mib

        return {
            "seconds": self.state["seconds"] + time.perf_counter() - self._wall,
            "cpu_seconds": self.state["cpu_seconds"] + time.process_time() - self._cpu,
            "peak_rss_mib": max(self.state["peak_rss_mib"], peak_rss_mib()),
        }

    def _next_point(self) -> int | None:
        done = len(self.state["curve"])
        return self.points[done] if done < len(self.points) else None

    def _train_episodes(self) -> list[float]:
        """Returns of the training episodes (Atari: whole games, raw scores) finished since the last call:
        the recorder under both libraries' wrappers sees them (``suite.measure.EpisodeRecorder``)."""
        from suite.measure import RECORD

        returns = [float(r) for _, r in RECORD.episodes[self._episodes_seen :]]
        self._episodes_seen = len(RECORD.episodes)
        return returns

    def _evaluate(self, step: int) -> None:
        assert self.side is not None
        train = self._train_episodes()
        self.state.setdefault("train_curve", []).append(
            [self._next_point(), statistics.fmean(train) if train else None, len(train)]
        )
        start = time.perf_counter()
        returns = self.side.evaluate()
        self.state["eval_seconds"] += time.perf_counter() - start
        point = self._next_point()
        self.state["curve"].append([point, statistics.fmean(returns)])
        self.state["eval_steps"].append(step)
        self.state.setdefault("eval_returns", []).append(returns)
        print(f"[{self.case.name} {self.library} seed {self.seed}] step {step:>8,}: "
              f"{statistics.fmean(returns):9.2f}", flush=True)  # fmt: skip

    def _checkpoint(self) -> None:
        assert self.side is not None
        tmp = self.scratch.with_name(self.scratch.name + ".saving")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        self.side.save(tmp)
        state = {
            **self.state, **self._clocks(), "num_timesteps": self.side.num_timesteps,
            "settings": self.case.describe(),
        }  # fmt: skip
        write_json(tmp / "state.json", state)
        old = self.scratch.with_name(self.scratch.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if self.scratch.exists():
            os.replace(self.scratch, old)
        os.replace(tmp, self.scratch)
        shutil.rmtree(old, ignore_errors=True)
        self.checkpoints += 1
        if self.checkpoints == int(os.environ.get(CRASH_AFTER, "0")):
            os._exit(CRASHED)  # fault injection for the resume test: die as a killed process does

    def on_step(self, num_timesteps: int) -> bool:
        """Called after every env step by the library's callback: evaluate and checkpoint at eval points
        before the budget's end (the final point is evaluated after ``learn`` returns)."""
        point = self._next_point()
        if point is None or point >= self.case.steps or num_timesteps < point:
            return True
        self._evaluate(num_timesteps)
        self._checkpoint()
        return self._next_point() is not None  # False past --until's last point: stop learning

    def _checkpoint_is_current(self) -> bool:
        """Whether the checkpoint in ``scratch`` was made under the case's settings as they are now: its
        saved settings match (checkpoints from before they were saved: its eval points are the first of the
        case's now). A stale one is deleted, so the run starts afresh rather than continue another run."""
        saved = json.loads((self.scratch / "state.json").read_text())
        if "settings" in saved:
            changed = self.case.stale_settings({"library": self.library, **saved["settings"]})
        else:
            done = [point for point, _ in saved.get("curve", [])]
            changed = [] if done == self.points[: len(done)] else ["eval_every"]
        if not changed:
            return True
        print(f"[{self.case.name} {self.library} seed {self.seed}] checkpoint made under other settings "
              f"({', '.join(changed)}): starting afresh", flush=True)  # fmt: skip
        shutil.rmtree(self.scratch)
        return False

    def execute(self) -> dict[str, Any]:
        import torch

        torch.set_num_threads(1)  # before any model exists: the same for both libraries
        self.side = SIDES[self.library](self.case, self.seed)
        resume = (self.scratch / "state.json").exists() and self._checkpoint_is_current()
        if resume:
            saved = json.loads((self.scratch / "state.json").read_text())
            self.side.restore(self.scratch)
            self.state = {k: v for k, v in saved.items() if k not in ("num_timesteps", "settings")}
            self.state["resumed"] = int(self.state.get("resumed", 0)) + 1
            print(f"[{self.case.name} {self.library} seed {self.seed}] resuming at step "
                  f"{self.side.num_timesteps:,} ({len(self.state['curve'])} points)", flush=True)  # fmt: skip
        if len(self.state["curve"]) < len(self.points):
            # Always the whole budget: schedules (DQN's exploration, linear learning rates) are fractions of
            # it, so a run cut by --until is the same run; ``on_step`` stops it after its last kept point.
            self.side.learn(self.case.steps, self.side.callback(self.on_step), resume)
            if self._next_point() is not None:  # the final point (or --until's, if learn ended there)
                self._evaluate(self.side.num_timesteps)
        return self.record()

    def record(self) -> dict[str, Any]:
        assert self.side is not None
        case = self.case
        clocks = self._clocks()
        train_seconds = clocks["seconds"] - self.state["eval_seconds"]
        steps = self.side.num_timesteps
        return {
            "case": case.name,
            "algo": case.algo,
            "env": case.env,
            "library": self.library,
            "seed": self.seed,
            "steps": steps,  # what it trained: past the budget when a rollout overshoots, short of it when cut
            "complete": self.until is None,
            "until": self.until,
            "curve": self.state["curve"],
            "eval_steps": self.state["eval_steps"],
            "eval_returns": self.state.get("eval_returns", []),
            "train_curve": self.state.get("train_curve", []),
            "final_mean": self.state["curve"][-1][1],
            **clocks,
            "eval_seconds": self.state["eval_seconds"],
            "train_steps_per_s": steps / train_seconds if train_seconds > 0 else None,
            "resumed": self.state["resumed"],
            "torch_threads": _torch_threads(),
            "cpus": sorted(os.sched_getaffinity(0)),
            "device": "cpu",
            "host_cpu": _cpu_model(),
            "versions": versions(),
            "commit": self.commit,
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **case.describe(),
        }


def _cut(case: LearningCase, until: int) -> int:
    """The last eval point ``--until`` keeps: the first at or past ``until``."""
    for point in case.eval_points:
        if point >= until:
            return point
    return case.steps


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """An exclusive lock on a run's scratch folder, so two loops never train the same run."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".{folder.name}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True


def run_one(
    case_name: str, library: str, seed: int, until: int | None = None, out: Path | None = None
) -> Path:
    """Train one run (resuming from its checkpoint if it has one) and write its record; return the path."""
    case = by_name(case_name)
    if library not in SIDES:
        raise SystemExit(f"--library must be one of {', '.join(SIDES)}, not {library!r}.")
    if until is not None and until <= 0:
        raise SystemExit(f"--until must be a positive number of steps, not {until}.")
    scratch = scratch_dir(case.name, library, seed, until)
    if out is None:
        out = (
            scratch.parent / f"{library}-seed{seed}.json"
            if until is not None
            else record_path(case.name, library, seed)
        )
    with _locked(scratch) as free:
        if not free:
            raise SystemExit(f"{scratch} is in use by another run.")
        record = Run(case, library, seed, until, scratch).execute()
        write_json(out, record)
        if until is None:
            shutil.rmtree(scratch, ignore_errors=True)  # the record is in; the checkpoint is spent
    print(f"wrote {out}", flush=True)
    return out


def has_record(case: str, library: str, seed: int) -> bool:
    """Whether the ledger holds this run's record, made as the case is now (a record from before a change
    of the case's budget, evaluation or hyperparameters counts as missing: ``--next`` trains it again and
    replaces it)."""
    path = record_path(case, library, seed)
    if not path.exists():
        return False
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return True  # unreadable: leave it for a person to look at rather than overwrite it
    return not isinstance(record, dict) or by_name(case).made_as_now(record)


def next_missing() -> tuple[str, str, int] | None:
    """The first record of ``ledger_order`` that is neither written (as the case is now),
    failed, nor being trained."""
    for case, library, seed in ledger_order():
        scratch = scratch_dir(case, library, seed)
        if has_record(case, library, seed) or (scratch.parent / f".{scratch.name}.failed").exists():
            continue
        with _locked(scratch) as free:
            if free:
                return case, library, seed
    return None


def main(argv: list[str] | None = None) -> int:
    global RESULTS, SCRATCH
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", help="a case of learning/cases.py")
    parser.add_argument("--library", choices=LIBRARIES)
    parser.add_argument("--seed", type=int)
    parser.add_argument("--until", type=int, help="cut the run at the first eval point at or past STEPS")
    parser.add_argument("--out", type=Path, help="write the record here instead")
    parser.add_argument("--next", action="store_true", help="run the first record the ledger lacks")
    parser.add_argument("--list", action="store_true", help="print the ledger's records and their state")
    parser.add_argument("--results", type=Path, help=f"the ledger's records folder (default {RESULTS})")
    parser.add_argument("--scratch", type=Path, help=f"the checkpoints folder (default {SCRATCH})")
    args = parser.parse_args(argv)
    RESULTS, SCRATCH = args.results or RESULTS, args.scratch or SCRATCH
    warnings.filterwarnings("ignore")
    if args.list:
        for case, library, seed in ledger_order():
            path = record_path(case, library, seed)
            state = "done" if has_record(case, library, seed) else "stale" if path.exists() else "missing"
            print(f"{case:18} {library:8} seed {seed}: {state}")
        return 0
    if args.next:
        found = next_missing()
        if found is None:
            print("no record missing", flush=True)
            return NOTHING_MISSING
        case, library, seed = found
    else:
        if args.case is None or args.library is None or args.seed is None:
            parser.error("give --case, --library and --seed, or --next")
        case, library, seed = args.case, args.library, args.seed
        try:
            by_name(case)
        except KeyError as error:
            parser.error(str(error.args[0]))
    try:
        run_one(case, library, seed, args.until, args.out)
    except SystemExit:
        raise
    except Exception:
        traceback.print_exc()
        if args.next:
            scratch = scratch_dir(case, library, seed)
            (scratch.parent / f".{scratch.name}.failed").write_text(traceback.format_exc())
        return FAILED
    return DONE


if __name__ == "__main__":
    sys.exit(main())
