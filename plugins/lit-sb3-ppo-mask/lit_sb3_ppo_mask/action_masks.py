"""Where action masks come from: an ``action_masks()`` method on the environment.

An environment supports masking when it (or one of its wrappers) has a method ``action_masks()`` returning a
boolean array, ``True`` for the actions allowed in the current state. Its layout follows the action space:

* ``Discrete(n)``: ``n`` booleans;
* ``MultiDiscrete(nvec)``: ``sum(nvec)`` booleans, one block per sub-action, in order;
* ``MultiBinary(n)``: ``2 * n`` booleans, the pair ``(may be 0, may be 1)`` for each bit.

``ActionMasker`` adds the method to an environment that does not have it, from a function of the env.
Vector environments are asked through ``VectorEnv.call("action_masks")``, once per step for all sub-envs;
the reader (``get_action_masks``, ``is_masking_supported``) is core's, from the SDK.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv

__all__ = ["MASK_METHOD", "ActionMasker", "get_action_masks", "is_masking_supported"]

MASK_METHOD = "action_masks"  # the method name ActionMasker gives an env (core's reader calls it)


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


# Core's one reader (lit_sb3_core.sdk), imported when first asked: this module is imported in async env
# workers (ActionMasker), which must stay free of torch and Lightning.
def get_action_masks(env: gym.Env | VectorEnv) -> np.ndarray:
    """The current masks: ``(num_envs, mask_dims)`` for a vector env, ``(mask_dims,)`` for a single env."""
    from lit_sb3_core.sdk import get_action_masks as read

    return read(env)


def is_masking_supported(env: gym.Env | VectorEnv) -> bool:
    """Whether ``env`` (every sub-env of a vector env) has an ``action_masks()`` method."""
    from lit_sb3_core.sdk import is_masking_supported as supported

    return supported(env)
