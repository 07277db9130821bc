"""Does ``torch.compile`` of a whole gradient step pay for itself? Compile time against time saved.

    python benchmarks/compile_cost.py                  # DQN (64x64, batch 32) and SAC (256x256, batch 256)
    python benchmarks/compile_cost.py --steps 300 --mode max-autotune-no-cudagraphs

One gradient step as users would get it compiled: forward passes, loss, backward and the fused Adam step
in one function (``torch.compile`` of the closure, optimizer step included), on lit-sb3's own networks
with the benchmark cases' sizes and random replay-like data. Reports the compile time (the first call),
CPU milliseconds per step eager and compiled (medians, alternating), and the break-even: how many gradient
steps a run needs before compiling has paid back its compile time. rl-zoo3's budgets are 12.5k gradient
steps for DQN on CartPole (50k env steps, train_freq 4) and 20k for SAC on Pendulum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

clock = time.thread_time  # one torch thread; other processes' load does not count


def dqn_step(batch: int = 32) -> tuple[Callable[[], Any], str]:
    from gymnasium import spaces

    from lit_sb3_core.nets.off_policy_policies import QNetwork
    from lit_sb3_core.nets.torch_layers import FlattenExtractor

    space = spaces.Box(-1, 1, (4,))
    q_net, target = (QNetwork(FlattenExtractor(space), 2, [64, 64]) for _ in range(2))
    target.requires_grad_(False)
    optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-4, fused=True)
    obs, next_obs = torch.randn(batch, 4), torch.randn(batch, 4)
    actions, rewards, dones = torch.randint(0, 2, (batch, 1)), torch.randn(batch, 1), torch.zeros(batch, 1)

    def step() -> torch.Tensor:
        with torch.no_grad():
            target_q = rewards + (1 - dones) * 0.99 * target(next_obs).amax(dim=1, keepdim=True)
        loss = F.smooth_l1_loss(q_net(obs).gather(1, actions), target_q)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(q_net.parameters(), 10.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.detach()

    return step, f"DQN update (64x64 Q-network, batch {batch})"


def sac_step(batch: int = 256) -> tuple[Callable[[], Any], str]:
    from gymnasium import spaces

    from lit_sb3_core.nets.off_policy_policies import ContinuousCritic, SquashedGaussianActor
    from lit_sb3_core.nets.torch_layers import FlattenExtractor

    space = spaces.Box(-1, 1, (3,))
    actor = SquashedGaussianActor(FlattenExtractor(space), 1, [256, 256])
    critic = ContinuousCritic(FlattenExtractor(space), 1, [256, 256])
    target = critic.make_target()
    log_alpha = torch.zeros(1, requires_grad=True)
    optimizers = [
        torch.optim.Adam(params, lr=3e-4, fused=True)
        for params in (actor.parameters(), critic.parameters(), [log_alpha])
    ]
    obs, next_obs = torch.randn(batch, 3), torch.randn(batch, 3)
    actions, rewards, dones = torch.rand(batch, 1) * 2 - 1, torch.randn(batch, 1), torch.zeros(batch, 1)

    def step() -> torch.Tensor:
        actions_pi, log_prob = actor.action_log_prob(obs)
        log_prob = log_prob.reshape(-1, 1)
        alpha_loss = -(log_alpha * (log_prob - 1.0).detach()).mean()
        alpha = log_alpha.detach().exp()
        with torch.no_grad():
            next_actions, next_log_prob = actor.action_log_prob(next_obs)
            next_q = torch.cat(target(next_obs, next_actions), dim=1).amin(dim=1, keepdim=True)
            target_q = rewards + (1 - dones) * 0.99 * (next_q - alpha * next_log_prob.reshape(-1, 1))
        critic_loss = 0.5 * sum(F.mse_loss(q, target_q) for q in critic(obs, actions))
        alpha_loss.backward(inputs=[log_alpha])
        optimizers[2].step()
        critic_loss.backward(inputs=list(critic.parameters()))
        optimizers[1].step()
        # The actor climbs the updated critics (SB3's order); gradients flow into the actor only.
        q_pi = torch.cat(critic(obs, actions_pi), dim=1).amin(dim=1, keepdim=True)
        actor_loss = (alpha * log_prob - q_pi).mean()
        actor_loss.backward(inputs=list(actor.parameters()))
        optimizers[0].step()
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(list(target.parameters()), list(critic.parameters()), 0.005)
        return critic_loss.detach()

    return step, f"SAC update (256x256 actor and twin critics, batch {batch})"


def measure(step: Callable[[], Any], steps: int, repeats: int, mode: str | None) -> dict[str, float]:
    compiled = torch.compile(step, mode=mode)
    start = time.perf_counter()
    compiled()  # compiles (forward, backward and optimizer graphs)
    compile_s = time.perf_counter() - start
    for _ in range(3):
        compiled()
        step()
    times: dict[str, list[float]] = {"eager": [], "compiled": []}
    for _ in range(repeats):
        for name, function in (("eager", step), ("compiled", compiled)):
            start = clock()
            for _ in range(steps):
                function()
            times[name].append((clock() - start) / steps)
    eager, fast = statistics.median(times["eager"]), statistics.median(times["compiled"])
    return {"compile_s": compile_s, "eager_ms": eager * 1e3, "compiled_ms": fast * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=200, help="gradient steps per timing")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--mode", default=None, help="torch.compile mode (default: torch's default)")
    parser.add_argument("--which", nargs="+", default=["dqn", "sac"], choices=["dqn", "sac"])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, 1 thread, torch.compile(mode={args.mode!r})\n")
    print(
        "| update | compile (s, wall) | eager (CPU ms/step) | compiled (CPU ms/step) | speed-up | break-even steps |"
    )
    print("|---|--:|--:|--:|--:|--:|")
    for which in args.which:
        step, label = dqn_step() if which == "dqn" else sac_step()
        result = measure(
            step, args.steps if which == "dqn" else max(20, args.steps // 10), args.repeats, args.mode
        )
        saved = (result["eager_ms"] - result["compiled_ms"]) / 1e3
        even = f"{result['compile_s'] / saved:,.0f}" if saved > 0 else "never"
        print(
            f"| {label} | {result['compile_s']:.1f} | {result['eager_ms']:.3f} | {result['compiled_ms']:.3f} "
            f"| {result['eager_ms'] / result['compiled_ms']:.2f}x | {even} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
