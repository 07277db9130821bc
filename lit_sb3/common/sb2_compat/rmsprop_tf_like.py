"""SB3's ``RMSpropTFLike`` (TensorFlow's RMSprop, rl-zoo3's A2C optimizer on Atari): the A2C plugin's."""

from __future__ import annotations

try:
    from lit_sb3_a2c.rmsprop_tf_like import RMSpropTFLike
except ImportError as exc:  # pragma: no cover - the plugin ships with lit-sb3
    raise ImportError("RMSpropTFLike comes with A2C: pip install lit-sb3-a2c") from exc

__all__ = ["RMSpropTFLike"]
