"""ARS: lit-sb3 beside sb3-contrib, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_ars.py            # full: every config, 3 seeds
    python benchmarks/bench_ars.py --quick    # CartPole only, 2 seeds

Both libraries run with ``torch.set_num_threads(1)``. Reports environment steps per second, the ratio
lit-sb3 / sb3-contrib, and the final deterministic evaluation return (10 episodes) of every run.

rl-zoo3's ``normalize: dict(norm_obs=True, norm_reward=False)`` is a VecNormalize wrapper for sb3-contrib
and ``RLEnvDataModule(normalize="observation")`` for lit-sb3 (ARS-v2: the statistics are updated once per
iteration instead of every step). With several envs, sb3-contrib runs every candidate on all of them and
scores one episode; lit-sb3 runs a different candidate on each env.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

CONFIGS: dict[str, dict[str, Any]] = {
    # rl-zoo3's tuned CartPole-v1 (the full zoo budget).
    "cartpole-zoo": {
        "env": "CartPole-v1", "n_envs": 1, "steps": 50_000, "normalize": False,
        "kwargs": {"policy": "LinearPolicy", "n_delta": 2},
    },
    # rl-zoo3's tuned Pendulum-v1, on a tenth of its 2M-step budget.
    "pendulum-zoo": {
        "env": "Pendulum-v1", "n_envs": 1, "steps": 200_000, "normalize": True,
        "kwargs": {"policy": "MlpPolicy", "learning_rate": 0.018, "n_delta": 4, "n_top": 1, "delta_std": 0.1,
                   "policy_kwargs": {"net_arch": [16]}, "zero_policy": False},
    },
    # sb3-contrib defaults (n_delta=8, MlpPolicy [64, 64]) with 4 envs.
    "cartpole-default-4env": {
        "env": "CartPole-v1", "n_envs": 4, "steps": 100_000, "normalize": False, "kwargs": {"policy": "MlpPolicy"},
    },
}  # fmt: skip


def run_contrib(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from sb3_contrib import ARS
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.vec_env import VecNormalize

    env = make_vec_env(config["env"], n_envs=config["n_envs"], seed=seed)
    if config["normalize"]:
        env = VecNormalize(env, norm_obs=True, norm_reward=False)
    kwargs = dict(config["kwargs"])
    model = ARS(kwargs.pop("policy"), env, seed=seed, device="cpu", **kwargs)
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    eval_env = make_vec_env(config["env"], n_envs=1, seed=seed + 1000)
    if config["normalize"]:
        eval_env = VecNormalize(eval_env, norm_obs=True, norm_reward=False, training=False)
        eval_env.obs_rms = env.obs_rms
    mean, _ = evaluate_policy(model, eval_env, 10)
    return fps, float(mean)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from lit_sb3 import ARS, RLEnvDataModule, evaluate_policy

    normalize = "observation" if config["normalize"] else False
    datamodule = RLEnvDataModule(
        train_env=config["env"], n_envs=config["n_envs"], normalize=normalize, seed=seed
    )
    model = ARS(seed=seed, **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env=datamodule)
    fps = model.num_timesteps / (time.perf_counter() - start)
    mean, _ = evaluate_policy(model, config["env"], 10)
    return fps, float(mean)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="cartpole-zoo only, 2 seeds")
    parser.add_argument("--steps", type=int, default=None, help="override every config's budget")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or (["cartpole-zoo"] if args.quick else list(CONFIGS))
    print(f"ARS, seeds 0..{seeds - 1}, torch threads = 1\n")
    print(
        "| config | steps | seed | sb3-contrib steps/s | lit-sb3 steps/s | ratio | sb3-contrib return | lit-sb3 return |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        steps = args.steps or config["steps"]
        ratios, returns = [], {"contrib": [], "lit": []}
        for seed in range(seeds):
            # Alternate which library goes first so warm caches and machine load favour neither.
            order = [("contrib", run_contrib), ("lit", run_lit)]
            if seed % 2:
                order.reverse()
            results = {label: fn(config, steps, seed) for label, fn in order}
            (c_fps, c_ret), (l_fps, l_ret) = results["contrib"], results["lit"]
            ratios.append(l_fps / c_fps)
            returns["contrib"].append(c_ret)
            returns["lit"].append(l_ret)
            print(
                f"| {name} | {steps} | {seed} | {c_fps:.0f} | {l_fps:.0f} | {l_fps / c_fps:.2f}x | "
                f"{c_ret:.1f} | {l_ret:.1f} |",
                flush=True,
            )
        print(
            f"| **{name}** | | median | | | **{statistics.median(ratios):.2f}x** | "
            f"{statistics.mean(returns['contrib']):.1f} (mean) | {statistics.mean(returns['lit']):.1f} (mean) |",
            flush=True,
        )


if __name__ == "__main__":
    main()
