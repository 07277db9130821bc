"""SB3's ``common.atari_wrappers``: the Atari preprocessing wrappers, lit-sb3's own under SB3's names.

``AtariWrapper`` composes them in SB3's order and steps exactly as SB3's does: the same frames, rewards,
terminations and truncations for the same seed and actions. Needs the ``atari`` extra:
``pip install 'lit-sb3-core[atari]'``.
"""

from __future__ import annotations

from lit_sb3_core.envs.atari import (
    AtariWrapper,
    ClipRewardEnv,
    EpisodicLifeEnv,
    FireResetEnv,
    MaxAndSkipEnv,
    NoopResetEnv,
    StickyActionEnv,
    WarpFrame,
)

__all__ = [
    "AtariWrapper",
    "ClipRewardEnv",
    "EpisodicLifeEnv",
    "FireResetEnv",
    "MaxAndSkipEnv",
    "NoopResetEnv",
    "StickyActionEnv",
    "WarpFrame",
]
