"""SB3's ``common.buffers``: the replay buffers lit-sb3 trains with (``replay_buffer_class=ReplayBuffer``) and
SB3's numpy rollout buffers (``RolloutBuffer``, ``DictRolloutBuffer``) with SB3's constructors."""

from __future__ import annotations

from lit_sb3_core.data.replay_buffer import DictReplayBuffer, NStepReplayBuffer, ReplayBuffer
from lit_sb3_core.sb3.buffers import DictRolloutBuffer, RolloutBuffer

__all__ = ["DictReplayBuffer", "DictRolloutBuffer", "NStepReplayBuffer", "ReplayBuffer", "RolloutBuffer"]
