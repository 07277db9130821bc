"""lit-sb3-qrdqn: Quantile Regression DQN. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["QRDQN", "CnnPolicy", "MultiInputPolicy", "QRDQNPolicy", "quantile_huber_loss"]

_LOCATIONS = {
    "QRDQN": "lit_sb3_qrdqn.qrdqn",
    "quantile_huber_loss": "lit_sb3_core.sdk",  # lives in the SDK since 0.2 (TQC shares it)
    "QRDQNPolicy": "lit_sb3_qrdqn.policies",
    "CnnPolicy": "lit_sb3_qrdqn.policies",
    "MultiInputPolicy": "lit_sb3_qrdqn.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_qrdqn' has no attribute {name!r}")
