"""What a degenerate policy scores on an Atari game: every action held for whole games (with the evaluation's
1 % random actions), next to which a ledger case's curve must rise to show learning, not just a policy that
collapsed onto one good button. A random policy is the wrong floor on some games: on Road Runner the
leftward actions held score 850-1,020 (10-game means) against the random policy's 11.5. The ledger's cases
carry the best one as ``held_action_return``.

    nice python benchmarks/learning/constant_policies.py RoadRunner [--games 10]

Whole games scored as the ledger scores them (up to 30 no-ops at reset, frame skip 4, no end at a lost life,
unclipped scores), played under gymnasium's ``AtariPreprocessing``: a held action never looks at the frames,
so how they are pooled does not matter here. Prints the mean score per action, best first.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def constant_scores(game: str, games: int, seed: int = 0) -> dict[str, float]:
    """Mean whole-game score of each action held with probability 0.99 (else a random action)."""
    import ale_py
    import gymnasium as gym
    from gymnasium.wrappers import AtariPreprocessing

    gym.register_envs(ale_py)
    env = AtariPreprocessing(
        gym.make(f"{game}NoFrameskip-v4", max_episode_steps=108_000),
        noop_max=30, frame_skip=4, screen_size=84, terminal_on_life_loss=False,
    )  # fmt: skip
    env.action_space.seed(seed)
    rng = np.random.default_rng(seed)
    names = env.unwrapped.get_action_meanings()
    scores: dict[str, float] = {}
    for action, name in enumerate(names):
        totals = []
        for _ in range(games):
            env.reset(seed=int(rng.integers(1 << 30)))
            total, done = 0.0, False
            while not done:
                chosen = action if rng.random() >= 0.01 else env.action_space.sample()
                _, reward, terminated, truncated, _ = env.step(chosen)
                total += float(reward)
                done = terminated or truncated
            totals.append(total)
        scores[name] = float(np.mean(totals))
    env.close()
    return scores


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game", help="an ALE game name, e.g. RoadRunner")
    parser.add_argument("--games", type=int, default=10)
    args = parser.parse_args()
    scores = constant_scores(args.game, args.games)
    for name, score in sorted(scores.items(), key=lambda item: -item[1]):
        print(f"{name:16s} {score:9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
