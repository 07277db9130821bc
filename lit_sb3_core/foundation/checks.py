"""Validators for hyperparameters: each raises ``ConfigurationError`` naming the argument and the value.

Algorithms (core's and plugins') validate their constructor arguments with these, so every bad value gets
the same kind of message and no check is written out twice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lit_sb3_core.errors import ConfigurationError

__all__ = ["check_fraction", "check_positive_int"]


def check_positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is an integer >= 1 (``bool`` is refused); else ``ConfigurationError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigurationError(f"{name} must be a positive integer, got {value!r}.")
    return int(value)


def check_fraction(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a number in [0, 1]; else ``ConfigurationError``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not 0.0 <= value <= 1.0
    ):
        raise ConfigurationError(f"{name} must be a number in [0, 1], got {value!r}.")
    return float(value)
