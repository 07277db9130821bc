"""SB3's vec-env helpers: finding a wrapper in a ``VecEnv`` chain, and sharing normalization statistics."""

from __future__ import annotations

from copy import deepcopy
from typing import Any, TypeVar

from lit_sb3_core.engine.sb3_vec_env import VecEnv, VecEnvWrapper
from lit_sb3_core.engine.vec_env_views import find_vec_wrapper

__all__ = ["is_vecenv_wrapped", "sync_envs_normalization", "unwrap_vec_normalize", "unwrap_vec_wrapper"]

WrapperT = TypeVar("WrapperT", bound=VecEnvWrapper)


def unwrap_vec_wrapper(env: VecEnv, vec_wrapper_class: type[WrapperT]) -> WrapperT | None:
    """The first ``vec_wrapper_class`` in ``env``'s wrapper chain, or None."""
    return find_vec_wrapper(env, vec_wrapper_class)


def unwrap_vec_normalize(env: VecEnv) -> Any:
    """The ``VecNormalize`` in ``env``'s wrapper chain, or None."""
    from lit_sb3.common.vec_env.vec_normalize import VecNormalize

    return unwrap_vec_wrapper(env, VecNormalize)


def is_vecenv_wrapped(env: VecEnv, vec_wrapper_class: type[VecEnvWrapper]) -> bool:
    """Whether ``env`` is wrapped in ``vec_wrapper_class``."""
    return unwrap_vec_wrapper(env, vec_wrapper_class) is not None


def sync_envs_normalization(env: VecEnv, eval_env: VecEnv) -> None:
    """Copy the ``VecNormalize`` statistics of the training env into the evaluation env, wrapper by wrapper
    (the two must be wrapped alike); ``EvalCallback`` does it before each evaluation."""
    from lit_sb3.common.vec_env.vec_normalize import VecNormalize

    train, evaluation = env, eval_env
    while isinstance(train, VecEnvWrapper):
        if not isinstance(evaluation, VecEnvWrapper):
            raise TypeError(
                f"Cannot synchronize normalization: the training env is wrapped in {type(train).__name__} but the "
                f"evaluation env is {type(evaluation).__name__}. Wrap both envs the same way."
            )
        if isinstance(train, VecNormalize):
            if not isinstance(evaluation, VecNormalize):
                raise TypeError(
                    "Cannot synchronize normalization: the training env has a VecNormalize where the evaluation "
                    f"env has {type(evaluation).__name__}. Wrap both envs the same way."
                )
            if train.norm_obs:
                evaluation.obs_rms = deepcopy(train.obs_rms)
            evaluation.ret_rms = deepcopy(train.ret_rms)
        train, evaluation = train.venv, evaluation.venv
