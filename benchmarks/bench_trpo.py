"""TRPO: lit-sb3 beside sb3-contrib, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_trpo.py            # full: rl-zoo3 budgets (100k steps each), 3 seeds
    python benchmarks/bench_trpo.py --quick    # a couple of minutes

Both libraries run with ``torch.set_num_threads(1)``. Reports environment steps per second of each run,
the ratio lit-sb3 / sb3-contrib (median per config), and the final deterministic evaluation return of every
run, measured by the same evaluator on identically seeded environments. TRPO's time goes mostly into the
update (conjugate gradients with Hessian-vector products, line search, critic epochs).
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

CONFIGS: dict[str, dict[str, Any]] = {
    # rl-zoo3's tuned CartPole-v1 hyperparameters.
    "cartpole-zoo": {
        "env": "CartPole-v1",
        "n_envs": 2,
        "steps": 100_000,
        "kwargs": {
            "n_steps": 512,
            "batch_size": 512,
            "cg_damping": 1e-3,
            "gae_lambda": 0.98,
            "gamma": 0.99,
            "learning_rate": 1e-3,
            "n_critic_updates": 20,
        },
    },
    # rl-zoo3's tuned Pendulum-v1 hyperparameters (gSDE).
    "pendulum-zoo": {
        "env": "Pendulum-v1",
        "n_envs": 2,
        "steps": 100_000,
        "kwargs": {
            "n_steps": 1024,
            "gamma": 0.9,
            "n_critic_updates": 15,
            "use_sde": True,
            "sde_sample_freq": 4,
        },
    },
}


def evaluate(model: Any, env_id: str, seed: int) -> float:
    """The same evaluator for both libraries: 10 deterministic episodes on a seeded env."""
    import gymnasium as gym

    from lit_sb3 import evaluate_policy

    env = gym.make(env_id)
    env.reset(seed=seed + 1000)
    mean, _ = evaluate_policy(model, env, n_eval_episodes=10)
    return float(mean)


def run_sb3(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from sb3_contrib import TRPO
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(config["env"], n_envs=config["n_envs"], seed=seed)
    model = TRPO("MlpPolicy", env, seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    return fps, evaluate(model, config["env"], seed)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from lit_sb3 import TRPO

    model = TRPO("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env=config["env"], n_envs=config["n_envs"])
    fps = model.num_timesteps / (time.perf_counter() - start)
    return fps, evaluate(model, config["env"], seed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="30k steps, 2 seeds")
    parser.add_argument("--steps", type=int, default=None, help="override every config's step budget")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or list(CONFIGS)
    print(f"TRPO, seeds 0..{seeds - 1}, torch threads = 1\n")
    print(
        "| config | steps | seed | sb3-contrib steps/s | lit-sb3 steps/s | ratio | sb3-contrib return | lit-sb3 return |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        steps = args.steps or (30_000 if args.quick else config["steps"])
        ratios, returns = [], {"sb3": [], "lit": []}
        for seed in range(seeds):
            # Alternate which library goes first so warm caches and machine load favour neither.
            order = [("sb3", run_sb3), ("lit", run_lit)]
            if seed % 2:
                order.reverse()
            results = {label: fn(config, steps, seed) for label, fn in order}
            (sb3_fps, sb3_ret), (lit_fps, lit_ret) = results["sb3"], results["lit"]
            ratios.append(lit_fps / sb3_fps)
            returns["sb3"].append(sb3_ret)
            returns["lit"].append(lit_ret)
            print(
                f"| {name} | {steps} | {seed} | {sb3_fps:.0f} | {lit_fps:.0f} | {lit_fps / sb3_fps:.2f}x | "
                f"{sb3_ret:.1f} | {lit_ret:.1f} |",
                flush=True,
            )
        print(
            f"| **{name}** | | median | | | **{statistics.median(ratios):.2f}x** | "
            f"**{statistics.mean(returns['sb3']):.1f}** | **{statistics.mean(returns['lit']):.1f}** |",
            flush=True,
        )


if __name__ == "__main__":
    main()
