"""Where action masks come from: an ``action_masks()`` method on the environment.

An environment supports masking when it (or one of its wrappers) has a method ``action_masks()`` returning a
boolean array, ``True`` for the actions allowed in the current state. Its layout follows the action space:

* ``Discrete(n)``: ``n`` booleans;
* ``MultiDiscrete(nvec)``: ``sum(nvec)`` booleans, one block per sub-action, in order;
* ``MultiBinary(n)``: ``2 * n`` booleans, the pair ``(may be 0, may be 1)`` for each bit.

``ActionMasker`` adds the method to an environment that does not have it, from a function of the env.
Vector environments are asked through ``VectorEnv.call("action_masks")``, once per step for all sub-envs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

__all__ = ["MASK_METHOD", "ActionMasker", "get_action_masks", "is_masking_supported"]

MASK_METHOD = "action_masks"


class ActionMasker(gym.Wrapper):
    """Give an environment the ``action_masks()`` method MaskablePPO reads.

    Args:
        env: the environment to wrap.
        action_mask_fn: a function ``fn(env) -> mask`` called with the wrapped env, or the name of a method of
            the env that returns the mask.
    """

    def __init__(self, env: gym.Env, action_mask_fn: str | Callable[[gym.Env], np.ndarray]) -> None:
        super().__init__(env)
        if isinstance(action_mask_fn, str):
            method = getattr(env, action_mask_fn, None)
            if method is None:
                method = env.get_wrapper_attr(action_mask_fn)
            if not callable(method):
                raise TypeError(f"ActionMasker: {action_mask_fn!r} is not a method of {env}.")
            self._action_mask_fn: Callable[[], np.ndarray] = method
        elif callable(action_mask_fn):
            self._action_mask_fn = lambda: action_mask_fn(self.env)
        else:
            raise TypeError(
                f"ActionMasker needs a function env -> mask or a method name, got {type(action_mask_fn).__name__}."
            )

    def action_masks(self) -> np.ndarray:
        """The mask of the current state: ``True`` where the action is allowed."""
        return np.asarray(self._action_mask_fn(), dtype=bool)


def _base(env: Any) -> Any:
    # gymnasium's vector wrappers (RecordEpisodeStatistics, ...) do not forward ``call``; the base env does.
    return env.unwrapped if isinstance(env, VectorEnv) else env


def get_action_masks(env: gym.Env | VectorEnv) -> np.ndarray:
    """The current masks: ``(num_envs, mask_dims)`` for a vector env, ``(mask_dims,)`` for a single env."""
    if isinstance(env, VectorEnv):
        return np.stack([np.asarray(mask, dtype=bool).reshape(-1) for mask in _base(env).call(MASK_METHOD)])
    return np.asarray(env.get_wrapper_attr(MASK_METHOD)(), dtype=bool)


def is_masking_supported(env: gym.Env | VectorEnv) -> bool:
    """Whether ``env`` (every sub-env of a vector env) has an ``action_masks()`` method."""
    try:
        if isinstance(env, VectorEnv):
            _base(env).call(MASK_METHOD)
        else:
            env.get_wrapper_attr(MASK_METHOD)
    except AttributeError:
        return False
    return True
