"""Where a gradient step's time goes: lit-sb3's off-policy and on-policy updates, phase by phase.

    python benchmarks/profile_updates.py                       # every case below, Markdown to stdout
    python benchmarks/profile_updates.py --cases sac-default --steps 200 --ops 12

For each case (the benchmark suite's hyperparameters, one torch thread), the script trains lit-sb3 past
its warm-up, then times ``--steps`` more gradient steps with timers around the loop's phases (replay
sampling, the optimizer steps with their backward passes, the rest of the update: forward passes, losses,
target updates) and reports milliseconds per gradient step, then torch.profiler's operator table for the
same steps (matrix multiplies against everything else). On-policy cases report microseconds per
environment step instead. Each case runs in variants (``VARIANTS``): the update as it was before the
optimised paths, as it is by default now, and with the critic ensemble batched on the CPU too, alternating
in one process so that machine load favours none. Timers wrap methods of the model in this process only.
Absolute numbers depend on the machine's load; compare variants and phases within one run.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

OFF_POLICY = ["sac-default", "td3-default", "tqc-zoo", "crossq-zoo", "dqn-default", "dqn-zoo", "qrdqn-zoo"]
ON_POLICY = ["ppo-zoo-8env", "ppo-default-8env", "a2c-zoo-cartpole"]


# CPU time of this thread: other processes' load on a shared machine does not count (torch runs on this
# one thread here), so phases and variants stay comparable while other jobs run.
clock = time.thread_time


class Timers:
    """Accumulated CPU time and call counts by name; ``wrap`` times a bound method."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: dict[str, int] = collections.defaultdict(int)
        self.active = False

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.active:
                return original(*args, **kwargs)
            start = clock()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += clock() - start
                self.calls[label] += 1

        setattr(owner, name, timed)

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


@contextlib.contextmanager
def _timing(timers: Timers) -> Iterator[None]:
    timers.reset()
    timers.active = True
    try:
        yield
    finally:
        timers.active = False


def _build(case_name: str) -> tuple[Any, Any, Any]:
    from suite.cases import by_name
    from suite.measure import make_env

    import lit_sb3

    case = by_name(case_name)
    datamodule = lit_sb3.RLEnvDataModule(
        train_env=functools.partial(make_env, case), n_envs=case.n_envs, seed=0
    )
    model = lit_sb3.get_algo_class(case.algo)(policy=case.policy, seed=0, device="cpu", **case.hyperparams)
    return case, model, datamodule


def _operator_table(run: Callable[[], None], ops: int, per: int) -> list[str]:
    """torch.profiler's self CPU time by operator over ``run()``, per unit (``per`` units ran)."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        run()
    events = [e for e in prof.key_averages() if e.key.startswith("aten::") or "Optimizer" in e.key]
    total = sum(e.self_cpu_time_total for e in events)
    matmul = sum(e.self_cpu_time_total for e in events if e.key in _MATMULS)
    rows = [
        f"matrix multiplies ({', '.join(sorted(_MATMULS))}): {matmul / per / 1000:.2f} ms of "
        f"{total / per / 1000:.2f} ms in aten operators ({100 * matmul / max(total, 1):.0f} %), "
        f"{sum(e.count for e in events) / per:.0f} operator calls per unit",
        "",
        "| operator | calls / unit | self ms / unit | share |",
        "|---|--:|--:|--:|",
    ]
    for event in sorted(events, key=lambda e: -e.self_cpu_time_total)[:ops]:
        rows.append(
            f"| `{event.key}` | {event.count / per:.1f} | {event.self_cpu_time_total / per / 1000:.3f} "
            f"| {100 * event.self_cpu_time_total / max(total, 1):.0f} % |"
        )
    return rows


_MATMULS = {"aten::addmm", "aten::mm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear"}


# What each variant switches: "before" is the update as it was (Optimizer.step, critics one by one);
# "after" is the default now (direct fused Adam; critics batched on accelerators only); "batched" also
# batches the critics on the CPU.
VARIANTS = {"before": (False, False), "after": (True, False), "batched": (True, True)}
# Variants not run unless named with --variants: "onednn" is "after" with fp32 Linear layers routed
# through oneDNN (lit_sb3_core.nets.fast_matmul); "bf16" is "after" under bf16 autocast.
EXTRA_VARIANTS = {"onednn": (True, False), "bf16": (True, False)}
VARIANTS.update(EXTRA_VARIANTS)


@contextlib.contextmanager
def variant(name: str) -> Iterator[None]:
    """Switch the optimised paths as ``VARIANTS[name]`` says, for the block."""
    import torch

    import lit_sb3_core.sdk.fast_path as algorithm
    from lit_sb3_core.nets import fast_matmul
    from lit_sb3_core.nets.off_policy_policies import ContinuousCritic

    direct, batched = VARIANTS[name]
    saved = algorithm.direct_step, ContinuousCritic.batch_on_cpu
    if not direct:
        algorithm.direct_step = lambda optimizer: False  # type: ignore[assignment]
    ContinuousCritic.batch_on_cpu = batched
    fast_matmul.set_enabled(name == "onednn")
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=name == "bf16"):
            yield
    finally:
        algorithm.direct_step, ContinuousCritic.batch_on_cpu = saved
        fast_matmul.set_enabled(None)


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def profile_off_policy(
    case_name: str, steps: int, ops: int, repeats: int, variants: list[str] | None = None
) -> list[str]:
    from lit_sb3_core.sdk.fast_path import plain_calls

    case, model, datamodule = _build(case_name)
    warmup = int(case.hyperparams.get("learning_starts", 100)) + 600
    model.learn(total_timesteps=warmup, env=datamodule)
    timers = Timers()
    timers.wrap(model.replay_buffer, "sample", "replay sampling")
    timers.wrap(model, "optimizer_step", "backward + optimizer steps")
    timers.wrap(model, "train_on_buffer", "whole update")
    batch = model.batch_size
    ensemble = hasattr(model.policy, "critic") and type(model.policy.critic).__name__ != "CrossQCritic"
    names = ["before", "after", "batched"] if ensemble else ["before", "after"]
    if variants:
        names = ["before", *[name for name in variants if name != "before"]]

    def run_steps(n: int) -> None:
        # The optimizers of the finished run are still the trainer's: continue where learn() stopped,
        # inside plain_calls as training_step runs it.
        model._set_policy_mode(True)
        with plain_calls(model.policy):
            model.train_on_buffer(n, batch)

    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:  # alternating: machine load favours no variant
            with variant(name):
                run_steps(5)
                with _timing(timers):
                    run_steps(steps)
            results[name].append({k: v / steps * 1000 for k, v in timers.seconds.items()})
    lines = [
        f"### {case_name}: {case.algo} on {case.env} ({case.config}), batch {batch}",
        "",
        f"CPU milliseconds per gradient step, median of {repeats} alternating runs of {steps} steps each:",
        "",
        "| phase | " + " | ".join(names) + " |",
        "|---|" + "--:|" * len(names),
    ]
    phases = ["whole update", "replay sampling", "backward + optimizer steps"]
    table = {
        name: {phase: _median([r.get(phase, 0.0) for r in results[name]]) for phase in phases}
        for name in names
    }
    for name in names:
        table[name]["forward passes, losses, bookkeeping"] = (
            table[name]["whole update"]
            - table[name]["replay sampling"]
            - table[name]["backward + optimizer steps"]
        )
    for phase in [*phases, "forward passes, losses, bookkeeping"]:
        lines.append(f"| {phase} | " + " | ".join(f"{table[name][phase]:.3f}" for name in names) + " |")
    base = table["before"]["whole update"]
    lines.append(
        "| speed-up | " + " | ".join(f"{base / table[name]['whole update']:.2f}x" for name in names) + " |"
    )
    for name in ("before", names[-1] if variants else "after"):
        with variant(name):
            lines += ["", f"Operators, {name} (unit: one gradient step):", ""]
            lines += _operator_table(lambda: run_steps(steps), ops, steps)
    lines.append("")
    return lines


def profile_on_policy(case_name: str, iterations: int, ops: int, repeats: int) -> list[str]:
    case, model, datamodule = _build(case_name)
    model.learn(total_timesteps=case.n_envs * model.n_steps * 3, env=datamodule)
    timers = Timers()
    timers.wrap(model, "collect_rollout", "rollout")
    timers.wrap(model, "train_on_rollout", "update")
    timers.wrap(model, "optimizer_step", "backward + optimizer steps")
    timers.wrap(model, "rollout_forward", "policy forward")
    timers.wrap(model.vector_env if hasattr(model, "vector_env") else model._env, "step", "env.step")
    rollout_steps = case.n_envs * model.n_steps
    names = ["before", "after"]
    results: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(repeats):
        for name in names:
            with variant(name), _timing(timers):
                start = clock()
                model.learn(
                    total_timesteps=rollout_steps * iterations, env=datamodule, reset_num_timesteps=False
                )
                elapsed = clock() - start
            n_iter = max(1, timers.calls["update"])
            per_step = 1e6 / (rollout_steps * n_iter)
            s = dict(timers.seconds)
            row = {
                "env steps per CPU second": rollout_steps * n_iter / elapsed,
                "env.step": s["env.step"] * per_step,
                "policy forward": s["policy forward"] * per_step,
                "rest of the rollout (buffer, GAE, conversions)": (
                    s["rollout"] - s["env.step"] - s["policy forward"]
                )
                * per_step,
                "update: backward + optimizer steps": s["backward + optimizer steps"] * per_step,
                "update: forward, losses, minibatches": (s["update"] - s["backward + optimizer steps"])
                * per_step,
                "Lightning and the rest": (elapsed - s["rollout"] - s["update"]) * per_step,
                "minibatches": timers.calls["backward + optimizer steps"] / n_iter,
            }
            results[name].append(row)
    lines = [
        f"### {case_name}: {case.algo} on {case.env} ({case.config})",
        "",
        f"CPU microseconds per environment step, median of {repeats} alternating runs of {iterations} iterations "
        f"({rollout_steps} env steps and {_median([r['minibatches'] for r in results['after']]):.0f} minibatches "
        "each):",
        "",
        "| phase | " + " | ".join(names) + " |",
        "|---|" + "--:|" * len(names),
    ]
    keys = [k for k in results["before"][0] if k not in ("env steps per CPU second", "minibatches")]
    for key in keys:
        lines.append(
            f"| {key} | " + " | ".join(f"{_median([r[key] for r in results[n]]):.1f}" for n in names) + " |"
        )
    lines.append(
        "| env steps per CPU second | "
        + " | ".join(f"{_median([r['env steps per CPU second'] for r in results[n]]):.0f}" for n in names)
        + " |"
    )
    for name in names:
        with variant(name):
            lines += ["", f"Operators, {name} (unit: one iteration, rollout and update):", ""]
            lines += _operator_table(
                lambda: model.learn(
                    total_timesteps=rollout_steps * 2, env=datamodule, reset_num_timesteps=False
                ),
                ops,
                2,
            )
    lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cases", nargs="+", default=OFF_POLICY + ON_POLICY)
    parser.add_argument("--steps", type=int, default=100, help="gradient steps (off-policy) to time")
    parser.add_argument("--iterations", type=int, default=10, help="iterations (on-policy) to time")
    parser.add_argument("--ops", type=int, default=8, help="operators listed per case")
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per variant (median)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--variants", nargs="+", choices=sorted(VARIANTS), help="off-policy variants to compare with before"
    )
    args = parser.parse_args(argv)
    import warnings

    import torch

    warnings.filterwarnings("ignore")
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s)\n")
    for name in args.cases:
        lines = (
            profile_on_policy(name, args.iterations, args.ops, args.repeats)
            if name in ON_POLICY or name.startswith(("ppo", "a2c"))
            else profile_off_policy(name, args.steps, args.ops, args.repeats, args.variants)
        )
        print("\n".join(lines), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
