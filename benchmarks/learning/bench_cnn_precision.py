"""NatureCNN on one CPU thread: float32 beside bf16 autocast and channels_last (issue 28, must-have 5).

    taskset -c 0 nice python benchmarks/learning/bench_cnn_precision.py [--rounds 3]

PPO's two CNN workloads on Atari: the rollout forward pass (batch 8 = n_envs, no gradient) and the update
(forward + backward + Adam on a batch of 256 frames 4x84x84). channels_last is tried on the input only and
on input and weights. The variants alternate within a round; the median over rounds of the CPU time
(``time.process_time``: the load of other processes does not count) is printed, and the speed-up over fp32.

Measured 2026-12-02 (2-core AMD EPYC Zen 4 with avx512_bf16, core 0, load ~8, 3 rounds; CPU ms):

    variant        fwd b8 cpu-ms     x  upd b256 cpu-ms     x
    fp32                    2.23  1.00            178.9  1.00
    bf16                    1.59  1.40             71.1  2.52
    cl-in                   2.28  0.97            156.3  1.14
    cl-in+w                 2.32  0.96            152.9  1.17
    bf16+cl-in              1.79  1.25             74.2  2.41
    bf16+cl-in+w            1.68  1.32             74.1  2.41

bf16 autocast alone is 2.5x on the update and 1.4x on the rollout forward; channels_last adds nothing to
it (alone, in fp32, 1.14-1.47x between runs), so lit-sb3 shipped the bf16 trunk (``NatureCNN(bf16=True)``)
as an option. (An earlier wall-clock run of this script at load ~10 showed channels_last helping bf16:
wall time under load measures the neighbours too.)

Measured 2026-12-06 (2-core Intel Xeon @ 2.80GHz, avx512 without avx512_bf16, core 1 beside a nice-19
ledger run, 3 rounds; CPU ms):

    variant        fwd b8 cpu-ms     x  upd b256 cpu-ms     x
    fp32                    3.79  1.00            242.3  1.00
    bf16                    7.48  0.51            415.0  0.58
    cl-in                   3.00  1.26            169.4  1.43
    cl-in+w                 3.21  1.18            162.1  1.50
    bf16+cl-in              8.32  0.46            408.8  0.59
    bf16+cl-in+w            7.15  0.53            410.6  0.59

Without native bf16 the bf16 trunk is emulated, 2x slower, while a channels-last input is 1.26x on the
rollout and 1.43x on the update. Since then the float32 NatureCNN runs channels-last on the CPU by default
(``NatureCNN(channels_last=True)``; the input alone: the weights add little on one CPU and cost on the
other): 1.14x and 1.43x on the update, 0.97x and 1.26x on the rollout forward. The variants here set the
layout themselves, on a NatureCNN built with ``channels_last=False``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from gymnasium import spaces
from torch import nn

# name: (bf16 autocast, channels_last input, channels_last weights)
VARIANTS = {
    "fp32": (False, False, False),
    "bf16": (True, False, False),
    "cl-in": (False, True, False),
    "cl-in+w": (False, True, True),
    "bf16+cl-in": (True, True, False),
    "bf16+cl-in+w": (True, True, True),
}


def _cpu_ms(fn: Callable[[], None], iters: int) -> float:
    fn()  # warm-up: oneDNN picks its kernels on the first call
    start = time.process_time()
    for _ in range(iters):
        fn()
    return 1e3 * (time.process_time() - start) / iters


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    from lit_sb3_core.nets.torch_layers import NatureCNN

    torch.manual_seed(0)
    # The variants set the memory layout themselves (the default NatureCNN runs channels-last on the CPU).
    cnn = NatureCNN(spaces.Box(0, 255, (4, 84, 84), dtype="uint8"), channels_last=False)
    heads = nn.Linear(512, 4 + 1)  # Breakout's 4 action logits and the value
    optimizer = torch.optim.Adam([*cnn.parameters(), *heads.parameters()], lr=2.5e-4)
    rollout = torch.randint(0, 256, (8, 4, 84, 84)).float() / 255.0
    batch = torch.randint(0, 256, (256, 4, 84, 84)).float() / 255.0
    times: dict[str, dict[str, list[float]]] = {name: {"forward": [], "update": []} for name in VARIANTS}
    for _ in range(args.rounds):
        for name, (bf16, cl_input, cl_weights) in VARIANTS.items():
            cnn.to(memory_format=torch.channels_last if cl_weights else torch.contiguous_format)
            fmt = torch.channels_last if cl_input else torch.contiguous_format

            def forward(bf16: bool = bf16, fmt: torch.memory_format = fmt) -> None:
                with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    heads(cnn(rollout.contiguous(memory_format=fmt)))

            def update(bf16: bool = bf16, fmt: torch.memory_format = fmt) -> None:
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    loss = heads(cnn(batch.contiguous(memory_format=fmt))).float().square().mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

            times[name]["forward"].append(_cpu_ms(forward, 10))
            times[name]["update"].append(_cpu_ms(update, 3))
    base = {kind: statistics.median(times["fp32"][kind]) for kind in ("forward", "update")}
    print(f"{'variant':14} {'fwd b8 cpu-ms':>14} {'x':>5} {'upd b256 cpu-ms':>16} {'x':>5}")
    for name in VARIANTS:
        fwd, upd = (statistics.median(times[name][kind]) for kind in ("forward", "update"))
        print(f"{name:14} {fwd:14.2f} {base['forward'] / fwd:5.2f} {upd:16.1f} {base['update'] / upd:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
