"""From which budget does ``compile=True`` pay for itself? The numbers behind ``compile_pays_after``.

    python benchmarks/compile_payback.py                      # every case below, SB3's defaults
    python benchmarks/compile_payback.py --algos dqn --rounds 2

For each algorithm (SB3's default hyperparameters on its usual small task), three fresh processes: eager, the
compiled update with a cold inductor cache (an empty folder), and again with that cache warm. Each builds
the model, runs ``learn(first)`` (the compile happens here) and then ``learn(steady)`` more steps, timing
the process's CPU with inductor compiling in the process (``TORCHINDUCTOR_COMPILE_THREADS=1``) and the
C++ compiler runs it waits for (its children), so no compile CPU is missed. Reported:

* saving per env step: the steady part's CPU per step, eager minus compiled;
* compile cost: the compiled first ``learn`` minus the eager one, plus what its ``first`` steps saved;
* break-even: compile cost / saving, in env steps, cold and warm. ``compile="auto"`` compiles from about
  twice the cold break-even (compile_choice.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

# algorithm -> (env, first learn, steady learn); SB3's defaults otherwise.
CASES: dict[str, tuple[str, int, int]] = {
    "ppo": ("CartPole-v1", 4_096, 8_192),
    "a2c": ("CartPole-v1", 2_000, 10_000),
    "dqn": ("CartPole-v1", 2_000, 10_000),
    "sac": ("Pendulum-v1", 300, 700),
    "td3": ("Pendulum-v1", 300, 700),
    "ddpg": ("Pendulum-v1", 300, 700),
    "tqc": ("Pendulum-v1", 300, 700),
    "qrdqn": ("CartPole-v1", 2_000, 10_000),
    "crossq": ("Pendulum-v1", 300, 300),
}


def cpu_seconds() -> float:
    """This process's CPU time and its finished children's (inductor's C++ compiler runs)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def one_run(algo: str, compiled: bool) -> dict[str, float]:
    """Child process: build, ``learn(first)``, ``learn(steady)``; CPU seconds of each."""
    import torch

    torch.set_num_threads(1)
    import lit_sb3

    env, first, steady = CASES[algo]
    start = cpu_seconds()
    model = lit_sb3.get_algo_class(algo)("MlpPolicy", env, seed=0, device="cpu", compile=compiled)
    model.learn(first)
    first_cpu = cpu_seconds() - start
    start = cpu_seconds()
    model.learn(steady, reset_num_timesteps=False)
    return {"first": first_cpu, "steady": cpu_seconds() - start}


def measure(algo: str, mode: str, cache: str) -> dict[str, float]:
    env = dict(
        os.environ, TORCHINDUCTOR_COMPILE_THREADS="1", LIT_SB3_COMPILE_CACHE=cache, OMP_NUM_THREADS="1"
    )
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    out = subprocess.run(
        [sys.executable, __file__, "--child", algo, mode], env=env, check=True, capture_output=True, text=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algos", nargs="+", default=list(CASES), choices=list(CASES))
    parser.add_argument("--rounds", type=int, default=1, help="cold/warm/eager triples per algorithm")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        algo, mode = args.child
        print(json.dumps(one_run(algo, mode != "eager")))
        return

    print(
        "| algorithm | env | eager us/step | compiled us/step | saving us/step | compile cost cold / warm (CPU s) "
        "| break-even cold / warm (env steps) |"
    )
    print("|---|---|--:|--:|--:|--:|--:|")
    for algo in args.algos:
        env, first, steady = CASES[algo]
        rows: dict[str, list[dict[str, float]]] = {"eager": [], "cold": [], "warm": []}
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as cache:
                for mode in ("cold", "eager", "warm"):  # warm reads what cold wrote
                    rows[mode].append(measure(algo, mode, cache))
                    print(f"  {algo} {mode}: {rows[mode][-1]}", file=sys.stderr)

        def med(mode: str, key: str, rows: dict[str, list[dict[str, float]]] = rows) -> float:
            return statistics.median(r[key] for r in rows[mode])

        eager_step = med("eager", "steady") / steady
        compiled_step = statistics.median([med("cold", "steady"), med("warm", "steady")]) / steady
        saving = eager_step - compiled_step
        costs = {m: med(m, "first") - med("eager", "first") + first * saving for m in ("cold", "warm")}
        even = {m: costs[m] / saving if saving > 0 else float("inf") for m in costs}
        print(
            f"| {algo} | {env} | {eager_step * 1e6:,.0f} | {compiled_step * 1e6:,.0f} | {saving * 1e6:,.0f} "
            f"| {costs['cold']:.1f} / {costs['warm']:.1f} | {even['cold']:,.0f} / {even['warm']:,.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
