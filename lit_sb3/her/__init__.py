"""SB3's ``her`` package: ``HerReplayBuffer`` and ``GoalSelectionStrategy`` (the HER plugin's)."""

from __future__ import annotations

from lit_sb3.her.goal_selection_strategy import GoalSelectionStrategy
from lit_sb3.her.her_replay_buffer import HerReplayBuffer

__all__ = ["GoalSelectionStrategy", "HerReplayBuffer"]
