"""SB3's ``common.base_class``: ``BaseAlgorithm`` is lit-sb3's ``RLAlgorithm`` (the base of every algorithm)."""

from __future__ import annotations

from lit_sb3_core.sdk import RLAlgorithm as BaseAlgorithm

__all__ = ["BaseAlgorithm"]
