"""DQN: lit-sb3 beside Stable-Baselines3, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_dqn.py            # both configs, 50k steps per run, 3 seeds
    python benchmarks/bench_dqn.py --quick    # a couple of minutes

Both libraries run with ``torch.set_num_threads(1)``. Reports environment steps per second of each run
(wall clock; the CPU-time ratio beside it is steadier on a shared machine),
the ratio lit-sb3 / SB3 (median per config) and the final deterministic evaluation return of every run,
measured by the same evaluator on identically seeded environments. With SB3's defaults DQN takes one
gradient step every 4 environment steps, so per-step overhead (acting, storing, Lightning's loop)
dominates; rl-zoo3's CartPole settings do half a gradient step per environment step on a 256x256 network.
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
    # SB3's DQN defaults (learning_starts=100, train_freq=4, batch 32, lr 1e-4, [64, 64]).
    "default": {"env": "CartPole-v1", "kwargs": {}},
    # rl-zoo3's tuned CartPole-v1 hyperparameters.
    "cartpole-zoo": {
        "env": "CartPole-v1",
        "kwargs": {
            "learning_rate": 2.3e-3,
            "batch_size": 64,
            "buffer_size": 100_000,
            "learning_starts": 1000,
            "gamma": 0.99,
            "target_update_interval": 10,
            "train_freq": 256,
            "gradient_steps": 128,
            "exploration_fraction": 0.16,
            "exploration_final_eps": 0.04,
            "policy_kwargs": {"net_arch": [256, 256]},
        },
    },
}


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
    from stable_baselines3 import DQN

    model = DQN("MlpPolicy", config["env"], seed=seed, device="cpu", **config["kwargs"])
    wall, cpu = time.perf_counter(), time.process_time()
    model.learn(total_timesteps=steps)
    fps = (
        model.num_timesteps / (time.perf_counter() - wall),
        model.num_timesteps / (time.process_time() - cpu),
    )
    return fps, evaluate(model, config["env"], 10_000 + seed)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[tuple[float, float], float]:
    from lit_sb3_dqn import DQN

    model = DQN("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
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
    parser.add_argument("--quick", action="store_true", help="20k steps, 2 seeds")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    steps = args.steps or (20_000 if args.quick else 50_000)
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or list(CONFIGS)
    print(f"DQN, {steps} steps per run, seeds 0..{seeds - 1}, torch threads = 1\n")
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
                f"| {name} | {seed} | {sb3_fps:.0f} | {lit_fps:.0f} | {lit_fps / sb3_fps:.2f}x | "
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
