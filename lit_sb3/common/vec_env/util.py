"""SB3's vec-env helpers: finding a wrapper in a ``VecEnv`` chain, sharing normalization statistics, and
SB3's ``vec_env.util`` functions for observations of structured spaces."""

from __future__ import annotations

from copy import deepcopy
from typing import Any, TypeVar, cast

import numpy as np
from gymnasium import spaces

from lit_sb3_core.errors import NestedSpaceError
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvWrapper
from lit_sb3_core.sb3.vec_env_views import find_vec_wrapper

__all__ = [
    "copy_obs_dict",
    "dict_to_obs",
    "is_vecenv_wrapped",
    "obs_space_info",
    "sync_envs_normalization",
    "unwrap_vec_normalize",
    "unwrap_vec_wrapper",
]

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


def copy_obs_dict(obs: dict[Any, np.ndarray]) -> dict[Any, np.ndarray]:
    """A copy of a dict of observation arrays."""
    return {key: np.copy(value) for key, value in obs.items()}


def obs_space_info(
    obs_space: spaces.Space,
) -> tuple[list[Any], dict[Any, tuple[int, ...]], dict[Any, np.dtype]]:
    """``(keys, shapes, dtypes)`` of a space: a Dict's keys, a Tuple's indices, or ``[None]`` for other spaces."""
    if isinstance(obs_space, spaces.Dict):
        subspaces: dict[Any, spaces.Space] = dict(obs_space.spaces)
    elif isinstance(obs_space, spaces.Tuple):
        subspaces = dict(enumerate(obs_space.spaces))
    else:
        subspaces = {None: obs_space}
    nested = [key for key, sub in subspaces.items() if isinstance(sub, (spaces.Dict, spaces.Tuple))]
    if nested:
        raise NestedSpaceError(
            f"Nested observation spaces are not supported (Dict or Tuple spaces at keys {nested}): flatten them "
            "to one level of keys, e.g. with gymnasium.wrappers.FlattenObservation on the nested part."
        )
    return (
        list(subspaces),
        {k: cast(tuple[int, ...], s.shape) for k, s in subspaces.items()},  # leaf spaces have both
        {k: cast(np.dtype, s.dtype) for k, s in subspaces.items()},
    )


def dict_to_obs(obs_space: spaces.Space, obs_dict: dict[Any, np.ndarray]) -> Any:
    """The inverse of ``obs_space_info``'s keying: a Dict stays a dict, a Tuple becomes a tuple, others the
    value at key None."""
    if isinstance(obs_space, spaces.Dict):
        return obs_dict
    if isinstance(obs_space, spaces.Tuple):
        return tuple(obs_dict[i] for i in range(len(obs_space.spaces)))
    if set(obs_dict) != {None}:
        raise ValueError(
            f"An unstructured observation space takes the key None only, not {sorted(map(str, obs_dict))}."
        )
    return obs_dict[None]
