"""PPO: lit-sb3 beside Stable-Baselines3, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_ppo.py            # full: 100k steps per run, 3 seeds
    python benchmarks/bench_ppo.py --quick    # a few minutes

Both libraries run with ``torch.set_num_threads(1)`` (fastest for 64x64 networks on this CPU, and the
same for both). Reports median environment steps per second, the ratio lit-sb3 / SB3, and the final
deterministic evaluation return of every run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

CONFIGS: dict[str, dict[str, Any]] = {
    # rl-zoo3's tuned CartPole-v1 hyperparameters (the learning target of issue 2).
    "zoo-8env": {
        "n_envs": 8,
        "kwargs": {
            "n_steps": 32,
            "batch_size": 256,
            "gae_lambda": 0.8,
            "gamma": 0.98,
            "n_epochs": 20,
            "ent_coef": 0.0,
            "learning_rate": "lin_0.001",
            "clip_range": "lin_0.2",
        },
    },
    # SB3 defaults with 8 envs (n_steps=2048, batch 64, 10 epochs).
    "default-8env": {"n_envs": 8, "kwargs": {}},
    # SB3 defaults with one env.
    "default-1env": {"n_envs": 1, "kwargs": {}},
}


def _sb3_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """SB3 takes schedules as callables; turn rl-zoo3 'lin_x' strings into them."""
    from stable_baselines3.common.utils import LinearSchedule

    out = dict(kwargs)
    for key in ("learning_rate", "clip_range"):
        value = out.get(key)
        if isinstance(value, str) and value.startswith("lin_"):
            out[key] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    return out


def run_sb3(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    env = make_vec_env("CartPole-v1", n_envs=config["n_envs"], seed=seed)
    model = PPO("MlpPolicy", env, seed=seed, device="cpu", **_sb3_kwargs(config["kwargs"]))
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    mean, _ = evaluate_policy(model, make_vec_env("CartPole-v1", n_envs=1, seed=seed + 1000), 10)
    return fps, float(mean)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from lit_sb3 import PPO, evaluate_policy

    model = PPO("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env="CartPole-v1", n_envs=config["n_envs"])
    fps = model.num_timesteps / (time.perf_counter() - start)
    mean, _ = evaluate_policy(model, "CartPole-v1", 10)
    return fps, float(mean)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="20k steps, 2 seeds, zoo config only")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    steps = args.steps or (20_000 if args.quick else 100_000)
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or (["zoo-8env"] if args.quick else list(CONFIGS))
    print(f"PPO CartPole-v1, {steps} steps per run, seeds 0..{seeds - 1}, torch threads = 1\n")
    print("| config | seed | SB3 steps/s | lit-sb3 steps/s | ratio | SB3 return | lit-sb3 return |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        ratios = []
        for seed in range(seeds):
            # Alternate which library goes first so warm caches and machine load favour neither.
            order = [("sb3", run_sb3), ("lit", run_lit)]
            if seed % 2:
                order.reverse()
            results = {label: fn(config, steps, seed) for label, fn in order}
            (sb3_fps, sb3_ret), (lit_fps, lit_ret) = results["sb3"], results["lit"]
            ratios.append(lit_fps / sb3_fps)
            print(
                f"| {name} | {seed} | {sb3_fps:.0f} | {lit_fps:.0f} | {lit_fps / sb3_fps:.2f}x | "
                f"{sb3_ret:.1f} | {lit_ret:.1f} |",
                flush=True,
            )
        print(f"| **{name} median ratio** | | | | **{statistics.median(ratios):.2f}x** | | |", flush=True)


if __name__ == "__main__":
    main()
