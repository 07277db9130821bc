"""``SAC(compile=True)`` against the eager update: one gradient step alone, and whole ``learn`` calls.

    python benchmarks/sac_compiled_step.py                  # SB3's SAC defaults on Pendulum-v1
    python benchmarks/sac_compiled_step.py --algo td3       # TD3 (or tqc), its SB3 defaults
    python benchmarks/sac_compiled_step.py --rounds 5 --learn-steps 1000
    python benchmarks/sac_compiled_step.py --cache /tmp/c   # compile cost with this inductor cache
                                                            # (empty: cold; second run: warm)

SB3's defaults: 256x256 actor and twin critics, batch 256, one gradient step per environment step (SAC: a
learned temperature; TD3: the actor and targets every second step; TQC: 2 critics of 25 quantiles).
Both models are built and warmed up (the compiled one compiles on its first update), then measured in one
process, alternating eager and compiled, with thread CPU time (one torch thread: other processes' load on
a shared machine does not count). The step alone: the same minibatch and noise,
the eager step against the compiled program, median microseconds per call. Inside learn: CPU
microseconds per environment step of ``learn(learn_steps)`` (collection, sampling, the update, Lightning's
fit set-up), median over rounds. The compile cost: wall and CPU seconds of the first ``learn`` of the
compiled model (warm-up steps and first update), the CPU of inductor's compile workers counted apart.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
import warnings
from typing import Any

import torch

clock = time.thread_time
LEARNING_STARTS = 100


def build(algo: str, compiled: bool) -> Any:
    import lit_sb3

    return getattr(lit_sb3, algo.upper())(
        "MlpPolicy", "Pendulum-v1", seed=0, device="cpu", learning_starts=LEARNING_STARTS, compile=compiled
    )


def step_arguments(model: Any, data: Any) -> tuple[Any, ...]:
    """What ``gradient_step`` takes after the minibatch: the discount, the noise, the flag that updates the
    actor (TD3) or the targets (SAC, TQC) this step."""
    if hasattr(model, "policy_delay"):  # TD3
        return (data, model.gamma, torch.randn_like(data.actions), True)
    noise = torch.randn(data.actions.shape[0], model.policy.actor.action_dim)
    return (data, model.gamma, noise, torch.randn_like(noise), True)


def step_alone(eager: Any, compiled: Any, calls: int, rounds: int) -> tuple[float, float]:
    """Median CPU us per gradient step on the same minibatch and noise, alternating."""
    arguments = step_arguments(eager, eager.replay_buffer.sample(eager.batch_size))
    runs = []
    for model in (eager, compiled):
        program, optimizers = model.update_program(), model.optimizers()
        runs.append(lambda p=program, o=optimizers: p(o, *arguments))
    timings: dict[str, list[float]] = {"eager": [], "compiled": []}
    for _ in range(rounds):
        for name, call in zip(("eager", "compiled"), runs, strict=True):
            start = clock()
            for _ in range(calls):
                call()
            timings[name].append((clock() - start) / calls * 1e6)
    return statistics.median(timings["eager"]), statistics.median(timings["compiled"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algo", choices=("sac", "td3", "tqc"), default="sac")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--learn-steps", type=int, default=500)
    parser.add_argument("--cache", help="inductor's cache folder (LIT_SB3_COMPILE_CACHE) for this run")
    parser.add_argument("--compile-only", action="store_true", help="measure the compile cost only")
    args = parser.parse_args()
    if args.cache:
        os.environ["LIT_SB3_COMPILE_CACHE"] = args.cache
        os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    compiled = build(args.algo, True)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    start_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    compiled.learn(LEARNING_STARTS + 1)  # the warm-up steps, then the first update compiles
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers = children.ru_utime + children.ru_stime - start_children.ru_utime - start_children.ru_stime
    print(
        f"first learn of the compiled model ({LEARNING_STARTS} warm-up steps, the first update compiles): "
        f"wall {time.perf_counter() - start_wall:.1f} s, process CPU {time.process_time() - start_cpu:.1f} s, "
        f"compile workers' CPU {workers:.1f} s"
    )
    if args.compile_only:
        return
    eager = build(args.algo, False)
    eager.learn(LEARNING_STARTS + 1)
    for model in (eager, compiled):  # past the first updates: Adam's state exists, caches are warm
        model.learn(200, reset_num_timesteps=False)
    eager_us, compiled_us = step_alone(eager, compiled, args.calls, args.rounds)
    print(
        f"one {args.algo} gradient step alone (batch 256), CPU us: eager {eager_us:.0f}, compiled {compiled_us:.0f} "
        f"({eager_us / compiled_us:.2f}x)"
    )
    per_step: dict[str, list[float]] = {"eager": [], "compiled": []}
    for _ in range(args.rounds):
        for name, model in (("eager", eager), ("compiled", compiled)):
            start = clock()
            model.learn(args.learn_steps, reset_num_timesteps=False)
            per_step[name].append((clock() - start) / args.learn_steps * 1e6)
    e, c = statistics.median(per_step["eager"]), statistics.median(per_step["compiled"])
    print(
        f"inside learn({args.learn_steps}), CPU us per env step: eager {e:.0f}, compiled {c:.0f} ({e / c:.2f}x); "
        f"rounds eager {[round(v) for v in per_step['eager']]}, compiled {[round(v) for v in per_step['compiled']]}"
    )


if __name__ == "__main__":
    main()
