"""sb3-contrib's ``AsyncEval``: ARS's candidates evaluated in worker processes, as a view over
``SubprocVecEnv``.

sb3-contrib starts one process per env function, each with its own copy of the policy, and sends every
candidate's weights over a pipe. lit-sb3's ARS already runs its candidates side by side, one per sub-env of
its training vector env, so ``ARS.learn(async_eval=...)`` simply trains on a ``SubprocVecEnv`` made from
these functions: the environments step in the workers, the policy stays in the main process and no
weights are synced.

An env function may return a one-env ``VecEnv`` with ``VecEnvWrapper``s, such as
``VecNormalize(make_vec_env(id))``: the worker steps the whole chain (its ``VecNormalize`` normalizes the
observations the candidates see and updates its statistics with them). After each ARS iteration the
workers' new observation statistics are merged into the model's own ``VecNormalize`` (the env the model
was built on), which is then copied back to every worker, as sb3-contrib does (``merge_obs_rms``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from lit_sb3.common.running_mean_std import RunningMeanStd
from lit_sb3.common.vec_env.subproc_vec_env import SubprocVecEnv
from lit_sb3_core.sb3.vec_env import VecEnvWrapper
from lit_sb3_core.sb3.vec_env_views import find_vec_wrapper, is_sb3_vec_env

__all__ = ["AsyncEval"]

# Observation statistics as they cross the pipe: {key: (mean, var, count)} (key None: not a Dict space).
_Statistics = dict[Any, tuple[np.ndarray, np.ndarray, float]]


class _SingleEnvOf:
    """Calls ``env_fn`` in the worker; a one-env ``VecEnv`` it returns (``lambda: make_vec_env(id)``, as
    sb3-contrib's example passes) gives up its gymnasium env, or, with ``VecEnvWrapper``s, is stepped whole
    through ``_OneEnvVecEnv``. A class so workers can unpickle it."""

    def __init__(self, env_fn: Callable[[], Any]) -> None:
        self.env_fn = env_fn

    def __call__(self) -> gym.Env:
        env = self.env_fn()
        if not is_sb3_vec_env(env):
            return env
        if env.num_envs != 1:
            raise ValueError(
                f"AsyncEval's env functions must return a gymnasium.Env or a VecEnv of one env (each worker "
                f"evaluates one candidate at a time), got {type(env).__name__} with {env.num_envs} envs. "
                "Return `make_vec_env(env_id)` or `gym.make(env_id)`, and pass one function per worker."
            )
        if isinstance(env, VecEnvWrapper) or not hasattr(env, "envs"):
            return _OneEnvVecEnv(env)
        return env.envs[0]


class _OneEnvVecEnv(gym.Env):
    """A one-env SB3 ``VecEnv`` chain (``VecNormalize(make_vec_env(id))``) as a ``gymnasium.Env``.

    A ``VecEnv`` resets an env whose episode ended inside ``step``: this env returns the final observation
    (``terminal_observation``) then and hands out the new episode's first one at the ``reset`` that
    follows. Rewards are the chain's, but for a ``VecNormalize``, whose scaling would change the scores ARS
    compares, they are the rewards before it (``get_original_reward``), as sb3-contrib scores candidates by
    their episode returns.
    """

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        self.observation_space = venv.observation_space
        self.action_space = venv.action_space
        self.normalize = find_vec_wrapper(venv, "VecNormalize")
        self._next_first_obs: Any = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is None and not options and self._next_first_obs is not None:
            obs, self._next_first_obs = self._next_first_obs, None
            return obs, {}
        if seed is not None:
            self.venv.seed(seed)
        if options:
            self.venv.set_options(options)
        self._next_first_obs = None
        return _first(self.venv.reset()), dict(self.venv.reset_infos[0])

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, rewards, dones, infos = self.venv.step(np.asarray([action]))
        info = dict(infos[0])
        reward = self.normalize.get_original_reward()[0] if self.normalize is not None else rewards[0]
        obs = _first(obs)
        done = bool(dones[0])
        truncated = done and bool(info.pop("TimeLimit.truncated", False))
        if done:
            self._next_first_obs, obs = obs, info.pop("terminal_observation")
        return obs, float(reward), done and not truncated, truncated, info

    def obs_statistics(self) -> _Statistics | None:
        """The ``VecNormalize``'s observation statistics (None without one, or with ``norm_obs=False``)."""
        if self.normalize is None or not self.normalize.norm_obs:
            return None
        rms = self.normalize.obs_rms
        return {key: (r.mean.copy(), r.var.copy(), r.count) for key, r in _by_key(rms).items()}

    def set_obs_statistics(self, statistics: _Statistics) -> None:
        """Replace the ``VecNormalize``'s observation statistics (nothing to do without one)."""
        if self.normalize is None or not self.normalize.norm_obs:
            return
        rms = self.normalize.obs_rms
        for key, target in _by_key(rms).items():
            target.mean, target.var, target.count = statistics[key]

    def close(self) -> None:
        self.venv.close()


def _first(obs: Any) -> Any:
    return {key: value[0] for key, value in obs.items()} if isinstance(obs, dict) else obs[0]


def _by_key(rms: Any) -> dict[Any, Any]:
    return dict(rms) if isinstance(rms, dict) else {None: rms}


def _to_rms(statistics: _Statistics) -> RunningMeanStd | dict[str, RunningMeanStd]:
    views = {}
    for key, (mean, var, count) in statistics.items():
        rms = RunningMeanStd(shape=np.shape(mean))
        rms.mean, rms.var, rms.count = mean, var, count
        views[key] = rms
    return views[None] if None in views else views


def _new_since(
    now: tuple[np.ndarray, np.ndarray, float], base: tuple[np.ndarray, np.ndarray, float]
) -> tuple[np.ndarray, np.ndarray, float]:
    """Mean, variance and count of the samples merged into statistics ``base`` to make ``now`` (the
    inverse of ``RunningMeanStd.combine``)."""
    (now_mean, now_var, now_count), (base_mean, base_var, base_count) = now, base
    count = now_count - base_count
    if count <= 0:
        return now_mean, now_var, 0.0
    mean = (now_mean * now_count - base_mean * base_count) / count
    delta = mean - base_mean
    m2 = now_var * now_count - base_var * base_count - delta * delta * base_count * count / now_count
    return mean, np.maximum(m2 / count, 0.0), count


class AsyncEval:
    """Environments in worker processes for ARS's candidate evaluation (sb3-contrib's signature).

    Pass it to ``ARS.learn(..., async_eval=async_eval)``: that ``learn`` trains on ``vec_env`` (one worker
    per function, each sub-env running one candidate at a time) with ``n_eval_episodes`` episodes per
    candidate, then closes it, as sb3-contrib's ``learn`` does.

    Args:
        envs_fn: functions that each return a new ``gymnasium.Env`` or a one-env ``VecEnv``.
        train_policy: the model's policy (kept for sb3-contrib's signature: ARS evaluates with its own
            policy in the main process, so no copy goes to the workers).
        start_method: multiprocessing start method of the workers; None uses the platform's default.
        n_eval_episodes: episodes per candidate while training with this object.
    """

    def __init__(
        self,
        envs_fn: Sequence[Callable[[], Any]],
        train_policy: Any,
        start_method: str | None = None,
        n_eval_episodes: int = 1,
    ) -> None:
        if not envs_fn:
            raise ValueError(
                "AsyncEval needs at least one env function: AsyncEval([lambda: make_vec_env(id)], ...)."
            )
        if isinstance(n_eval_episodes, bool) or not isinstance(n_eval_episodes, int) or n_eval_episodes < 1:
            raise ValueError(f"n_eval_episodes must be a positive integer, got {n_eval_episodes!r}.")
        self.envs_fn = list(envs_fn)
        self.train_policy = train_policy
        self.start_method = start_method
        self.n_eval_episodes = n_eval_episodes
        self.closed = False
        self._vec_env: SubprocVecEnv | None = None
        # What each worker's statistics were when last read or synced: what it has added since is new.
        self._merged: list[_Statistics | None] | None = None

    @property
    def vec_env(self) -> SubprocVecEnv:
        """The ``SubprocVecEnv`` of the env functions, started on first use."""
        if self.closed:
            raise ValueError(
                "This AsyncEval is closed (ARS.learn closes it when it ends, as sb3-contrib's does): create a "
                "new AsyncEval for the next learn."
            )
        if self._vec_env is None:
            self._vec_env = SubprocVecEnv([_SingleEnvOf(fn) for fn in self.envs_fn], self.start_method)
        return self._vec_env

    def seed(self, seed: int | None = None) -> list[int | None]:
        """Seed worker ``i``'s env with ``seed + i`` at its next reset (sb3-contrib's; None does nothing)."""
        if seed is None:
            return []
        return list(self.vec_env.seed(seed))

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        """Reset options for the workers' envs at their next reset: one dict for all, or one per worker."""
        self.vec_env.set_options(options)

    def get_obs_rms(self) -> list[RunningMeanStd | dict[str, RunningMeanStd] | None]:
        """Each worker's ``VecNormalize`` observation statistics (None for a worker without one)."""
        return [None if stats is None else _to_rms(stats) for stats in self._worker_statistics()]

    def sync_obs_rms(self, obs_rms: RunningMeanStd | dict[str, RunningMeanStd]) -> None:
        """Copy ``obs_rms`` into every worker's ``VecNormalize``."""
        if not self.vec_env.has_attr("obs_statistics"):
            return
        statistics = {key: (r.mean.copy(), r.var.copy(), r.count) for key, r in _by_key(obs_rms).items()}
        self.vec_env.env_method("set_obs_statistics", statistics)
        self._merged = [statistics] * len(self.envs_fn)

    def merge_obs_rms(self, vec_normalize: Any) -> None:
        """Merge the observations the workers' ``VecNormalize``s saw since the last merge into
        ``vec_normalize``'s statistics, then copy them to every worker (ARS calls it after each iteration).

        sb3-contrib combines each worker's whole statistics and subtracts the count they were synced with
        (an approximation its code calls a hack: the synced mean is counted again). Here each worker's new
        samples are taken out exactly, so every observation counts once. Nothing happens when
        ``vec_normalize`` is None or normalizes no observations (the workers keep their own statistics).
        """
        if vec_normalize is None or not vec_normalize.norm_obs:
            return
        workers = self._worker_statistics()
        if all(stats is None for stats in workers):
            return
        bases = self._merged or [None] * len(workers)  # before the first sync: all of theirs is new
        target = _by_key(vec_normalize.obs_rms)
        for now, base in zip(workers, bases):
            if now is None:
                continue
            for key, rms in target.items():
                mean, var, count = now[key] if base is None else _new_since(now[key], base[key])
                if count > 0:
                    rms.update_from_moments(mean, var, count)
        self.sync_obs_rms(vec_normalize.obs_rms)

    def _worker_statistics(self) -> list[_Statistics | None]:
        if not self.vec_env.has_attr("obs_statistics"):  # plain gymnasium envs in the workers
            return [None] * len(self.envs_fn)
        return list(self.vec_env.env_method("obs_statistics"))

    def close(self) -> None:
        """Stop the workers (nothing to do when they never started)."""
        if self._vec_env is not None:
            self._vec_env.close()
            self._vec_env = None
        self.closed = True
