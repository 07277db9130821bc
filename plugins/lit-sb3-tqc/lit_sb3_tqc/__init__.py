"""lit-sb3-tqc: Truncated Quantile Critics. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["TQC", "CnnPolicy", "MultiInputPolicy", "QuantileCritic", "TQCPolicy", "truncated_quantiles"]

_LOCATIONS = {
    "TQC": "lit_sb3_tqc.tqc",
    "truncated_quantiles": "lit_sb3_tqc.tqc",
    "TQCPolicy": "lit_sb3_tqc.policies",
    "QuantileCritic": "lit_sb3_tqc.policies",
    "CnnPolicy": "lit_sb3_tqc.policies",
    "MultiInputPolicy": "lit_sb3_tqc.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_tqc' has no attribute {name!r}")
