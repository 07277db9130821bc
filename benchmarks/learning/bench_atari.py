"""A ledger Atari case (``--case``, PPO on BreakoutNoFrameskip-v4 with rl-zoo3's settings by default) in SB3
beside lit-sb3's options (issue 28, must-have 5): float32, the bf16 trunk (``NatureCNN(bf16=True)`` through
``policy_kwargs={"features_extractor_kwargs": {"bf16": True}}``), ``RLTrainer(precision="bf16-mixed")``
(autocast over the whole training step), envpool's C++ Atari stepping (``vectorization="envpool"``), and
float32 on SB3's contiguous memory layout (``features_extractor_kwargs={"channels_last": False}``; the
default runs the convolutions channels-last).

    taskset -c 0 nice python benchmarks/learning/bench_atari.py [--case ppo-breakout] [--steps 4096]
        [--rounds 3] [--learning-starts N] [--only ...]

Every variant builds a fresh seeded model with the case's hyperparameters and learns ``--steps`` agent
steps; the variants alternate in one process, round after round, and the median over rounds of the CPU
seconds per 1,000 steps is printed (``time.process_time``: every thread of the process, envpool's
included, and none of the other processes on a loaded machine), with SB3's over it (above 1: cheaper than
SB3). ``--learning-starts`` moves an off-policy case's first update (DQN and QR-DQN act at random and
train nothing before it) so that a short run measures acting and training as the rest of the ledger's run
does. Timing only: that the bf16 trunk learns what float32 learns is tests/nets/test_nature_cnn_bf16.py's
question.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import functools
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/: ``suite`` and ``learning``

# (case, steps, learning_starts) -> (learn, close)
Variant = Callable[[Any, int, int | None], tuple[Callable[[], None], Callable[[], None]]]


def _hyperparams(case: Any, learning_starts: int | None) -> dict[str, Any]:
    """The case's hyperparameters, with ``learning_starts`` moved when asked."""
    kwargs = copy.deepcopy(case.hyperparams)
    if learning_starts is not None:
        kwargs["learning_starts"] = learning_starts
    return kwargs


def _lit(
    case: Any,
    steps: int,
    learning_starts: int | None,
    bf16: bool = False,
    vectorization: str = "sync",
    precision: str | None = None,
    channels_last: bool = True,
) -> tuple:
    from suite.measure import make_env

    import lit_sb3

    kwargs = _hyperparams(case, learning_starts)
    if bf16 or not channels_last:
        extractor = {"bf16": bf16, "channels_last": channels_last}
        kwargs.setdefault("policy_kwargs", {})["features_extractor_kwargs"] = extractor
    source = case.env if vectorization == "envpool" else functools.partial(make_env, case.suite_case())
    datamodule = lit_sb3.RLEnvDataModule(
        train_env=source, n_envs=case.n_envs, seed=0, atari=True, vectorization=vectorization
    )
    algorithm = lit_sb3.get_algo_class(case.algo)
    model = algorithm(case.policy, seed=0, device="cpu", **kwargs)

    def learn() -> None:
        if precision is None:
            model.learn(steps, env=datamodule)
            return
        trainer = lit_sb3.RLTrainer(
            max_steps=steps, precision=precision, logger=False, enable_checkpointing=False,
            enable_progress_bar=False,
        )  # fmt: skip
        trainer.fit(model, datamodule=datamodule)

    return learn, datamodule.close


def _sb3(case: Any, steps: int, learning_starts: int | None) -> tuple:
    from suite.libraries import Sb3Run

    suite_case = case.suite_case()
    job = Sb3Run(dataclasses.replace(suite_case, hyperparams=_hyperparams(case, learning_starts)), 0)
    return (lambda: job.model.learn(steps)), job.model.get_env().close


VARIANTS: dict[str, Variant] = {
    "SB3": _sb3,
    "lit-sb3 fp32": _lit,
    "lit-sb3 fp32 contiguous": functools.partial(_lit, channels_last=False),
    "lit-sb3 bf16 trunk": functools.partial(_lit, bf16=True),
    "lit-sb3 precision=bf16-mixed": functools.partial(_lit, precision="bf16-mixed"),
    "lit-sb3 fp32 envpool": functools.partial(_lit, vectorization="envpool"),
    "lit-sb3 bf16 trunk envpool": functools.partial(_lit, bf16=True, vectorization="envpool"),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--case", default="ppo-breakout", help="a ledger Atari case (cases.py)")
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument(
        "--learning-starts", type=int, help="an off-policy case's first update (default: its own)"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", nargs="+", choices=list(VARIANTS), help="these variants (SB3 always runs)")
    args = parser.parse_args(argv)
    variants = {
        name: VARIANTS[name] for name in VARIANTS if name == "SB3" or not args.only or name in args.only
    }
    from learning.cases import CASES

    atari = {case.name: case for case in CASES if case.atari}
    if args.case not in atari:
        parser.error(f"--case {args.case!r} is not a ledger Atari case; choose one of {', '.join(atari)}")
    case = atari[args.case]
    if args.learning_starts is not None and "learning_starts" not in case.hyperparams:
        parser.error(f"--learning-starts: {case.algo} has no learning_starts (an on-policy algorithm)")
    warnings.filterwarnings("ignore")
    import torch

    torch.set_num_threads(1)
    print(f"{case.name}: {case.algo} on {case.env}, {args.steps:,} steps per run", flush=True)
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for round_ in range(args.rounds):
        for name, variant in variants.items():
            learn, close = variant(case, args.steps, args.learning_starts)
            start = time.process_time()
            learn()
            cpu[name].append(1000 * (time.process_time() - start) / args.steps)
            close()
            print(f"round {round_} {name:30} {cpu[name][-1]:6.2f} CPU s / 1k steps", flush=True)
    base = statistics.median(cpu["SB3"])
    print("\n| variant | CPU s / 1,000 steps | SB3 / variant |\n|---|--:|--:|")
    for name, values in cpu.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {base / median:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
