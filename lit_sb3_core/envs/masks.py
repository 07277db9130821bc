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

from lit_sb3_core.errors import MissingActionMasksError

__all__ = ["MASK_METHOD", "check_masking_supported", "get_action_masks", "is_masking_supported"]

MASK_METHOD = "action_masks"


def _masks_of_each(env: Any) -> list[Any]:
    """One mask per sub-env of a vector env (gymnasium's, or an SB3 VecEnv)."""
    if hasattr(env, "env_method"):  # an SB3 VecEnv
        return list(env.env_method(MASK_METHOD))
    # gymnasium's vector wrappers do not forward call(); the base Sync/AsyncVectorEnv has it
    return list(env.unwrapped.call(MASK_METHOD))


def _missing(env: Any) -> MissingActionMasksError:
    return MissingActionMasksError(
        f"Action masking needs an {MASK_METHOD}() method on the env, and {type(env).__name__} (or a sub-env) has "
        "none. Add one to the env, wrap it with ActionMasker(env, mask_fn), or turn masking off "
        "(use_masking=False)."
    )


def get_action_masks(env: gym.Env | VectorEnv | Any) -> np.ndarray:
    """The current masks: ``(num_envs, mask_dims)`` for a vector env, ``(mask_dims,)`` for a single env.

    Raises ``MissingActionMasksError`` (a ``ValueError`` and an ``AttributeError``) for an env without
    ``action_masks()``; ask ``is_masking_supported`` first for subprocess envs, whose workers stop on an error.
    """
    try:
        if isinstance(env, VectorEnv) or hasattr(env, "env_method"):
            return np.stack([np.asarray(mask, dtype=bool).reshape(-1) for mask in _masks_of_each(env)])
        return np.asarray(env.get_wrapper_attr(MASK_METHOD)(), dtype=bool)
    except MissingActionMasksError:
        raise
    except AttributeError as error:
        if MASK_METHOD not in str(error):
            raise
        raise _missing(env) from error


def is_masking_supported(env: gym.Env | VectorEnv | Any) -> bool:
    """Whether ``env`` (every sub-env of a vector env) has an ``action_masks()`` method, through its
    wrappers (``Monitor`` included). Asks ``has_wrapper_attr``, so no sub-env raises (a subprocess env
    would stop its workers)."""
    try:
        if hasattr(env, "env_method"):  # an SB3 VecEnv
            return all(env.env_method("has_wrapper_attr", MASK_METHOD))
        if isinstance(env, VectorEnv):
            base: Any = env.unwrapped  # Sync/AsyncVectorEnv: call() runs a method in every sub-env
            return all(base.call("has_wrapper_attr", MASK_METHOD))
        return bool(env.has_wrapper_attr(MASK_METHOD))
    except AttributeError:
        return False


def check_masking_supported(env: gym.Env | VectorEnv | Any) -> None:
    """Raise ``MissingActionMasksError`` unless ``env`` gives action masks (before a run that needs them)."""
    if not is_masking_supported(env):
        raise _missing(env)
