"""Library-agnostic measurement inside one run: learning curves, final evaluation, peak memory.

Both libraries train on envs built by ``make_env`` (the same gymnasium wrappers, so the same
observations), record their finished episodes through the same ``EpisodeRecorder``, and are evaluated by
the same ``evaluate`` on identically seeded envs. Only gymnasium and numpy are imported here.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from suite import envs
from suite.cases import Case

__all__ = ["RECORD", "EpisodeRecorder", "eval_seed", "evaluate", "make_env", "peak_rss_mib"]

N_EVAL_EPISODES = 10


class _Record:
    """What the recorders of this process have seen: (env steps so far, return) per finished episode, and
    when the run passed ``steady_from`` steps (the start of the steady-state clock, see ``steady_rate``)."""

    def __init__(self) -> None:
        self.steps = 0
        self.episodes: list[tuple[int, float]] = []
        self.invalid_actions = 0
        self.steady_from = -1
        self.steady_start: float | None = None
        self.steady_cpu_start: float | None = None

    def steady_rate(self, end: float, num_timesteps: int) -> float | None:
        """Steps per second from ``steady_from`` to ``end`` (the end of ``learn``): the run after its
        warm-up (random-action phase, first updates, JIT compilation). None if the run never got there."""
        if self.steady_start is None or end <= self.steady_start or num_timesteps <= self.steady_from:
            return None
        return (num_timesteps - self.steady_from) / (end - self.steady_start)

    def steady_cpu_rate(self, cpu_end: float, num_timesteps: int) -> float | None:
        """The same per second of process CPU time (all threads): steadier on a shared machine."""
        if (
            self.steady_cpu_start is None
            or cpu_end <= self.steady_cpu_start
            or num_timesteps <= self.steady_from
        ):
            return None
        return (num_timesteps - self.steady_from) / (cpu_end - self.steady_cpu_start)


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
        if RECORD.steps == RECORD.steady_from:
            RECORD.steady_start, RECORD.steady_cpu_start = time.perf_counter(), time.process_time()
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
