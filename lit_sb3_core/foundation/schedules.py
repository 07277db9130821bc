"""Hyperparameter schedules as SB3 defines them: functions of ``progress_remaining`` (1 at start, 0 at end).

Hyperparameters must stay plain JSON values (for ``save_hyperparameters`` and LightningCLI), so schedules are
given as numbers or strings (``"lin_0.001"``) and turned into callables here.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

from lit_sb3_core.errors import ConfigurationError

Schedule = Callable[[float], float]
ScheduleLike = float | int | str | Schedule

__all__ = [
    "Schedule",
    "ScheduleLike",
    "checked_schedule",
    "constant_schedule",
    "linear_schedule",
    "make_schedule",
]


class constant_schedule:
    """A schedule that always returns ``value``."""

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def __call__(self, progress_remaining: float) -> float:
        return self.value

    def __repr__(self) -> str:
        return f"constant_schedule({self.value})"


class linear_schedule:
    """Linear interpolation from ``start`` (progress_remaining=1) to ``end`` (progress_remaining=0)."""

    def __init__(self, start: float, end: float = 0.0) -> None:
        self.start = float(start)
        self.end = float(end)

    def __call__(self, progress_remaining: float) -> float:
        return self.end + progress_remaining * (self.start - self.end)

    def __repr__(self) -> str:
        return f"linear_schedule({self.start}, {self.end})"


def make_schedule(value: ScheduleLike, name: str = "value") -> Schedule:
    """Turn a number, an rl-zoo3 string (``"lin_0.001"``) or a callable into a schedule.

    Raises:
        ConfigurationError: (a ValueError) for strings other than ``lin_<number>`` and for non-finite or
            negative numbers.
    """
    if callable(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("lin_"):
            try:
                start = float(text[4:])
            except ValueError:
                start = float("nan")
            if start == start and start >= 0:  # not NaN
                return linear_schedule(start)
        else:
            try:
                return make_schedule(float(text), name)
            except ValueError:
                pass
        raise ConfigurationError(
            f"{name}={value!r} is not a valid schedule: use a number, 'lin_<start>' (linear from <start> "
            "to 0 over training, as rl-zoo3 writes it) or a callable of progress_remaining."
        )
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(
            f"{name} must be a number, 'lin_<start>' or a callable, got {type(value).__name__}."
        )
    number = float(value)
    if not (number >= 0 and number != float("inf")):
        raise ConfigurationError(f"{name} must be a finite, non-negative number, got {value!r}.")
    return constant_schedule(number)


class _CheckedSchedule:
    """A user's schedule whose every value is checked: finite and non-negative, or a clear error."""

    def __init__(self, schedule: Schedule, name: str) -> None:
        self.schedule = schedule
        self.name = name

    def __call__(self, progress_remaining: float) -> float:
        value = self.schedule(progress_remaining)
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value < float("inf"):
            raise ConfigurationError(
                f"The {self.name} schedule {self.schedule!r} returned {value!r} at progress_remaining="
                f"{progress_remaining:.4g}; a schedule must return finite, non-negative numbers."
            )
        return float(value)  # a plain float, as SB3's schedules give (numpy scalars become floats)

    def __repr__(self) -> str:
        return repr(self.schedule)


def checked_schedule(schedule: Schedule, name: str = "value") -> Schedule:
    """``schedule`` with each value checked (finite, non-negative); the built-in schedules need no check."""
    if isinstance(schedule, (constant_schedule, linear_schedule, _CheckedSchedule)):
        return schedule
    return _CheckedSchedule(schedule, name)
