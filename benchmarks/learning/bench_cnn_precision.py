"""NatureCNN on one CPU thread: float32 beside bf16 autocast and channels_last (issue 28, item 5).

    taskset -c 0 nice python benchmarks/learning/bench_cnn_precision.py [--rounds 3] [--iters 20]

PPO's two CNN workloads on Atari: the rollout forward pass (batch 8 = n_envs, no gradient) and the
update (forward + backward + Adam on a batch of 256). Each variant runs ``--iters`` iterations per round,
the variants alternate within a round, and the median over rounds is printed as ms per call and as the
speed-up over float32. Only timing: whether bf16 learns as well is the ledger's question, not this one's.

Measured 2026-12-01 (this 2-core AMD machine with avx512_bf16, core 0, load ~10, 3 rounds x 12 iterations):

    variant                 forward b8 ms      x  update b256 ms      x
    fp32                            10.56   1.00           548.2   1.00
    bf16 autocast                    8.13   1.30           229.1   2.39
    channels_last                   10.26   1.03           361.6   1.52
    bf16 + channels_last             5.12   2.06           166.1   3.30

bf16 autocast with channels_last weights and inputs is 2x on the rollout forward pass and 3.3x on the
update: the convolutions leave MKL's generic fp32 path for oneDNN's bf16 kernels.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from gymnasium import spaces
from torch import nn

VARIANTS = {
    "fp32": (False, False),
    "bf16 autocast": (True, False),
    "channels_last": (False, True),
    "bf16 + channels_last": (True, True),
}


def _net() -> tuple[nn.Module, nn.Module]:
    from lit_sb3_core.nets.torch_layers import NatureCNN

    space = spaces.Box(0, 255, (4, 84, 84), dtype="uint8")
    torch.manual_seed(0)
    cnn = NatureCNN(space, features_dim=512)
    heads = nn.Linear(512, 4 + 1)  # Breakout's 4 action logits and the value
    return cnn, heads


def _timed(fn: Callable[[], None], iters: int) -> float:
    fn()  # warm-up: oneDNN picks its kernels on the first call
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    return 1e3 * (time.perf_counter() - start) / iters


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(1)
    cnn, heads = _net()
    optimizer = torch.optim.Adam([*cnn.parameters(), *heads.parameters()], lr=2.5e-4)
    rollout = torch.randint(0, 256, (8, 4, 84, 84), dtype=torch.uint8).float() / 255.0
    batch = torch.randint(0, 256, (256, 4, 84, 84), dtype=torch.uint8).float() / 255.0
    times: dict[str, dict[str, list[float]]] = {name: {"forward": [], "update": []} for name in VARIANTS}
    for _ in range(args.rounds):
        for name, (bf16, channels_last) in VARIANTS.items():
            fmt = torch.channels_last if channels_last else torch.contiguous_format
            cnn.to(memory_format=fmt)
            obs8, obs256 = rollout.contiguous(memory_format=fmt), batch.contiguous(memory_format=fmt)

            def forward(obs: torch.Tensor = obs8, bf16: bool = bf16) -> None:
                with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    heads(cnn(obs))

            def update(obs: torch.Tensor = obs256, bf16: bool = bf16) -> None:
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    loss = heads(cnn(obs)).float().square().mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

            times[name]["forward"].append(_timed(forward, args.iters))
            times[name]["update"].append(_timed(update, max(args.iters // 4, 2)))
    base = {kind: statistics.median(times["fp32"][kind]) for kind in ("forward", "update")}
    print(f"{'variant':22} {'forward b8 ms':>14} {'x':>6} {'update b256 ms':>15} {'x':>6}")
    for name in VARIANTS:
        fwd, upd = (statistics.median(times[name][kind]) for kind in ("forward", "update"))
        print(f"{name:22} {fwd:14.2f} {base['forward'] / fwd:6.2f} {upd:15.1f} {base['update'] / upd:6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
