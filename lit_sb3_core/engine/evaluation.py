"""``evaluate_policy``: run a policy for whole episodes and report their returns, as SB3's does."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Literal, overload

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from lit_sb3_core.envs.episodes import records_episodes
from lit_sb3_core.envs.make import make_vector_env
from lit_sb3_core.envs.masks import check_masking_supported, get_action_masks
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.sb3.vec_env_views import GymnasiumVecEnv, find_vec_wrapper, is_sb3_vec_env, sb3_infos

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
        callback: called after every step, once per sub-env still short of its episodes, with
            ``(locals(), globals())``: ``observations``, ``new_observations``, ``reward``, ``done``, ``info``
            (SB3's per-env info), ``i`` (the sub-env) and ``model`` among them, as in SB3.
        reward_threshold: raise AssertionError when the mean return is below it.
        return_episode_rewards: return the per-episode lists instead of mean and std.
        warn: warn (UserWarning) when no episode recorder (``Monitor``, ``RecordEpisodeStatistics``,
            ``VecMonitor``) wraps the env, as SB3 does.
        use_masking: pass the env's ``action_masks()`` to ``predict`` (MaskablePPO).
        episode_callback: lit-sb3 only: called with the returns so far whenever an episode is counted
            (the evaluation progress bar uses it).

    Returns:
        ``(mean_reward, std_reward)``, or ``(episode_rewards, episode_lengths)``.
    """
    check_positive_int("n_eval_episodes", n_eval_episodes)
    owns_env = isinstance(env, str)
    if owns_env:  # built here, with a recorder: the episodes counted are the env's own
        vec_env = make_vector_env(env, 1, wrappers=[gym.wrappers.RecordEpisodeStatistics])
    else:
        vec_env = make_vector_env(env)
    try:
        monitored = _is_monitored(env, vec_env)
        if warn and not monitored:
            warnings.warn(
                "The evaluation env is not wrapped in a Monitor (or gymnasium's RecordEpisodeStatistics): the "
                "episode returns and lengths reported are those the outermost wrappers produce, which may be "
                "modified (clipped rewards, episodes cut at a lost life). Wrap each env in Monitor first.",
                UserWarning,
                stacklevel=2,
            )
        rewards, lengths = _run_episodes(
            model,
            vec_env,
            n_eval_episodes,
            deterministic,
            render,
            callback,
            use_masking,
            episode_callback,
            monitored,
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


def _is_monitored(source: Any, env: VectorEnv) -> bool:
    """Whether episode statistics are recorded: inside every sub-env (``Monitor``), or by a vector-level
    recorder (gymnasium's ``RecordEpisodeStatistics``, as on a training env; SB3's ``VecMonitor``), as SB3
    checks."""
    if records_episodes(env) or _records_vector_episodes(env):
        return True
    if is_sb3_vec_env(source):
        if find_vec_wrapper(source, "VecMonitor") is not None:
            return True
        view = find_vec_wrapper(source, GymnasiumVecEnv)
        return view is not None and _records_vector_episodes(view.vector_env)
    return False


def _records_vector_episodes(env: VectorEnv) -> bool:
    current: Any = env
    while isinstance(current, VectorWrapper):
        if isinstance(current, RecordEpisodeStatistics):
            return True
        current = current.env
    return False


def _run_episodes(
    model: Any,
    env: VectorEnv,
    n_eval_episodes: int,
    deterministic: bool,
    render: bool,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None,
    use_masking: bool,
    episode_callback: Callable[[list[float]], None] | None = None,
    monitored: bool = False,
) -> tuple[list[float], list[int]]:
    """SB3's loop: after every step, for each sub-env still short of its episodes, ``reward``, ``done`` and
    ``info`` (SB3's per-env info) are set and ``callback(locals(), globals())`` is called; a finished episode
    counts with the recorder's return and length when ``monitored`` (an episode end the recorder did not see,
    such as a lost life, does not count), else with the sums seen here."""
    n_envs = env.num_envs
    targets = np.array([(n_eval_episodes + i) // n_envs for i in range(n_envs)], dtype=int)
    counts = np.zeros(n_envs, dtype=int)
    current_rewards = np.zeros(n_envs)
    current_lengths = np.zeros(n_envs, dtype=int)
    episode_rewards: list[float] = []
    episode_lengths: list[int] = []
    if use_masking:
        check_masking_supported(env)  # before any step: a subprocess env's workers stop on a missing method
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
                episode_start=episode_starts.copy(),  # a snapshot: the loop updates its own array in place
                deterministic=deterministic,
                **kwargs,
            )
            new_observations, rewards, terminated, truncated, step_infos = env.step(actions)
            current_rewards += rewards
            current_lengths += 1
            dones = np.logical_or(terminated, truncated)
            if callback is None and not dones.any():
                episode_starts[counts < targets] = False
            else:
                infos = sb3_infos(step_infos, terminated, truncated)
                for i in range(n_envs):
                    if counts[i] >= targets[i]:
                        continue
                    # what the callback reads, as in SB3
                    reward, done, info = rewards[i], dones[i], infos[i]
                    episode_starts[i] = done
                    if callback is not None:
                        callback(locals(), globals())
                    if not done:
                        continue
                    if not monitored:
                        episode = (float(current_rewards[i]), int(current_lengths[i]))
                    elif "episode" in info:
                        episode = (float(info["episode"]["r"]), int(info["episode"]["l"]))
                    else:  # an episode of the wrappers above the recorder (a lost life)
                        episode = None
                    if episode is not None:
                        episode_rewards.append(episode[0])
                        episode_lengths.append(episode[1])
                        counts[i] += 1
                        if episode_callback is not None:
                            episode_callback(episode_rewards)
                    current_rewards[i] = 0.0
                    current_lengths[i] = 0
            observations = new_observations
            if render:
                env.render()
    return episode_rewards, episode_lengths
