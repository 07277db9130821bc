"""A2C: lit-sb3 beside Stable-Baselines3, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_a2c.py            # full: rl-zoo3 budgets (CartPole 500k, Pendulum 200k), 3 seeds
    python benchmarks/bench_a2c.py --quick    # a couple of minutes

Both libraries run with ``torch.set_num_threads(1)``. Reports environment steps per second of each run,
the ratio lit-sb3 / SB3 (median per config), and the final deterministic evaluation return of every run,
measured by the same evaluator on identically seeded environments. A2C updates every ``n_steps * n_envs``
= 40 (CartPole) or 64 (Pendulum) steps, so this is the benchmark where per-iteration overhead (Lightning's
loop, logging) shows most.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

CONFIGS: dict[str, dict[str, Any]] = {
    # rl-zoo3's tuned CartPole-v1 hyperparameters: 8 envs, defaults otherwise (n_steps=5, RMSprop).
    "cartpole-zoo": {"env": "CartPole-v1", "n_envs": 8, "steps": 500_000, "kwargs": {"ent_coef": 0.0}},
    # rl-zoo3's Pendulum-v1 entry (gSDE), without its observation/reward normalization (in neither library).
    "pendulum-zoo": {
        "env": "Pendulum-v1",
        "n_envs": 8,
        "steps": 200_000,
        "kwargs": {
            "ent_coef": 0.0,
            "max_grad_norm": 0.5,
            "n_steps": 8,
            "gae_lambda": 0.9,
            "vf_coef": 0.4,
            "gamma": 0.9,
            "use_rms_prop": True,
            "normalize_advantage": False,
            "learning_rate": "lin_7e-4",
            "use_sde": True,
            "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
        },
    },
}


def _sb3_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """SB3 takes schedules as callables; turn rl-zoo3 'lin_x' strings into them."""
    from stable_baselines3.common.utils import LinearSchedule

    out = dict(kwargs)
    value = out.get("learning_rate")
    if isinstance(value, str) and value.startswith("lin_"):
        out["learning_rate"] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    return out


def evaluate(model: Any, env_id: str, seed: int) -> float:
    """The same evaluator for both libraries: 10 deterministic episodes on a seeded env."""
    import gymnasium as gym

    from lit_sb3 import evaluate_policy

    env = gym.make(env_id)
    env.reset(seed=seed + 1000)
    mean, _ = evaluate_policy(model, env, n_eval_episodes=10)
    return float(mean)


def run_sb3(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from stable_baselines3 import A2C
    from stable_baselines3.common.env_util import make_vec_env

    env = make_vec_env(config["env"], n_envs=config["n_envs"], seed=seed)
    model = A2C("MlpPolicy", env, seed=seed, device="cpu", **_sb3_kwargs(config["kwargs"]))
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    return fps, evaluate(model, config["env"], seed)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from lit_sb3 import A2C

    model = A2C("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env=config["env"], n_envs=config["n_envs"])
    fps = model.num_timesteps / (time.perf_counter() - start)
    return fps, evaluate(model, config["env"], seed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="50k steps, 2 seeds")
    parser.add_argument("--steps", type=int, default=None, help="override every config's step budget")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or list(CONFIGS)
    print(f"A2C, seeds 0..{seeds - 1}, torch threads = 1\n")
    print("| config | steps | seed | SB3 steps/s | lit-sb3 steps/s | ratio | SB3 return | lit-sb3 return |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        steps = args.steps or (50_000 if args.quick else config["steps"])
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
