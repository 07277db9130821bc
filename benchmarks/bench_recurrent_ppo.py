"""RecurrentPPO: lit-sb3 beside sb3-contrib, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_recurrent_ppo.py            # full: rl-zoo3's 100k steps per run, 3 seeds
    python benchmarks/bench_recurrent_ppo.py --quick    # a few minutes

The task is CartPole without velocities (``CartPoleNoVel-v1``: observation ``[x, theta]``), which needs
memory; both libraries train on the same env (lit-sb3's registration, through SB3's ``make_vec_env``).
Both run with ``torch.set_num_threads(1)``. Reports environment steps per second, the ratio lit-sb3 /
sb3-contrib, and the final deterministic evaluation return (10 episodes) of every run.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any

import torch

ENV_ID = "CartPoleNoVel-v1"

CONFIGS: dict[str, dict[str, Any]] = {
    # rl-zoo3's tuned CartPoleNoVel-v1 hyperparameters (ppo_lstm.yml), default MlpLstmPolicy (256 units).
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
    # The same with 64 LSTM units (the CI learning test's setting).
    "zoo-8env-lstm64": {
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
            "policy_kwargs": {"lstm_hidden_size": 64},
        },
    },
    # sb3-contrib defaults (n_steps=128, batch 128, 10 epochs) with 8 envs.
    "default-8env": {"n_envs": 8, "kwargs": {}},
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
    import lit_sb3_ppo_recurrent.envs  # noqa: F401  (registers CartPoleNoVel-v1)
    from sb3_contrib import RecurrentPPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    env = make_vec_env(ENV_ID, n_envs=config["n_envs"], seed=seed)
    model = RecurrentPPO("MlpLstmPolicy", env, seed=seed, device="cpu", **_sb3_kwargs(config["kwargs"]))
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    mean, _ = evaluate_policy(model, make_vec_env(ENV_ID, n_envs=1, seed=seed + 1000), 10)
    return fps, float(mean)


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float]:
    from lit_sb3 import RecurrentPPO, evaluate_policy

    model = RecurrentPPO("MlpLstmPolicy", seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env=ENV_ID, n_envs=config["n_envs"])
    fps = model.num_timesteps / (time.perf_counter() - start)
    mean, _ = evaluate_policy(model, ENV_ID, 10)
    return fps, float(mean)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
    print(f"RecurrentPPO {ENV_ID}, {steps} steps per run, seeds 0..{seeds - 1}, torch threads = 1\n")
    print(
        "| config | seed | sb3-contrib steps/s | lit-sb3 steps/s | ratio | sb3-contrib return | lit-sb3 return |"
    )
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
