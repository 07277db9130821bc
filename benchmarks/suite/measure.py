"""Library-agnostic measurement inside one run: learning curves, final evaluation, peak memory.

Both libraries train on envs built by ``make_env`` (the same gymnasium wrappers, so the same
observations), record their finished episodes through the same ``EpisodeRecorder``, and are evaluated by
the same ``evaluate`` on identically seeded envs. Only gymnasium and numpy are imported here.
"""

from __future__ import annotations

import resource
import sys
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from suite import envs
from suite.cases import Case

__all__ = ["RECORD", "EpisodeRecorder", "eval_seed", "evaluate", "make_env", "peak_rss_mib"]

N_EVAL_EPISODES = 10


class _Record:
    """What the recorders of this process have seen: (env steps so far, return) per finished episode."""

    def __init__(self) -> None:
        self.steps = 0
        self.episodes: list[tuple[int, float]] = []
        self.invalid_actions = 0


RECORD = _Record()


class EpisodeRecorder(gym.Wrapper):
    """Counts every training step of the process and records each finished episode's return.

    One counter for all envs of the process, so the x-axis is the total number of environment steps,
    however many envs run in parallel. It sits under both libraries' own wrappers (SB3's Monitor,
    lit-sb3's vector statistics) and sees raw rewards, whatever normalization runs above it.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self._return = 0.0

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        self._return = 0.0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        RECORD.steps += 1
        self._return += float(reward)
        if info.get("invalid_action"):
            RECORD.invalid_actions += 1
        if terminated or truncated:
            RECORD.episodes.append((RECORD.steps, self._return))
            self._return = 0.0
        return obs, reward, terminated, truncated, info


def make_env(case: Case, record: bool = False) -> gym.Env:
    """One env of ``case``: the id, the case's wrapper, and (training envs) the episode recorder."""
    if case.atari:
        import ale_py

        gym.register_envs(ale_py)
    env = gym.make(case.env)
    if case.wrapper is not None:
        env = envs.WRAPPERS[case.wrapper](env)
    return EpisodeRecorder(env) if record else env


def eval_seed(seed: int) -> int:
    """First evaluation-episode seed of the run with training ``seed``: disjoint from training seeds."""
    return 10_000 + 100 * seed


Predict = Callable[..., tuple[Any, Any]]


def evaluate(case: Case, predict: Predict, seed: int, n_episodes: int = N_EVAL_EPISODES) -> list[float]:
    """Deterministic returns of ``n_episodes`` episodes, episode ``i`` reset with ``eval_seed(seed) + i``.

    ``predict`` has SB3's signature (``model.predict`` of either library); recurrent cases get the state
    and episode-start flags back, masked cases the env's current action mask.
    """
    env = make_env(case)
    returns = []
    for episode in range(n_episodes):
        obs, _ = env.reset(seed=eval_seed(seed) + episode)
        state, start, total, done = None, True, 0.0, False
        while not done:
            kwargs: dict[str, Any] = {"deterministic": True}
            if case.recurrent:
                kwargs.update(state=state, episode_start=np.array([start]))
            if case.action_masks:
                kwargs["action_masks"] = np.asarray(env.get_wrapper_attr("action_masks")(), dtype=bool)
            action, state = predict(obs, **kwargs)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            start, done = False, terminated or truncated
        returns.append(total)
    env.close()
    return returns


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far, in MiB (``ru_maxrss`` is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024
