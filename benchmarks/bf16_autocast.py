"""Micro-benchmark: one gradient step of an MLP or a CNN policy network in fp32 and under bf16 autocast.

    taskset -c 0 python benchmarks/bf16_autocast.py                # every network below, Markdown to stdout
    taskset -c 0 python benchmarks/bf16_autocast.py --repeats 9 --calls 50

A step is what an update does per network: forward, a squared loss, backward, a fused Adam step; under
``torch.autocast("cpu", dtype=torch.bfloat16)`` as Lightning's ``precision="bf16-mixed"`` runs it (weights,
gradients and optimizer state stay fp32). Both precisions alternate ``--repeats`` times, ``--calls`` steps
each, in CPU time of this thread (``time.thread_time``: other processes' load does not count). Reports
milliseconds per step, median (min-max), and the speed-up.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from typing import Any

from suite.timing import alternating_thread_times

# name: (what it stands for, builder of (network, input batch))
NETWORKS = ["mlp-256", "mlp-64", "nature-cnn"]


def _network(name: str) -> tuple[str, Any, Any]:
    import torch
    from gymnasium import spaces

    from lit_sb3_core.nets.off_policy_policies import create_mlp
    from lit_sb3_core.nets.torch_layers import NatureCNN

    torch.manual_seed(0)
    if name == "mlp-256":  # a SAC/TD3 critic on Pendulum with SB3's defaults
        return "SAC critic 256x256, batch 256", create_mlp(4, 1, [256, 256]), torch.randn(256, 4)
    if name == "mlp-64":  # PPO/DQN's default 64x64 network on CartPole
        return "PPO/DQN 64x64, batch 64", create_mlp(4, 2, [64, 64]), torch.randn(64, 4)
    space = spaces.Box(0, 255, (4, 84, 84), dtype="uint8")  # Atari frames after SB3's wrappers
    net = torch.nn.Sequential(NatureCNN(space, 512), torch.nn.Linear(512, 6))
    return "NatureCNN on 4x84x84, batch 32", net, torch.rand(32, 4, 84, 84)


def _step(net: Any, x: Any, bf16: bool) -> Callable[[], None]:
    import torch

    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4, fused=True)

    def run() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = net(x).float().square().mean()
        loss.backward()
        optimizer.step()

    return run


def measure(name: str, repeats: int, calls: int) -> str:
    import copy

    label, net, x = _network(name)
    runs = {"fp32": _step(net, x, False), "bf16": _step(copy.deepcopy(net), x, True)}
    seconds = alternating_thread_times(runs, repeats, calls, warmup=max(3, calls // 5))
    times = {key: [value * 1e3 for value in values] for key, values in seconds.items()}
    med = {key: statistics.median(values) for key, values in times.items()}
    cells = [f"{med[key]:.3f} ({min(times[key]):.3f}-{max(times[key]):.3f})" for key in runs]
    return f"| {label} | " + " | ".join(cells) + f" | {med['fp32'] / med['bf16']:.2f}x |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--networks", nargs="+", default=NETWORKS, choices=NETWORKS)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    print(
        f"torch {torch.__version__}, 1 thread, CPU ms per gradient step, median (min-max) of {args.repeats}\n"
    )
    print("| network | fp32 ms | bf16 autocast ms | speed-up |")
    print("|---|--:|--:|--:|")
    for name in args.networks:
        print(measure(name, args.repeats, args.calls), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    sys.exit(main())
