"""``sb3_contrib.common.maskable.utils``: read the ``action_masks()`` of an env, a vector env or an SB3 VecEnv."""

from __future__ import annotations

from lit_sb3_core.envs.masks import get_action_masks, is_masking_supported

__all__ = ["get_action_masks", "is_masking_supported"]
