"""Env steps per second of Atari preprocessing: lit-sb3's ``AtariWrapper`` beside SB3's, and beside the
stack lit-sb3 used before 2026-12-06 (gymnasium's ``AtariPreprocessing``, which reads grey frames from the
emulator and max-pools them, with the life-loss, FIRE and reward-clipping wrappers around it).

    python benchmarks/atari_preprocessing.py                       # Pong and Road Runner, 5 repeats
    python benchmarks/atari_preprocessing.py --games Seaquest --steps 4000 --repeats 3

One env, random actions drawn before the timed loop, whole games (resets included). Every measurement is a
fresh process; the stacks alternate within each repeat (each repeat starts with the next one), so machine
load hits them alike. Prints steps/s per stack and the median ratio to SB3.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

STACKS = ("lit-sb3", "sb3", "grey-pooling")


def _build(stack: str, env_id: str) -> Any:
    """The named preprocessing stack around a fresh ``env_id``."""
    import ale_py
    import gymnasium as gym

    gym.register_envs(ale_py)
    env = gym.make(env_id)
    if stack == "lit-sb3":
        from lit_sb3_core.envs.atari import AtariWrapper

        return AtariWrapper(env)
    if stack == "sb3":
        from stable_baselines3.common.atari_wrappers import AtariWrapper as SB3AtariWrapper

        return SB3AtariWrapper(env)
    from gymnasium.wrappers import AtariPreprocessing

    from lit_sb3_core.envs.atari import ClipRewardEnv, EpisodicLifeEnv, FireResetEnv

    env = AtariPreprocessing(env, noop_max=30, frame_skip=4, screen_size=84, terminal_on_life_loss=False,
                             grayscale_obs=True, grayscale_newaxis=True)  # fmt: skip
    env = EpisodicLifeEnv(env)
    if "FIRE" in env.unwrapped.get_action_meanings():
        env = FireResetEnv(env)
    return ClipRewardEnv(env)


def _one(stack: str, env_id: str, steps: int) -> float:
    """Run in a child process: env steps per second of one stack."""
    import numpy as np

    env = _build(stack, env_id)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(env.action_space.n, size=steps)
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = env.step(int(action))
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", nargs="+", default=["Pong", "RoadRunner"])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--_child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args._child:
        stack, env_id, steps = args._child
        print(json.dumps(_one(stack, env_id, int(steps))))
        return 0
    for game in args.games:
        env_id = f"{game}NoFrameskip-v4"
        rates: dict[str, list[float]] = {stack: [] for stack in STACKS}
        for repeat in range(args.repeats):
            order = STACKS[repeat % len(STACKS) :] + STACKS[: repeat % len(STACKS)]
            for stack in order:
                out = subprocess.run(
                    [sys.executable, __file__, "--_child", stack, env_id, str(args.steps)],
                    check=True, capture_output=True, text=True,
                )  # fmt: skip
                rates[stack].append(float(out.stdout.strip().splitlines()[-1]))
        print(f"{env_id}: {args.steps} steps x {args.repeats} repeats")
        for stack in STACKS:
            ratios = [ours / theirs for ours, theirs in zip(rates[stack], rates["sb3"], strict=True)]
            print(
                f"  {stack:13s} {statistics.median(rates[stack]):8.0f} steps/s (median; "
                f"{min(rates[stack]):.0f}-{max(rates[stack]):.0f})  x{statistics.median(ratios):.2f} SB3"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
