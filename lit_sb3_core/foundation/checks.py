"""Validators for hyperparameters: each raises ``ConfigurationError`` naming the argument and the value.

Every algorithm (core's and plugins') validates its constructor arguments with these, in one place, so
every bad value gets the same kind of message, a value read from a model file or a checkpoint is checked
exactly as one passed in Python (the loader names the file and the field: ``'run.zip':
hyperparameters.vf_coef must be a finite number >= 0, got nan``), and no check is written out twice.

Numbers must be finite (NaN and infinity are refused everywhere), integers must be integers (``bool`` is
refused: ``True`` is not a batch size), and relations between arguments (``batch_size <= buffer_size``)
have their own check that names both. A ``hint`` adds a sentence on what the value means or how to fix it;
``error`` raises a subclass of ``ConfigurationError`` where SB3 raises another built-in type for the same
value (``InvalidArgumentError`` is also an ``AssertionError``, as SB3 asserts).

The predicates ``is_int`` and ``is_number`` are the same definitions for readers of files and checkpoints,
which refuse a bad field with their own error naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, TypeGuard

import numpy as np

from lit_sb3_core.errors import ConfigurationError

__all__ = [
    "check_at_most",
    "check_below",
    "check_bool",
    "check_choice",
    "check_fraction",
    "check_int",
    "check_layer_sizes",
    "check_non_negative_int",
    "check_number",
    "check_numbers",
    "check_positive_int",
    "check_positive_number",
    "is_int",
    "is_number",
]


def is_int(value: Any, minimum: int | None = None) -> TypeGuard[int | np.integer[Any]]:
    """Whether ``value`` is an integer (Python or NumPy; ``bool`` is not) and at least ``minimum``."""
    return bool(
        not isinstance(value, bool)
        and isinstance(value, (int, np.integer))
        and (minimum is None or value >= minimum)
    )


def is_number(
    value: Any, minimum: float | None = None
) -> TypeGuard[float | np.integer[Any] | np.floating[Any]]:
    """Whether ``value`` is a finite real number (``bool`` is not) and at least ``minimum``."""
    return bool(
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
        and (minimum is None or value >= minimum)
    )


def check_int(
    name: str,
    value: Any,
    *,
    minimum: int | None = 1,
    allow_none: bool = False,
    hint: str = "",
    error: type[ConfigurationError] = ConfigurationError,
) -> Any:
    """``value`` as an ``int`` if it is an integer >= ``minimum`` (``bool`` is refused).

    Args:
        name: The argument's name, for the message (and ``ConfigurationError.field``).
        value: What was given.
        minimum: The smallest allowed value (``None``: any integer).
        allow_none: ``None`` is accepted (and returned) too.
        hint: A sentence added to the message: what the value means, or how to fix it.
        error: The class raised, ``ConfigurationError`` or a subclass.
    """
    if value is None and allow_none:
        return None
    if not is_int(value, minimum):
        if minimum is None:
            wanted = "an integer"
        else:
            wanted = {1: "a positive integer", 0: "a non-negative integer"}.get(
                minimum, f"an integer >= {minimum}"
            )
        raise error(f"{name} must be {wanted}{_or_none(allow_none)}, got {value!r}.{_hint(hint)}", field=name)
    return int(value)


def check_positive_int(name: str, value: Any, *, hint: str = "") -> int:
    """``value`` as an ``int`` if it is an integer >= 1 (``bool`` is refused); else ``ConfigurationError``."""
    return check_int(name, value, minimum=1, hint=hint)


def check_non_negative_int(name: str, value: Any, *, hint: str = "") -> int:
    """``value`` as an ``int`` if it is an integer >= 0 (``bool`` is refused)."""
    return check_int(name, value, minimum=0, hint=hint)


def check_number(
    name: str,
    value: Any,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    exclusive_maximum: bool = False,
    allow_none: bool = False,
    hint: str = "",
    error: type[ConfigurationError] = ConfigurationError,
) -> Any:
    """``value`` as a ``float`` if it is a finite number within the bounds (NaN and infinity are refused).

    Args:
        name: The argument's name.
        value: What was given.
        minimum / maximum: Inclusive bounds (``None``: unbounded).
        exclusive_minimum: ``value`` must be strictly above ``minimum``.
        exclusive_maximum: ``value`` must be strictly below ``maximum``.
        allow_none: ``None`` is accepted (and returned) too.
        hint: A sentence added to the message: what the value means, or how to fix it.
        error: The class raised, ``ConfigurationError`` or a subclass.
    """
    if value is None and allow_none:
        return None
    ok = (
        is_number(value)
        and (minimum is None or (value > minimum if exclusive_minimum else value >= minimum))
        and (maximum is None or (value < maximum if exclusive_maximum else value <= maximum))
    )
    if not ok:
        wanted = "a finite number" + _bounds(minimum, maximum, exclusive_minimum, exclusive_maximum)
        raise error(f"{name} must be {wanted}{_or_none(allow_none)}, got {value!r}.{_hint(hint)}", field=name)
    return float(value)


def check_positive_number(
    name: str,
    value: Any,
    *,
    allow_none: bool = False,
    hint: str = "",
    error: type[ConfigurationError] = ConfigurationError,
) -> Any:
    """``value`` as a ``float`` if it is a finite number > 0."""
    return check_number(
        name, value, minimum=0.0, exclusive_minimum=True, allow_none=allow_none, hint=hint, error=error
    )


def check_numbers(name: str, value: Any, *, minimum: float | None = None) -> np.ndarray:
    """``value`` as a float64 array if it is a finite number or a flat list of them, each >= ``minimum``
    (a scale per action dimension, say); else ``ConfigurationError``."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.array([np.nan])
    if (
        array.ndim > 1
        or not np.all(np.isfinite(array))
        or (minimum is not None and np.any(array < minimum))
        or isinstance(value, (bool, np.bool_))
    ):
        wanted = "a finite number or a list of finite numbers" + _bounds(minimum, None, False, False)
        raise ConfigurationError(f"{name} must be {wanted}, got {value!r}.", field=name)
    return array


def check_layer_sizes(name: str, value: Any, example: str = "[64, 64]") -> list[int]:
    """``value`` as a list of ``int`` if it is a list or tuple of positive integers (an MLP's hidden
    layers; empty: none)."""
    if not isinstance(value, (list, tuple)) or not all(is_int(n, 1) for n in value):
        raise ConfigurationError(
            f"{name} must be a list of positive layer sizes such as {example}, got {value!r}.", field=name
        )
    return [int(n) for n in value]


def check_fraction(name: str, value: Any) -> float:
    """``value`` as a ``float`` if it is a number in [0, 1]; else ``ConfigurationError``."""
    if not (is_number(value) and 0.0 <= value <= 1.0):
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


def check_below(name: str, value: Any, limit_name: str, limit: Any, fix: str = "") -> None:
    """``value < limit``, two arguments that bound each other strictly (atoms dropped < atoms there)."""
    if not value < limit:
        raise ConfigurationError(
            f"{name}={value!r} must be less than {limit_name}={limit!r}." + (f" {fix}" if fix else ""),
            field=name,
        )


def _bounds(minimum: float | None, maximum: float | None, exclusive_min: bool, exclusive_max: bool) -> str:
    bounds = []
    if minimum is not None:
        bounds.append(f"{'>' if exclusive_min else '>='} {minimum:g}")
    if maximum is not None:
        bounds.append(f"{'<' if exclusive_max else '<='} {maximum:g}")
    return f" {' and '.join(bounds)}" if bounds else ""


def _hint(hint: str) -> str:
    return f" {hint}" if hint else ""


def _or_none(allow_none: bool) -> str:
    return " or None" if allow_none else ""
