"""SB3's ``HerReplayBuffer``: the HER plugin's buffer (``replay_buffer_class=HerReplayBuffer``)."""

from __future__ import annotations

try:
    from lit_sb3_her.buffer import HerReplayBuffer
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("HerReplayBuffer comes with the HER plugin: pip install lit-sb3-her") from exc

__all__ = ["HerReplayBuffer"]
