"""sb3-contrib's ``AsyncEval``: ARS's candidates evaluated in worker processes, as a view over
``SubprocVecEnv``.

sb3-contrib starts one process per env function, each with its own copy of the policy, and sends every
candidate's weights over a pipe. lit-sb3's ARS already runs its candidates side by side, one per sub-env of
its training vector env, so ``ARS.learn(async_eval=...)`` simply trains on a ``SubprocVecEnv`` made from
these functions: the environments step in the workers, the policy stays in the main process and no
weights are synced.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from lit_sb3.common.vec_env.subproc_vec_env import SubprocVecEnv
from lit_sb3_core.sb3.vec_env import VecEnvWrapper
from lit_sb3_core.sb3.vec_env_views import is_sb3_vec_env

__all__ = ["AsyncEval"]


class _SingleEnvOf:
    """Calls ``env_fn`` in the worker; a one-env ``VecEnv`` it returns (``lambda: make_vec_env(id)``, as
    sb3-contrib's example passes) gives up its gymnasium env. A class so workers can unpickle it."""

    def __init__(self, env_fn: Callable[[], Any]) -> None:
        self.env_fn = env_fn

    def __call__(self) -> gym.Env:
        env = self.env_fn()
        if not is_sb3_vec_env(env):
            return env
        if isinstance(env, VecEnvWrapper) or env.num_envs != 1 or not hasattr(env, "envs"):
            raise ValueError(
                f"AsyncEval's env functions must return a gymnasium.Env or a VecEnv of one env without VecEnv "
                f"wrappers, got {type(env).__name__} with {env.num_envs} env(s). Return "
                "`make_vec_env(env_id)` or `gym.make(env_id)`; for observation normalization use ARS's own "
                "(RLEnvDataModule(normalize='observation'))."
            )
        return env.envs[0]


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

    def close(self) -> None:
        """Stop the workers (nothing to do when they never started)."""
        if self._vec_env is not None:
            self._vec_env.close()
            self._vec_env = None
        self.closed = True
