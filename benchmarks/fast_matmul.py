"""Micro-benchmark: an fp32 Linear forward+backward on torch's default path against the oneDNN route.

    taskset -c 0 python benchmarks/fast_matmul.py                 # the sizes below, Markdown to stdout
    taskset -c 0 python benchmarks/fast_matmul.py --sizes 256x256x256 --repeats 9

Each size (batch x in x out) runs both paths in turn, ``--repeats`` times, ``--calls`` forward+backward
passes each, timed in CPU time of this thread (``time.thread_time``: other processes' load on a shared
machine does not count). Reports microseconds per forward+backward (median, min-max) and the speed-up,
plus GFLOP/s (a forward+backward is 3 matrix products of 2 x batch x in x out FLOPs each).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable

from suite.timing import alternating_thread_times

DEFAULT_SIZES = ["32x64x64", "64x64x64", "256x64x64", "64x256x256", "256x256x256", "256x256x1"]


def _step(layer: object, x: object, route: bool) -> Callable[[], None]:
    import torch

    from lit_sb3_core.nets import fast_matmul

    assert isinstance(layer, torch.nn.Linear) and isinstance(x, torch.Tensor)

    def run() -> None:
        layer.weight.grad = layer.bias.grad = None
        out = fast_matmul.linear(x, layer.weight, layer.bias) if route else layer(x)
        out.sum().backward()

    return run


def _microseconds(seconds: dict[str, list[float]]) -> dict[str, list[float]]:
    return {name: [value * 1e6 for value in values] for name, values in seconds.items()}


def measure(size: str, repeats: int, calls: int) -> str:
    import torch

    batch, n_in, n_out = (int(part) for part in size.split("x"))
    layer = torch.nn.Linear(n_in, n_out)
    x = torch.randn(batch, n_in, requires_grad=True)
    runs = {"torch": _step(layer, x, False), "oneDNN": _step(layer, x, True)}
    times = _microseconds(alternating_thread_times(runs, repeats, calls, warmup=max(3, calls // 10)))
    flops = 3 * 2 * batch * n_in * n_out
    med = {name: statistics.median(values) for name, values in times.items()}
    cells = [
        f"{med[name]:.1f} ({min(times[name]):.1f}-{max(times[name]):.1f}) | {flops / med[name] / 1e3:.0f}"
        for name in runs
    ]
    return f"| {size} | " + " | ".join(cells) + f" | {med['torch'] / med['oneDNN']:.2f}x |"


def measure_product(size: str, repeats: int, calls: int) -> str:
    """One forward product alone: MKL's ``addmm``, oneDNN's linear, and ``addmm`` in bf16 (best and median)."""
    import torch

    from lit_sb3_core.nets import fast_matmul

    batch, n_in, n_out = (int(part) for part in size.split("x"))
    x, weight, bias = torch.randn(batch, n_in), torch.randn(n_out, n_in), torch.randn(n_out)
    low = [t.bfloat16() for t in (x, weight, bias)]
    runs: dict[str, Callable[[], object]] = {
        "MKL": lambda: torch.addmm(bias, x, weight.t()),
        "oneDNN": lambda: fast_matmul._onednn(x, weight, bias),
        "bf16": lambda: torch.addmm(low[2], low[0], low[1].t()),
    }
    times = _microseconds(alternating_thread_times(runs, repeats, calls, warmup=max(3, calls // 10)))
    flops = 2 * batch * n_in * n_out
    cells = [
        f"{statistics.median(v):.1f} ({min(v):.1f}) | {flops / statistics.median(v) / 1e3:.0f}"
        f" ({flops / min(v) / 1e3:.0f})"
        for v in times.values()
    ]
    return f"| {size} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES, help="batch x in x out")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    import os

    os.environ["LIT_SB3_FAST_MATMUL"] = "1"  # the route on even where the policy would keep it off
    import torch

    from lit_sb3_core.nets import fast_matmul

    torch.set_num_threads(1)
    fast_matmul.MIN_FLOPS = 0  # every size through the route, to find where it pays
    if not fast_matmul.available():
        print("the oneDNN route is not available in this torch")
        return 1
    print(
        f"torch {torch.__version__}, 1 thread, CPU us per forward+backward, median (min-max) of {args.repeats}\n"
    )
    print("| batch x in x out | torch us | torch GFLOP/s | oneDNN us | oneDNN GFLOP/s | speed-up |")
    print("|---|--:|--:|--:|--:|--:|")
    for size in args.sizes:
        print(measure(size, args.repeats, args.calls), flush=True)
    print("\nOne forward product alone, CPU us median (best) and GFLOP/s median (best):\n")
    print("| batch x in x out | MKL us | MKL GFLOP/s | oneDNN us | oneDNN GFLOP/s | bf16 us | bf16 GFLOP/s |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for size in args.sizes:
        print(measure_product(size, args.repeats, args.calls), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent.parent))
    sys.exit(main())
