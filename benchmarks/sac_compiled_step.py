"""``SAC(compile=True)`` against the eager update: one gradient step alone, and whole ``learn`` calls.

    python benchmarks/sac_compiled_step.py                  # SB3's SAC defaults on Pendulum-v1
    python benchmarks/sac_compiled_step.py --algo td3       # TD3 (or tqc), its SB3 defaults
    python benchmarks/sac_compiled_step.py --algo crossq    # CrossQ, the suite's crossq-zoo settings
    python benchmarks/sac_compiled_step.py --rounds 5 --learn-steps 1000
    python benchmarks/sac_compiled_step.py --cache /tmp/c   # compile cost with this inductor cache
                                                            # (empty: cold; second run: warm)
    python benchmarks/sac_compiled_step.py --variants eager compiled eager-bf16 compiled-bf16
                                                            # also under bf16 autocast
                                                            # (RLTrainer(precision="bf16-mixed"))
    python benchmarks/sac_compiled_step.py --algo tqc --variants compiled compiled-bf16 --ops 15
                                                            # where the step alone spends its CPU
                                                            # (torch.profiler, inductor's kernels named)

SB3's defaults: 256x256 actor and twin critics, batch 256, one gradient step per environment step (SAC: a
learned temperature; TD3: the actor and targets every second step; TQC: 2 critics of 25 quantiles). CrossQ:
rl-zoo3's Pendulum settings (the suite's crossq-zoo: 256x256 actor and critics, the actor every second
step; sb3-contrib's default 1024-wide critics cost ~125 ms per step here); its step alone includes the
actor's update.
The models are built and warmed up (a compiled one compiles on its first update), then measured in one
process, taking turns, with thread CPU time (one torch thread: other processes' load on a shared machine
does not count). The step alone: the same minibatch and noise,
the eager step against the compiled program, median microseconds per call. Inside learn: CPU
microseconds per environment step of ``learn(learn_steps)`` (collection, sampling, the update, Lightning's
fit set-up), median over rounds. The compile cost: wall and CPU seconds of the first ``learn`` of the
compiled model (warm-up steps and first update), the CPU of inductor's compile workers counted apart.
``--variants``: which models take turns (``-bf16``: trained under bf16 autocast, Lightning's
``precision="bf16-mixed"``; the step alone then runs under ``torch.autocast`` too). ``--ops N``: the step
alone once more under ``torch.profiler`` (inductor's generated kernels recorded by name,
``cpp.enable_kernel_profile``: a compile of its own), the N operators and kernels with the most self CPU
time and the matrix products' share; the profiler's own cost inflates the small kernels.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import time
import warnings
from typing import Any

import torch

clock = time.thread_time
LEARNING_STARTS = 100


CLASSES = {"sac": "SAC", "td3": "TD3", "tqc": "TQC", "crossq": "CrossQ"}
SETTINGS: dict[str, dict[str, Any]] = {
    "crossq": {"policy_delay": 2, "policy_kwargs": {"net_arch": [256, 256]}}
}


def build(algo: str, compiled: bool) -> Any:
    import lit_sb3

    return getattr(lit_sb3, CLASSES[algo])(
        "MlpPolicy",
        "Pendulum-v1",
        seed=0,
        device="cpu",
        learning_starts=LEARNING_STARTS,
        compile=compiled,
        **SETTINGS.get(algo, {}),
    )


def learn(model: Any, steps: int, precision: str) -> None:
    """``steps`` more environment steps (``learn(reset_num_timesteps=False)``; bf16: ``RLTrainer.fit``)."""
    if precision == "32-true":
        model.learn(steps, reset_num_timesteps=False)
        return
    import lit_sb3

    datamodule = model.__dict__.get("_benchmark_datamodule")
    if datamodule is None:
        datamodule = model._benchmark_datamodule = lit_sb3.RLEnvDataModule(train_env="Pendulum-v1", seed=0)
    lit_sb3.RLTrainer(
        max_steps=model.num_timesteps + steps,
        precision=precision,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    ).fit(model, datamodule=datamodule)


def autocast(precision: str) -> Any:
    """The autocast a variant's update runs under (Lightning's, for the step alone)."""
    if precision == "32-true":
        return contextlib.nullcontext()
    return torch.autocast("cpu", dtype=torch.bfloat16)


def step_arguments(model: Any, data: Any) -> tuple[Any, ...]:
    """What ``gradient_step`` takes after the minibatch: the discount, the noise, the flag that updates the
    actor (TD3, CrossQ) or the targets (SAC, TQC) this step."""
    if hasattr(model, "target_policy_noise"):  # TD3
        return (data, model.gamma, torch.randn_like(data.actions), True)
    noise = torch.randn(data.actions.shape[0], model.policy.actor.action_dim)
    return (data, model.gamma, noise, torch.randn_like(noise), True)


def step_alone(models: dict[str, tuple[Any, str]], calls: int, rounds: int) -> dict[str, float]:
    """Median CPU us per gradient step on the same minibatch and noise, the variants alternating."""
    first = next(iter(models.values()))[0]
    arguments = step_arguments(first, first.replay_buffer.sample(first.batch_size))
    timings: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(rounds):
        for name, (model, precision) in models.items():
            program, optimizers = model.update_program(), model.optimizers()
            with autocast(precision):
                start = clock()
                for _ in range(calls):
                    program(optimizers, *arguments)
                timings[name].append((clock() - start) / calls * 1e6)
    return {name: statistics.median(values) for name, values in timings.items()}


MATMULS = ("aten::mm", "aten::addmm", "aten::bmm", "mkldnn::_linear_pointwise")  # the products' operators


def operator_profile(models: dict[str, tuple[Any, str]], calls: int, top: int) -> None:
    """Self CPU time per call of the step alone by operator or inductor kernel, per variant."""
    from torch.profiler import ProfilerActivity, profile

    first = next(iter(models.values()))[0]
    arguments = step_arguments(first, first.replay_buffer.sample(first.batch_size))
    for name, (model, precision) in models.items():
        program, optimizers = model.update_program(), model.optimizers()
        with autocast(precision):
            program(optimizers, *arguments)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(calls):
                    program(optimizers, *arguments)
        rows = [(e.key, e.self_cpu_time_total / calls, e.count // calls) for e in prof.key_averages()]
        total = sum(us for _, us, _ in rows)
        matmul = sum(us for key, us, _ in rows if key in MATMULS)
        print(
            f"\n{name}: {total:.0f} us of self CPU per step under the profiler; matrix products {matmul:.0f} us"
        )
        for key, us, count in sorted(rows, key=lambda row: -row[1])[:top]:
            print(f"  {us:8.0f} us {100 * us / total:5.1f} %  x{count:<3d} {key[:100]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algo", choices=tuple(CLASSES), default="sac")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--learn-steps", type=int, default=500)
    parser.add_argument("--cache", help="inductor's cache folder (LIT_SB3_COMPILE_CACHE) for this run")
    parser.add_argument("--compile-only", action="store_true", help="measure the compile cost only")
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["eager", "compiled"],
        choices=["eager", "compiled", "eager-bf16", "compiled-bf16"],
        help="the models that take turns (the first is the ratios' base)",
    )
    parser.add_argument("--ops", type=int, default=0, metavar="N", help="the step alone's N top operators")
    args = parser.parse_args()
    if args.ops:
        import torch._inductor.config as inductor_config

        inductor_config.cpp.enable_kernel_profile = True
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
    models: dict[str, tuple[Any, str]] = {}
    for name in args.variants:
        precision = "bf16-mixed" if name.endswith("-bf16") else "32-true"
        model = compiled if name == "compiled" else build(args.algo, name.startswith("compiled"))
        if model is not compiled:
            start_wall, start_cpu = time.perf_counter(), time.process_time()
            learn(model, LEARNING_STARTS + 1, precision)
            print(
                f"first learn of {name}: wall {time.perf_counter() - start_wall:.1f} s, process CPU "
                f"{time.process_time() - start_cpu:.1f} s"
            )
        learn(model, 200, precision)  # past the first updates: Adam's state exists, caches are warm
        models[name] = (model, precision)
    alone = step_alone(models, args.calls, args.rounds)
    base = alone[args.variants[0]]
    print(
        f"one {args.algo} gradient step alone (batch 256), CPU us: "
        + ", ".join(f"{name} {us:.0f} ({base / us:.2f}x)" for name, us in alone.items())
    )
    if args.ops:
        operator_profile(models, args.calls, args.ops)
        return
    per_step: dict[str, list[float]] = {name: [] for name in models}
    for _ in range(args.rounds):
        for name, (model, precision) in models.items():
            start = clock()
            learn(model, args.learn_steps, precision)
            per_step[name].append((clock() - start) / args.learn_steps * 1e6)
    medians = {name: statistics.median(values) for name, values in per_step.items()}
    base = medians[args.variants[0]]
    print(
        f"inside learn({args.learn_steps}), CPU us per env step: "
        + ", ".join(f"{name} {us:.0f} ({base / us:.2f}x)" for name, us in medians.items())
    )
    print("rounds: " + "; ".join(f"{name} {[round(v) for v in values]}" for name, values in per_step.items()))


if __name__ == "__main__":
    main()
