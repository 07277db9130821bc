"""SB3's ``env_util``: ``make_vec_env`` and ``make_atari_env``, and wrapper look-ups on single envs."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from lit_sb3.common.monitor import Monitor
from lit_sb3_core.envs.make import make_env_by_id
from lit_sb3_core.sb3.vec_env import VecEnv
from lit_sb3_core.sb3.vec_env_views import is_wrapped

__all__ = ["is_wrapped", "make_atari_env", "make_vec_env", "unwrap_wrapper"]


def unwrap_wrapper(env: gym.Env, wrapper_class: type[gym.Wrapper]) -> gym.Wrapper | None:
    """The first ``wrapper_class`` in ``env``'s wrapper chain, or None."""
    current: Any = env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, wrapper_class):
            return current
        current = current.env
    return None


class _MakeEnv:
    """Builds env ``rank`` of ``make_vec_env``: make, seed the action space, Monitor, the user's wrapper.

    A class rather than a closure so ``SubprocVecEnv`` workers can receive it with plain pickle.
    """

    def __init__(
        self,
        env_id: str | Callable[..., gym.Env],
        rank: int,
        seed: int | None,
        env_kwargs: dict[str, Any],
        monitor_dir: str | None,
        monitor_kwargs: dict[str, Any],
        wrapper_class: Callable[..., gym.Env] | None,
        wrapper_kwargs: dict[str, Any],
    ) -> None:
        self.env_id = env_id
        self.rank = rank
        self.seed = seed
        self.env_kwargs = env_kwargs
        self.monitor_dir = monitor_dir
        self.monitor_kwargs = monitor_kwargs
        self.wrapper_class = wrapper_class
        self.wrapper_kwargs = wrapper_kwargs

    def __call__(self) -> gym.Env:
        if isinstance(self.env_id, str):
            # As SB3: rgb_array rendering unless the caller chose, so render() returns frames.
            try:
                env = make_env_by_id(self.env_id, {"render_mode": "rgb_array", **self.env_kwargs})
            except TypeError:
                env = make_env_by_id(self.env_id, dict(self.env_kwargs))
        else:
            env = self.env_id(**self.env_kwargs)
        if self.seed is not None:
            env.action_space.seed(self.seed + self.rank)
        monitor_path = None
        if self.monitor_dir is not None:
            os.makedirs(self.monitor_dir, exist_ok=True)
            monitor_path = os.path.join(self.monitor_dir, str(self.rank))
        env = Monitor(env, filename=monitor_path, **self.monitor_kwargs)
        if self.wrapper_class is not None:
            env = self.wrapper_class(env, **self.wrapper_kwargs)
        return env


def make_vec_env(
    env_id: str | Callable[..., gym.Env],
    n_envs: int = 1,
    seed: int | None = None,
    start_index: int = 0,
    monitor_dir: str | None = None,
    wrapper_class: Callable[..., gym.Env] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vec_env_cls: type[VecEnv] | None = None,
    vec_env_kwargs: dict[str, Any] | None = None,
    monitor_kwargs: dict[str, Any] | None = None,
    wrapper_kwargs: dict[str, Any] | None = None,
) -> VecEnv:
    """``n_envs`` copies of an env, each wrapped in ``Monitor`` (then ``wrapper_class``), as a ``VecEnv``.

    Args:
        env_id: a registered env id, or a class/function returning an env (called with ``env_kwargs``).
        n_envs: number of envs.
        seed: env ``i`` is seeded ``seed + i`` at the first reset (its action space too).
        start_index: the rank of the first env (its seed offset and monitor file name).
        monitor_dir: folder for the monitor files ``<rank>.monitor.csv`` (None: no files).
        wrapper_class: a wrapper applied to each env after ``Monitor``.
        env_kwargs: keyword arguments for ``gymnasium.make`` or ``env_id``.
        vec_env_cls: ``DummyVecEnv`` (default) or ``SubprocVecEnv``.
        vec_env_kwargs: keyword arguments for ``vec_env_cls``.
        monitor_kwargs: keyword arguments for ``Monitor``.
        wrapper_kwargs: keyword arguments for ``wrapper_class``.
    """
    if vec_env_cls is None:
        from lit_sb3.common.vec_env.dummy_vec_env import DummyVecEnv

        vec_env_cls = DummyVecEnv
    fns = [
        _MakeEnv(
            env_id,
            start_index + i,
            seed,
            dict(env_kwargs or {}),
            monitor_dir,
            dict(monitor_kwargs or {}),
            wrapper_class,
            dict(wrapper_kwargs or {}),
        )
        for i in range(n_envs)
    ]
    vec_env = vec_env_cls(fns, **(vec_env_kwargs or {}))  # type: ignore[arg-type]  # the classes take env factories
    vec_env.seed(seed)
    return vec_env


def make_atari_env(
    env_id: str | Callable[..., gym.Env],
    n_envs: int = 1,
    seed: int | None = None,
    start_index: int = 0,
    monitor_dir: str | None = None,
    wrapper_kwargs: dict[str, Any] | None = None,
    env_kwargs: dict[str, Any] | None = None,
    vec_env_cls: type[VecEnv] | None = None,
    vec_env_kwargs: dict[str, Any] | None = None,
    monitor_kwargs: dict[str, Any] | None = None,
) -> VecEnv:
    """``make_vec_env`` with SB3's ``AtariWrapper`` (noop reset, frame skip, life loss, 84x84 grey, clipped
    rewards) after the ``Monitor``, so the monitor sees whole games and real scores. Frames are not stacked:
    wrap the result in ``VecFrameStack(venv, n_stack=4)`` as SB3 does. Needs lit-sb3's ``atari`` extra."""
    from lit_sb3.common.atari_wrappers import AtariWrapper

    return make_vec_env(
        env_id,
        n_envs=n_envs,
        seed=seed,
        start_index=start_index,
        monitor_dir=monitor_dir,
        wrapper_class=AtariWrapper,
        env_kwargs=env_kwargs,
        vec_env_cls=vec_env_cls,
        vec_env_kwargs=vec_env_kwargs,
        monitor_kwargs=monitor_kwargs,
        wrapper_kwargs=wrapper_kwargs,
    )
