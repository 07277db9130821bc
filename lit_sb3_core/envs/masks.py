"""The one reader of action masks: an ``action_masks()`` method on the environment (sb3-contrib's rule).

An env supports masking when it (or one of its wrappers) has ``action_masks()`` returning booleans, ``True``
for the actions allowed now, laid out after the action space (``Discrete(n)``: ``n``; ``MultiDiscrete``:
``sum(nvec)``, one block per sub-action; ``MultiBinary(n)``: ``2 * n``). Core's evaluation loop, the
MaskablePPO plugin and the facade's ``common.maskable.utils`` all read masks here, so they agree on shapes.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

__all__ = ["MASK_METHOD", "get_action_masks", "is_masking_supported"]

MASK_METHOD = "action_masks"


def _masks_of_each(env: Any) -> list[Any]:
    """One mask per sub-env of a vector env (gymnasium's, or an SB3 VecEnv)."""
    if hasattr(env, "env_method"):  # an SB3 VecEnv
        return list(env.env_method(MASK_METHOD))
    # gymnasium's vector wrappers do not forward call(); the base Sync/AsyncVectorEnv has it
    return list(env.unwrapped.call(MASK_METHOD))


def get_action_masks(env: gym.Env | VectorEnv | Any) -> np.ndarray:
    """The current masks: ``(num_envs, mask_dims)`` for a vector env, ``(mask_dims,)`` for a single env."""
    if isinstance(env, VectorEnv) or hasattr(env, "env_method"):
        return np.stack([np.asarray(mask, dtype=bool).reshape(-1) for mask in _masks_of_each(env)])
    return np.asarray(env.get_wrapper_attr(MASK_METHOD)(), dtype=bool)


def is_masking_supported(env: gym.Env | VectorEnv | Any) -> bool:
    """Whether ``env`` (every sub-env of a vector env) has an ``action_masks()`` method."""
    try:
        if isinstance(env, VectorEnv) or hasattr(env, "env_method"):
            _masks_of_each(env)
        else:
            env.get_wrapper_attr(MASK_METHOD)
    except AttributeError:
        return False
    return True
