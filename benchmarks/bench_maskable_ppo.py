"""MaskablePPO: lit-sb3 beside sb3-contrib, identical hyperparameters, same process, alternating runs.

    python benchmarks/bench_maskable_ppo.py            # full: every config, 3 seeds
    python benchmarks/bench_maskable_ppo.py --quick    # arms config, 2 seeds, 20k steps

Both libraries run with ``torch.set_num_threads(1)`` on the same environments, defined here:

* ``MaskedArms``: 10 arms, a random half allowed each step (the observation is the mask), arm ``i`` pays
  ``i / 9``; 16-step episodes. A random allowed arm earns about 8 per episode, the best allowed arm about
  15. A forbidden arm costs -1 and is counted: both libraries must finish with 0.
* ``MaskedCartPole``: CartPole-v1 with an all-allowed mask, under rl-zoo3's tuned PPO settings: the cost
  of masking on a standard workload.

Reports environment steps per second, the ratio lit-sb3 / sb3-contrib, the final deterministic evaluation
return with masks (10 episodes), and the number of forbidden actions taken during training.
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
from gymnasium import spaces


class MaskedArms(gym.Env):
    """Pick the best allowed arm; forbidden picks are counted in ``invalid``."""

    invalid = 0
    n_arms, length = 10, 16

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (self.n_arms,), np.float32)
        self.action_space = spaces.Discrete(self.n_arms)
        self._mask = np.ones(self.n_arms, dtype=bool)
        self._t = 0

    def _draw(self) -> np.ndarray:
        mask = self.np_random.random(self.n_arms) < 0.5
        if not mask.any():
            mask[self.np_random.integers(self.n_arms)] = True
        self._mask = mask
        return mask.astype(np.float32)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._t = 0
        return self._draw(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        action = int(action)
        if self._mask[action]:
            reward = action / (self.n_arms - 1)
        else:
            MaskedArms.invalid += 1
            reward = -1.0
        self._t += 1
        return self._draw(), reward, False, self._t >= self.length, {}

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()


class MaskedCartPole(gym.Wrapper):
    def action_masks(self) -> np.ndarray:
        return np.ones(2, dtype=bool)


gym.register("BenchMaskedArms-v0", entry_point=MaskedArms)
gym.register("BenchMaskedCartPole-v0", entry_point=lambda: MaskedCartPole(gym.make("CartPole-v1")))

CONFIGS: dict[str, dict[str, Any]] = {
    # A rollout of 1024 transitions, sb3-contrib's other defaults.
    "arms-4env": {
        "env": "BenchMaskedArms-v0", "n_envs": 4, "steps": 100_000,
        "kwargs": {"n_steps": 256, "batch_size": 64, "n_epochs": 10},
    },
    # rl-zoo3's tuned PPO CartPole-v1 settings.
    "cartpole-zoo-8env": {
        "env": "BenchMaskedCartPole-v0", "n_envs": 8, "steps": 100_000,
        "kwargs": {"n_steps": 32, "batch_size": 256, "gae_lambda": 0.8, "gamma": 0.98, "n_epochs": 20,
                   "ent_coef": 0.0, "learning_rate": "lin_0.001", "clip_range": "lin_0.2"},
    },
}  # fmt: skip


def _contrib_kwargs(kwargs: dict[str, Any]) -> dict[str, Any]:
    """SB3 takes schedules as callables; turn rl-zoo3 'lin_x' strings into them."""
    from stable_baselines3.common.utils import LinearSchedule

    out = dict(kwargs)
    for key in ("learning_rate", "clip_range"):
        value = out.get(key)
        if isinstance(value, str) and value.startswith("lin_"):
            out[key] = LinearSchedule(float(value[4:]), 0.0, 1.0)
    return out


def run_contrib(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float, int]:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.evaluation import evaluate_policy
    from stable_baselines3.common.env_util import make_vec_env

    MaskedArms.invalid = 0
    env = make_vec_env(config["env"], n_envs=config["n_envs"], seed=seed)
    model = MaskablePPO("MlpPolicy", env, seed=seed, device="cpu", **_contrib_kwargs(config["kwargs"]))
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    fps = model.num_timesteps / (time.perf_counter() - start)
    invalid = MaskedArms.invalid
    mean, _ = evaluate_policy(
        model, make_vec_env(config["env"], n_envs=1, seed=seed + 1000), 10, use_masking=True
    )
    return fps, float(mean), invalid


def run_lit(config: dict[str, Any], steps: int, seed: int) -> tuple[float, float, int]:
    from lit_sb3 import MaskablePPO, evaluate_policy

    MaskedArms.invalid = 0
    model = MaskablePPO("MlpPolicy", seed=seed, device="cpu", **config["kwargs"])
    start = time.perf_counter()
    model.learn(total_timesteps=steps, env=config["env"], n_envs=config["n_envs"])
    fps = model.num_timesteps / (time.perf_counter() - start)
    invalid = MaskedArms.invalid
    mean, _ = evaluate_policy(model, config["env"], 10, use_masking=True)
    return fps, float(mean), invalid


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="arms-4env only, 20k steps, 2 seeds")
    parser.add_argument("--steps", type=int, default=None, help="override every config's budget")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--configs", nargs="*", default=None, choices=sorted(CONFIGS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    seeds = args.seeds or (2 if args.quick else 3)
    names = args.configs or (["arms-4env"] if args.quick else list(CONFIGS))
    print(f"MaskablePPO, seeds 0..{seeds - 1}, torch threads = 1\n")
    print(
        "| config | steps | seed | sb3-contrib steps/s | lit-sb3 steps/s | ratio | sb3-contrib return | "
        "lit-sb3 return | invalid actions (contrib / lit) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        config = CONFIGS[name]
        steps = args.steps or (20_000 if args.quick else config["steps"])
        ratios, returns = [], {"contrib": [], "lit": []}
        for seed in range(seeds):
            # Alternate which library goes first so warm caches and machine load favour neither.
            order = [("contrib", run_contrib), ("lit", run_lit)]
            if seed % 2:
                order.reverse()
            results = {label: fn(config, steps, seed) for label, fn in order}
            (c_fps, c_ret, c_bad), (l_fps, l_ret, l_bad) = results["contrib"], results["lit"]
            ratios.append(l_fps / c_fps)
            returns["contrib"].append(c_ret)
            returns["lit"].append(l_ret)
            print(
                f"| {name} | {steps} | {seed} | {c_fps:.0f} | {l_fps:.0f} | {l_fps / c_fps:.2f}x | "
                f"{c_ret:.1f} | {l_ret:.1f} | {c_bad} / {l_bad} |",
                flush=True,
            )
        print(
            f"| **{name}** | | median | | | **{statistics.median(ratios):.2f}x** | "
            f"{statistics.mean(returns['contrib']):.1f} (mean) | {statistics.mean(returns['lit']):.1f} (mean) | |",
            flush=True,
        )


if __name__ == "__main__":
    main()
