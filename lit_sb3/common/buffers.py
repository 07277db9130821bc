"""SB3's ``common.buffers``: lit-sb3's rollout and replay buffers (``replay_buffer_class=ReplayBuffer``)."""

from __future__ import annotations

from lit_sb3_core.data.replay_buffer import DictReplayBuffer, NStepReplayBuffer, ReplayBuffer
from lit_sb3_core.data.rollout_buffer import RolloutBuffer

__all__ = ["DictReplayBuffer", "NStepReplayBuffer", "ReplayBuffer", "RolloutBuffer"]
