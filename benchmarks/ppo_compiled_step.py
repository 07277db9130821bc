"""``PPO(compile=True)`` against the eager update: one minibatch step alone, and whole ``learn`` calls.

    python benchmarks/ppo_compiled_step.py                 # rl-zoo3's CartPole PPO (8 envs, batch 256)
    python benchmarks/ppo_compiled_step.py --rounds 5 --learn-steps 4096

Both models are built and warmed up (the compiled one compiles on its first update), then measured in one
process, alternating eager and compiled, with thread CPU time (one torch thread: other processes' load on
a shared machine does not count). The step alone: the same minibatch, ``minibatch_loss`` +
``optimizer_step`` eager against the compiled program, median microseconds per call. Inside learn:
CPU microseconds per environment step of ``learn(learn_steps)`` (collection, GAE, the 20 epochs of updates,
Lightning's fit set-up), median over rounds.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

clock = time.thread_time

ZOO = {
    "n_envs": 8, "n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20,
    "ent_coef": 0.0, "learning_rate": "lin_0.001", "clip_range": "lin_0.2",
}  # fmt: skip


def build(compiled: bool) -> Any:
    from lit_sb3 import PPO
    from lit_sb3.common.env_util import make_vec_env

    config = dict(ZOO)
    n_envs = config.pop("n_envs")

    env = make_vec_env("CartPole-v1", n_envs=n_envs, seed=0)
    return PPO("MlpPolicy", env, seed=0, device="cpu", compile=compiled, **config)


def step_alone(eager: Any, compiled: Any, calls: int, rounds: int) -> tuple[float, float]:
    """Median CPU us per minibatch update on the same minibatch, alternating."""
    batch = next(iter(eager.rollout.minibatches(eager.batch_size)))
    clip = torch.tensor(0.2)
    eager_optimizer = getattr(eager.optimizers(), "optimizer", eager.optimizers())
    compiled_optimizer = getattr(compiled.optimizers(), "optimizer", compiled.optimizers())
    program = compiled.compiled_step()

    def run_eager() -> None:
        values, log_prob, entropy = eager.evaluate_minibatch(batch)
        loss, _ = eager.minibatch_loss(batch, values, log_prob, entropy, 0.2, None)
        eager.optimizer_step(eager_optimizer, loss, eager.max_grad_norm)

    def run_compiled() -> None:
        program(compiled_optimizer, batch, clip, None)

    timings: dict[str, list[float]] = {"eager": [], "compiled": []}
    for _ in range(rounds):
        for name, call in (("eager", run_eager), ("compiled", run_compiled)):
            start = clock()
            for _ in range(calls):
                call()
            timings[name].append((clock() - start) / calls * 1e6)
    return statistics.median(timings["eager"]), statistics.median(timings["compiled"])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--learn-steps", type=int, default=2048)
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    eager, compiled = build(False), build(True)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    compiled.learn(256)  # the first update compiles
    print(
        f"first learn of the compiled model (compile included): wall {time.perf_counter() - start_wall:.1f} s, "
        f"process CPU {time.process_time() - start_cpu:.1f} s"
    )
    eager.learn(256)
    eager_us, compiled_us = step_alone(eager, compiled, args.calls, args.rounds)
    print(
        f"one minibatch update alone (batch 256), CPU us: eager {eager_us:.0f}, compiled {compiled_us:.0f} "
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
