"""How many source files of the library one training iteration and one gradient step pass through.

A measure of how spread out the hot path is (issue 23): a reader following one PPO iteration or one SAC
gradient step through the code opens this many files. ``sys.setprofile`` records the file of every Python
function called; a file counts when it belongs to the library: for lit-sb3 every file of its checkout
(``lit_sb3_core/``, ``lit_sb3/``, ``plugins/``), for SB3 the ``stable_baselines3`` package.

    python benchmarks/files_per_step.py                  # lit-sb3 of this interpreter, PPO and SAC
    python benchmarks/files_per_step.py --library sb3    # the same units in Stable-Baselines3
    ../old/.venv/bin/python benchmarks/files_per_step.py # another checkout's lit-sb3 (before/after)

Units (after a few warm-up iterations, so one-time set-up is not counted):
  * iteration: from one call of the rollout collection (lit-sb3 ``collect_rollout``/``collect_chunk``, SB3
    ``collect_rollouts``) to the next: collecting, the update, logging, and the trainer loop in between.
  * update: one call of the update (lit-sb3 ``train_on_rollout``/``train_on_buffer``, SB3 ``train``), from
    call to return. With SAC's ``gradient_steps=1`` it is one gradient step.
Each unit is measured over several windows; the table gives the median and the range of the file counts,
and ``--list`` prints the files of the median window.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path
from types import FrameType
from typing import Any

COLLECT = {"lit": ("collect_rollout", "collect_chunk"), "sb3": ("collect_rollouts",)}
UPDATE = {"lit": ("train_on_rollout", "train_on_buffer"), "sb3": ("train",)}


class FileWindows:
    """A profile function that cuts the run into windows and records the library files of each."""

    def __init__(self, library: str, roots: list[Path], excluded: list[Path]) -> None:
        self.collect, self.update = COLLECT[library], UPDATE[library]
        self.roots = [str(root) + "/" for root in roots]
        self.excluded = [str(path) + "/" for path in excluded]
        self.known: dict[str, bool] = {}
        self.iterations: list[set[str]] = []
        self.updates: list[set[str]] = []
        self.update_frame: FrameType | None = None
        self.collect_frame: FrameType | None = None  # the outer collection call (overrides call super())

    def ours(self, filename: str) -> bool:
        verdict = self.known.get(filename)
        if verdict is None:
            verdict = any(filename.startswith(r) for r in self.roots) and not any(
                filename.startswith(e) for e in self.excluded
            )
            self.known[filename] = verdict
        return verdict

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "return":
            if frame is self.update_frame:
                self.update_frame = None
            elif frame is self.collect_frame:
                self.collect_frame = None
            return
        if event != "call":
            return
        code = frame.f_code
        name = code.co_name
        if name in self.collect and self.collect_frame is None:
            self.collect_frame = frame
            self.iterations.append(set())  # a new iteration starts
        elif name in self.update and self.update_frame is None and self.ours(code.co_filename):
            self.update_frame = frame
            self.updates.append(set())
        filename = code.co_filename
        if self.ours(filename):
            if self.iterations:
                self.iterations[-1].add(filename)
            if self.update_frame is not None:
                self.updates[-1].add(filename)


def library_roots(library: str) -> tuple[list[Path], list[Path]]:
    """(roots, excluded folders) of the library's source files."""
    if library == "sb3":
        import stable_baselines3

        return [Path(stable_baselines3.__file__).resolve().parent], []
    import lit_sb3_core

    checkout = Path(lit_sb3_core.__file__).resolve().parents[1]
    return [checkout], [
        checkout / name for name in (".venv", ".venv-jax", ".sb3-tests", "benchmarks", "tests")
    ]


def build(library: str, algo: str) -> tuple[Any, int]:
    """The model and the steps to learn: PPO on CartPole (128 steps per iteration, 2 epochs of 2 minibatches,
    8 iterations), SAC on Pendulum (SB3's defaults, one gradient step per env step, 300 steps after 100
    random ones)."""
    module = __import__("stable_baselines3" if library == "sb3" else "lit_sb3", fromlist=["PPO", "SAC"])
    if algo == "ppo":
        model = module.PPO(
            "MlpPolicy", "CartPole-v1", n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu"
        )
        return model, 128 * 8
    model = module.SAC("MlpPolicy", "Pendulum-v1", learning_starts=100, seed=0, device="cpu")
    return model, 400


def measure(library: str, algo: str, skip: int) -> dict[str, list[set[str]]]:
    model, steps = build(library, algo)
    roots, excluded = library_roots(library)
    windows = FileWindows(library, roots, excluded)
    sys.setprofile(windows)
    try:
        model.learn(total_timesteps=steps)
    finally:
        sys.setprofile(None)
    # The last iteration window runs into the end of learn(); the first ones hold one-time set-up.
    return {"iteration": windows.iterations[skip:-1], "update": windows.updates[skip:]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--library", choices=("lit", "sb3"), default="lit")
    parser.add_argument("--algos", nargs="+", choices=("ppo", "sac"), default=["ppo", "sac"])
    parser.add_argument("--list", action="store_true", help="print the files of each unit's median window")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    print(f"{args.library} ({sys.executable})")
    print("| algorithm | unit | files (median) | range | windows |")
    print("|---|---|--:|---|--:|")
    listing = []
    for algo in args.algos:
        # PPO: skip 2 iterations; SAC: skip the random phase (100 single-step iterations) and 50 more.
        skip = 2 if algo == "ppo" else 150
        found = measure(args.library, algo, skip)
        for unit, sets in found.items():
            if algo == "sac" and unit == "update":
                sets = sets[50:]
            counts = [len(s) for s in sets]
            if not counts:
                print(f"| {algo} | {unit} | - | - | 0 |")
                continue
            median = statistics.median_low(counts)
            print(f"| {algo} | {unit} | {median} | {min(counts)}–{max(counts)} | {len(counts)} |")
            chosen = next(s for s in sets if len(s) == median)
            listing.append((algo, unit, sorted(chosen)))
    if args.list:
        for algo, unit, files in listing:
            print(f"\n{algo} {unit}: {len(files)} files")
            for name in files:
                print(f"  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
