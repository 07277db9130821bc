"""SB3's ``stable_baselines3.common.vec_env.vec_transpose``: ``VecTransposeImage`` (lit_sb3_core.sb3)."""

from __future__ import annotations

from lit_sb3_core.sb3.vec_transpose import VecTransposeImage

__all__ = ["VecTransposeImage"]
