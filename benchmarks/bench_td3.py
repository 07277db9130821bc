"""TD3: lit-sb3 beside Stable-Baselines3, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_td3.py            # rl-zoo3's Pendulum-v1 budget (20k steps), 2 seeds
    python benchmarks/bench_td3.py --quick    # 3k steps, 1 seed, SB3 defaults: speed only

Both libraries run with ``torch.set_num_threads(1)``. Reports environment steps per second of each run
(wall clock; the CPU-time ratio beside it is steadier on a shared machine),
the ratio lit-sb3 / SB3 (median) and the final deterministic evaluation return of every run, measured by
the same evaluator on identically seeded environments. TD3 takes one critic update per environment step
and an actor update every second one (400x300 networks, batch 256), so matrix multiplies dominate; the
rl-zoo3 entry spends its first 10k steps acting at random (identical work in both libraries).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import torch

CONFIGS: dict[str, dict[str, Any]] = {
    # SB3's TD3 defaults (no exploration noise, learning_starts=100).
    "default": {"env": "Pendulum-v1", "kwargs": {}},
    # rl-zoo3's Pendulum-v1 entry.
    "pendulum-zoo": {
        "env": "Pendulum-v1",
        "kwargs": {
            "gamma": 0.98,
            "buffer_size": 200_000,
            "learning_starts": 10_000,
            "action_noise": {"type": "normal", "sigma": 0.1},
            "gradient_steps": 1,
            "train_freq": 1,
            "learning_rate": 1e-3,
            "policy_kwargs": {"net_arch": [400, 300]},
        },
    },
}


def _sb3_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """SB3 takes a noise object where lit-sb3 takes a plain spec."""
    from stable_baselines3.common.noise import NormalActionNoise

    out = dict(kwargs)
    spec = out.pop("action_noise", None)
    if spec is not None:
        out["action_noise"] = NormalActionNoise(mean=np.zeros(1), sigma=np.full(1, spec["sigma"]))
    return out


def evaluate(model: Any, env_id: str, seed: int, episodes: int = 10) -> float:
    """The same evaluator for both libraries: deterministic episodes on a seeded env."""
    env = gym.make(env_id)
    returns = []
    for episode in range(episodes):
        obs, _ = env.reset(seed=seed + episode)
        done, total = False, 0.0
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    env.close()
    return float(np.mean(returns))


def run_sb3(config: dict[str, Any], steps: int, seed: int) -> tuple[tuple[float, float], float]:
    from stable_baselines3 import TD3

    model = TD3("MlpPolicy", config["env"], seed=seed, device="cpu", **_sb3_kwargs(config["kwargs"]))
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    fps = (
        model.num_timesteps / (time.perf_counter() - wall),
        model.num_timesteps / (time.process_time() - cpu),
    )
    return fps, evaluate(model, config["env"], 10_000 + seed)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[tuple[float, float], float]:
    from lit_sb3_td3 import TD3

    model = TD3("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps, env=config["env"])
    fps = (
        model.num_timesteps / (time.perf_counter() - wall),
        model.num_timesteps / (time.process_time() - cpu),
    )
    return fps, evaluate(model, config["env"], 10_000 + seed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="3k steps, 1 seed, SB3 defaults")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    steps = args.steps or (3_000 if args.quick else 20_000)
    seeds = args.seeds or (1 if args.quick else 2)
    names = args.configs or (["default"] if args.quick else list(CONFIGS))
    print(f"TD3, {steps} steps per run, seeds 0..{seeds - 1}, torch threads = 1\n")
    print(
        "| config | seed | SB3 steps/s | lit-sb3 steps/s | ratio | CPU-time ratio | SB3 return | lit-sb3 return |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        ratios, cpu_ratios = [], []
        for seed in range(seeds):
            # Alternate which library goes first so warm caches and machine load favour neither.
            order = [("sb3", run_sb3), ("lit", run_lit)]
            if seed % 2:
                order.reverse()
            results = {label: fn(config, steps, seed) for label, fn in order}
            ((sb3_fps, sb3_cpu), sb3_ret), ((lit_fps, lit_cpu), lit_ret) = results["sb3"], results["lit"]
            ratios.append(lit_fps / sb3_fps)
            cpu_ratios.append(lit_cpu / sb3_cpu)
            print(
                f"| {name} | {seed} | {sb3_fps:.1f} | {lit_fps:.1f} | {lit_fps / sb3_fps:.2f}x | "
                f"{lit_cpu / sb3_cpu:.2f}x | {sb3_ret:.1f} | {lit_ret:.1f} |",
                flush=True,
            )
        print(
            f"| **{name} median** | | | | **{statistics.median(ratios):.2f}x** | "
            f"**{statistics.median(cpu_ratios):.2f}x** | | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
