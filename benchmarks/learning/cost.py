"""Measure what a ledger record costs: a few thousand steps of each case on one core, both libraries.

    taskset -c 0 nice python benchmarks/learning/cost.py [--steps 3000] [--cases a,b] [--library sb3]

Each case trains ``--steps`` steps with ``learning_starts`` cut to 500 (so the measured steps are update
steps, the expensive part; the real warm-up is cheaper, which makes the estimate an upper bound), then
plays one evaluation episode (one whole game on Atari). Printed per case and library: CPU seconds per
training step, CPU seconds of the episode, and the estimate of one record:
``budget x train cost + eval points x eval_episodes x episode cost``. Results are JSON on stdout's last line.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from learning.cases import CASES, LearningCase  # noqa: E402
from learning.run import SIDES  # noqa: E402


def measure(case: LearningCase, library: str, steps: int) -> dict[str, float]:
    import torch

    torch.set_num_threads(1)
    overrides = dict(case.overrides)
    if "learning_starts" in case.hyperparams:
        overrides["learning_starts"] = min(500, int(case.hyperparams["learning_starts"]))
    short = dataclasses.replace(case, steps=steps, eval_every=steps, eval_episodes=1, overrides=overrides)
    side = SIDES[library](short, 0)
    cpu = time.process_time()
    side.learn(steps, None, resume=False)
    train = (time.process_time() - cpu) / max(side.num_timesteps, 1)
    cpu = time.process_time()
    side.evaluate()
    episode = time.process_time() - cpu
    estimate = case.steps * train + len(case.eval_points) * case.eval_episodes * episode
    return {"train_cpu_s_per_step": train, "eval_cpu_s_per_episode": episode, "record_cpu_s": estimate}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--library", choices=sorted(SIDES), help="one library only")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    names = args.cases.split(",") if args.cases else [case.name for case in CASES]
    libraries = [args.library] if args.library else list(SIDES)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for case in CASES:
        if case.name not in names:
            continue
        for library in libraries:
            result = measure(case, library, args.steps)
            out.setdefault(case.name, {})[library] = result
            print(f"{case.name:18} {library:8} {1e3 * result['train_cpu_s_per_step']:7.2f} ms/step  "
                  f"episode {result['eval_cpu_s_per_episode']:6.1f} s  record ~{result['record_cpu_s'] / 60:6.1f} "
                  "CPU-min", flush=True)  # fmt: skip
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
