"""``sb3_contrib.common.maskable.utils``: read the ``action_masks()`` of an env, a vector env or an SB3 VecEnv."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["get_action_masks", "is_masking_supported"]


def get_action_masks(env: Any) -> np.ndarray:
    """The current masks: ``(num_envs, mask_dims)`` for a vector env, ``(mask_dims,)`` for one env."""
    if hasattr(env, "env_method"):  # an SB3 VecEnv
        return np.stack([np.asarray(mask, dtype=bool).reshape(-1) for mask in env.env_method("action_masks")])
    from lit_sb3_ppo_mask.action_masks import get_action_masks as masks_of

    return masks_of(env)


def is_masking_supported(env: Any) -> bool:
    """Whether ``env`` (every sub-env of a vector env) has an ``action_masks()`` method."""
    if hasattr(env, "env_method"):
        try:
            env.env_method("action_masks")
        except AttributeError:
            return False
        return True
    from lit_sb3_ppo_mask.action_masks import is_masking_supported as supported

    return supported(env)
