"""Validators for hyperparameters: each raises ``ConfigurationError`` naming the argument and the value.

Every algorithm (core's and plugins') validates its constructor arguments with these, in one place, so
every bad value gets the same kind of message, a value read from a model file or a checkpoint is checked
exactly as one passed in Python (the loader names the file and the field: ``'run.zip':
hyperparameters.vf_coef must be a finite number >= 0, got nan``), and no check is written out twice.

Numbers must be finite (NaN and infinity are refused everywhere), integers must be integers (``bool`` is
refused: ``True`` is not a batch size), and relations between arguments (``batch_size <= buffer_size``)
have their own check that names both.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np

from lit_sb3_core.errors import ConfigurationError

__all__ = [
    "check_at_most",
    "check_bool",
    "check_choice",
    "check_fraction",
    "check_int",
    "check_non_negative_int",
    "check_number",
    "check_positive_int",
    "check_positive_number",
]


def check_int(name: str, value: Any, *, minimum: int | None = 1, allow_none: bool = False) -> Any:
    """``value`` as an ``int`` if it is an integer >= ``minimum`` (``bool`` is refused).

    Args:
        name: The argument's name, for the message (and ``ConfigurationError.field``).
        value: What was given.
        minimum: The smallest allowed value (``None``: any integer).
        allow_none: ``None`` is accepted (and returned) too.
    """
    if value is None and allow_none:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or (minimum is not None and value < minimum)
    ):
        if minimum is None:
            wanted = "an integer"
        else:
            wanted = {1: "a positive integer", 0: "a non-negative integer"}.get(
                minimum, f"an integer >= {minimum}"
            )
        raise ConfigurationError(f"{name} must be {wanted}{_or_none(allow_none)}, got {value!r}.", field=name)
    return int(value)


def check_positive_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is an integer >= 1 (``bool`` is refused); else ``ConfigurationError``."""
    return check_int(name, value, minimum=1)


def check_non_negative_int(name: str, value: Any) -> int:
    """``value`` as an ``int`` if it is an integer >= 0 (``bool`` is refused)."""
    return check_int(name, value, minimum=0)


def check_number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
    allow_none: bool = False,
) -> Any:
    """``value`` as a ``float`` if it is a finite number within the bounds (NaN and infinity are refused).

    Args:
        name: The argument's name.
        value: What was given.
        minimum / maximum: Inclusive bounds (``None``: unbounded).
        exclusive_minimum: ``value`` must be strictly above ``minimum``.
        exclusive_maximum: ``value`` must be strictly below ``maximum``.
        allow_none: ``None`` is accepted (and returned) too.
    """
    if value is None and allow_none:
        return None
    ok = (
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
        and (minimum is None or (value > minimum if exclusive_minimum else value >= minimum))
        and (maximum is None or (value < maximum if exclusive_maximum else value <= maximum))
    )
    if not ok:
        bounds = []
        if minimum is not None:
            bounds.append(f"{'>' if exclusive_minimum else '>='} {minimum:g}")
        if maximum is not None:
            bounds.append(f"{'<' if exclusive_maximum else '<='} {maximum:g}")
        wanted = "a finite number" + (f" {' and '.join(bounds)}" if bounds else "")
        raise ConfigurationError(f"{name} must be {wanted}{_or_none(allow_none)}, got {value!r}.", field=name)
    return float(value)


def check_positive_number(name: str, value: Any, *, allow_none: bool = False) -> Any:
    """``value`` as a ``float`` if it is a finite number > 0."""
    return check_number(name, value, minimum=0.0, exclusive_minimum=True, allow_none=allow_none)


def check_fraction(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a number in [0, 1]; else ``ConfigurationError``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not 0.0 <= value <= 1.0
    ):
        raise ConfigurationError(f"{name} must be a number in [0, 1], got {value!r}.", field=name)
    return float(value)


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is ``True`` or ``False`` (``0``/``1`` and strings are refused: configs mean booleans)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ConfigurationError(f"{name} must be True or False, got {value!r}.", field=name)
    return bool(value)


def check_choice(name: str, value: Any, choices: Collection[Any]) -> Any:
    """``value`` if it is one of ``choices``."""
    if value not in choices:
        shown = ", ".join(repr(choice) for choice in choices)
        raise ConfigurationError(f"{name} must be one of {shown}, got {value!r}.", field=name)
    return value


def check_at_most(name: str, value: Any, limit_name: str, limit: Any, fix: str = "") -> None:
    """``value <= limit``, two arguments that bound each other (``batch_size <= buffer_size``)."""
    if value > limit:
        raise ConfigurationError(
            f"{name}={value!r} is larger than {limit_name}={limit!r}; it must be at most {limit_name}."
            + (f" {fix}" if fix else ""),
            field=name,
        )


def _or_none(allow_none: bool) -> str:
    return " or None" if allow_none else ""
