"""What bounds each quick benchmark case: arithmetic (FLOPs per env step against a measured one-thread
peak) or dispatch (eager operators per env step).

    python benchmarks/limits.py            # the --quick cases: ppo-zoo-8env a2c-zoo-cartpole dqn-default sac-default

FLOPs are counted by torch's ``FlopCounterMode`` and operators by a dispatch mode, both over a whole
``learn`` of lit-sb3 (collection and updates, eager), divided by the env steps. The peak is a one-thread
float32 matmul of the networks' width (thread CPU time). ``FLOPs / peak`` is the time the arithmetic alone
needs per env step; what a run measures beyond it is the price of running the operators one by one.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite.cases import QUICK, by_name


class OperatorCount(TorchDispatchMode):
    """Counts every aten operator call (forward, backward and optimizer alike)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        self.calls += 1
        return func(*args, **(kwargs or {}))


def peak_gflops(width: int, rows: int = 256, repeats: int = 200) -> float:
    """One-thread float32 GFLOP/s of a (rows x width) @ (width x width) matmul, thread CPU time."""
    a, b = torch.randn(rows, width), torch.randn(width, width)
    for _ in range(10):
        a @ b
    start = time.thread_time()
    for _ in range(repeats):
        a @ b
    return 2 * rows * width * width * repeats / (time.thread_time() - start) / 1e9


def measure(name: str, steps: int) -> tuple[float, float]:
    """(FLOPs, operators) per env step of lit-sb3's ``learn(steps)`` on the case, after a warm-up."""
    import lit_sb3
    from lit_sb3.common.env_util import make_vec_env

    case = by_name(name)
    cls = getattr(lit_sb3, case.sb3.split(":")[1])
    env = make_vec_env(case.env, n_envs=case.n_envs, seed=0)
    model = cls(case.policy, env, seed=0, device="cpu", **case.hyperparams)
    model.learn(256)  # past learning_starts (off-policy: no updates before it) and the first fit's set-up
    counter, flops = OperatorCount(), FlopCounterMode(display=False)
    with flops, counter:
        model.learn(steps, reset_num_timesteps=False)
    return flops.get_total_flops() / steps, counter.calls / steps


def main() -> None:
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    budgets = {"ppo-zoo-8env": 2048, "a2c-zoo-cartpole": 2000, "dqn-default": 2000, "sac-default": 300}
    widths = {"sac-default": 256}
    print(
        "| case | FLOPs / env step | one-thread peak GFLOP/s | FLOPs / peak, us / env step | operators / env step |"
    )
    print("|---|--:|--:|--:|--:|")
    for name in QUICK:
        if by_name(name).lit_hyperparams:  # a variant of a case above (compile=True): eager operators only
            continue
        per_step, operators = measure(name, budgets[name])
        peak = peak_gflops(widths.get(name, 64))
        print(
            f"| {name} | {per_step / 1e6:.2f} M | {peak:.1f} | {per_step / peak / 1e3:.1f} | {operators:.0f} |"
        )


if __name__ == "__main__":
    main()
