"""``evaluate_policy``: run a policy for whole episodes and report their returns, as SB3's does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, overload

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

from lit_sb3_core.envs.episodes import finished_episodes, records_episodes
from lit_sb3_core.envs.make import make_vector_env
from lit_sb3_core.envs.masks import get_action_masks
from lit_sb3_core.foundation.checks import check_positive_int

__all__ = ["evaluate_policy"]


@overload
def evaluate_policy(
    model: Any,
    env: str | gym.Env | VectorEnv,
    n_eval_episodes: int = 10,
    deterministic: bool = True,
    render: bool = False,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    reward_threshold: float | None = None,
    return_episode_rewards: Literal[False] = False,
    warn: bool = True,
    use_masking: bool = False,
    episode_callback: Callable[[list[float]], None] | None = None,
) -> tuple[float, float]: ...


@overload
def evaluate_policy(
    model: Any,
    env: str | gym.Env | VectorEnv,
    n_eval_episodes: int = 10,
    deterministic: bool = True,
    render: bool = False,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    reward_threshold: float | None = None,
    *,
    return_episode_rewards: Literal[True],
    warn: bool = True,
    use_masking: bool = False,
    episode_callback: Callable[[list[float]], None] | None = None,
) -> tuple[list[float], list[int]]: ...


@overload
def evaluate_policy(
    model: Any,
    env: str | gym.Env | VectorEnv,
    n_eval_episodes: int = 10,
    deterministic: bool = True,
    render: bool = False,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    reward_threshold: float | None = None,
    return_episode_rewards: bool = False,
    warn: bool = True,
    use_masking: bool = False,
    episode_callback: Callable[[list[float]], None] | None = None,
) -> tuple[float, float] | tuple[list[float], list[int]]: ...


def evaluate_policy(
    model: Any,
    env: str | gym.Env | VectorEnv,
    n_eval_episodes: int = 10,
    deterministic: bool = True,
    render: bool = False,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    reward_threshold: float | None = None,
    return_episode_rewards: bool = False,
    warn: bool = True,
    use_masking: bool = False,
    episode_callback: Callable[[list[float]], None] | None = None,
) -> tuple[float, float] | tuple[list[float], list[int]]:
    """Run ``n_eval_episodes`` complete episodes and measure their returns and lengths.

    Episodes are spread over the vector env's sub-envs as evenly as SB3 spreads them, so results do not
    favour the short episodes that finish first. When every sub-env carries an episode recorder
    (gymnasium's ``RecordEpisodeStatistics``, as ``RLEnvDataModule(atari=True)`` puts on the raw game), its
    episodes are the ones counted, with its returns and lengths: SB3's rule for ``Monitor``-wrapped envs,
    so Atari evaluations report whole games with unclipped scores.

    Args:
        model: anything with ``predict(obs, state, episode_start, deterministic)`` (every algorithm).
        env: an env id, a ``gymnasium.Env`` or a SAME_STEP ``VectorEnv``.
        n_eval_episodes: number of episodes, at least 1.
        deterministic: use the distribution's mode instead of sampling.
        render: call ``env.render()`` after every step.
        callback: called after every step with ``(locals(), globals())``.
        reward_threshold: raise AssertionError when the mean return is below it.
        return_episode_rewards: return the per-episode lists instead of mean and std.
        warn: unused for vector envs built here; kept for SB3 signature compatibility.
        use_masking: pass the env's ``action_masks()`` to ``predict`` (MaskablePPO).
        episode_callback: lit-sb3 only: called with the returns so far whenever an episode is counted
            (the evaluation progress bar uses it).

    Returns:
        ``(mean_reward, std_reward)``, or ``(episode_rewards, episode_lengths)``.
    """
    check_positive_int("n_eval_episodes", n_eval_episodes)
    owns_env = isinstance(env, str)
    vec_env = make_vector_env(env, 1) if not isinstance(env, VectorEnv) else make_vector_env(env)
    try:
        rewards, lengths = _run_episodes(
            model, vec_env, n_eval_episodes, deterministic, render, callback, use_masking, episode_callback
        )
    finally:
        if owns_env:
            vec_env.close()
    mean_reward, std_reward = float(np.mean(rewards)), float(np.std(rewards))
    if reward_threshold is not None and mean_reward < reward_threshold:
        raise AssertionError(f"Mean reward {mean_reward:.2f} is below the threshold {reward_threshold:.2f}.")
    if return_episode_rewards:
        return rewards, lengths
    return mean_reward, std_reward


def _run_episodes(
    model: Any,
    env: VectorEnv,
    n_eval_episodes: int,
    deterministic: bool,
    render: bool,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None,
    use_masking: bool,
    episode_callback: Callable[[list[float]], None] | None = None,
) -> tuple[list[float], list[int]]:
    n_envs = env.num_envs
    targets = np.array([(n_eval_episodes + i) // n_envs for i in range(n_envs)], dtype=int)
    counts = np.zeros(n_envs, dtype=int)
    current_rewards = np.zeros(n_envs)
    current_lengths = np.zeros(n_envs, dtype=int)
    episode_rewards: list[float] = []
    episode_lengths: list[int] = []
    recorded = records_episodes(env)
    observations, _ = env.reset()
    states = None
    episode_starts = np.ones(n_envs, dtype=bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        while (counts < targets).any():
            kwargs: dict[str, Any] = {}
            if use_masking:
                kwargs["action_masks"] = get_action_masks(env)
            actions, states = model.predict(
                observations,
                state=states,
                episode_start=episode_starts,
                deterministic=deterministic,
                **kwargs,
            )
            observations, rewards, terminated, truncated, infos = env.step(actions)
            current_rewards += rewards
            current_lengths += 1
            dones = np.logical_or(terminated, truncated)
            finished = finished_episodes(infos) if recorded else {}
            for i in np.flatnonzero(dones).tolist():
                if recorded:
                    if i not in finished:  # an episode of the wrappers above the recorder (a lost life)
                        continue
                    episode = finished[i]
                else:
                    episode = (float(current_rewards[i]), int(current_lengths[i]))
                if counts[i] < targets[i]:
                    episode_rewards.append(episode[0])
                    episode_lengths.append(episode[1])
                    counts[i] += 1
                    if episode_callback is not None:
                        episode_callback(episode_rewards)
                current_rewards[i] = 0.0
                current_lengths[i] = 0
            episode_starts = dones
            if callback is not None:
                callback(locals(), globals())
            if render:
                env.render()
    return episode_rewards, episode_lengths
