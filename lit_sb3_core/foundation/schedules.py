"""Hyperparameter schedules as SB3 defines them: functions of ``progress_remaining`` (1 at start, 0 at end).

The classes are SB3's (``ConstantSchedule``, ``LinearSchedule``, ``FloatSchedule``; the facade's
``lit_sb3.common.utils`` names are these), so ``model.clip_range.value_schedule.val`` reads as in SB3.
Schedules may be given as numbers, rl-zoo3 strings (``"lin_0.001"``) or callables.

Model files hold no code, so a schedule is written as JSON (:func:`schedule_to_json`): numbers stay
numbers, SB3's linear schedule its three numbers, and any other callable (a lambda) its values sampled at
:data:`SAMPLES` evenly spaced points of training, read back as a :class:`SampledSchedule` that
interpolates between them. The model samples a callable once, when it is built, to keep it in its
hyperparameters (Lightning drops what it cannot pickle when training starts).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

from lit_sb3_core.errors import ConfigurationError

Schedule = Callable[[float], float]
ScheduleLike = float | int | str | Schedule

__all__ = [
    "SAMPLES",
    "ConstantSchedule",
    "FloatSchedule",
    "LinearSchedule",
    "SampledSchedule",
    "Schedule",
    "ScheduleLike",
    "checked_schedule",
    "constant_schedule",
    "is_sampled",
    "is_saved_schedule",
    "jsonable_schedules",
    "linear_schedule",
    "make_schedule",
    "schedule_from_json",
    "schedule_to_json",
]

# Points a callable schedule is sampled at when saved: 1/1000 of training apart, so a stepped schedule is
# off only within the thousandth of training where it steps.
SAMPLES = 1001
_KIND = ":schedule:"  # the key that marks a schedule in a file's hyperparameters


class ConstantSchedule:
    """Always ``val``."""

    def __init__(self, val: float) -> None:
        self.val = val

    def __call__(self, _: float) -> float:
        return self.val

    def __repr__(self) -> str:
        return f"ConstantSchedule(val={self.val})"


class LinearSchedule:
    """From ``start`` to ``end`` over the first ``end_fraction`` of training, then ``end``."""

    def __init__(self, start: float, end: float, end_fraction: float) -> None:
        self.start = start
        self.end = end
        self.end_fraction = end_fraction

    def __call__(self, progress_remaining: float) -> float:
        done = 1.0 - progress_remaining
        if done > self.end_fraction:
            return self.end
        return self.start + done * (self.end - self.start) / self.end_fraction

    def __repr__(self) -> str:
        return f"LinearSchedule(start={self.start}, end={self.end}, end_fraction={self.end_fraction})"


class SampledSchedule:
    """A schedule known by its values at evenly spaced points, ``values[0]`` at the end of training
    (progress_remaining 0) to ``values[-1]`` at the start; linear in between. How a saved lambda loads."""

    def __init__(self, values: list[float]) -> None:
        if len(values) < 2:
            raise ConfigurationError(f"A sampled schedule needs at least 2 values, got {len(values)}.")
        self.values = [float(v) for v in values]

    def __call__(self, progress_remaining: float) -> float:
        position = min(max(float(progress_remaining), 0.0), 1.0) * (len(self.values) - 1)
        low = min(int(position), len(self.values) - 2)
        weight = position - low
        return self.values[low] + weight * (self.values[low + 1] - self.values[low])

    def __repr__(self) -> str:
        return f"SampledSchedule({len(self.values)} values, {self.values[-1]} -> {self.values[0]})"


_BUILT_IN = (ConstantSchedule, LinearSchedule, SampledSchedule)


class FloatSchedule:
    """A schedule (or a constant) whose values are plain floats, as SB3 wraps every schedule.

    ``name`` (lit-sb3's): check each value of a user's callable, finite and non-negative, or raise a
    :class:`~lit_sb3_core.errors.ConfigurationError` naming the hyperparameter.
    """

    def __init__(self, value_schedule: Schedule | float, name: str | None = None) -> None:
        if isinstance(value_schedule, FloatSchedule):
            self.value_schedule: Schedule = value_schedule.value_schedule
            name = name or value_schedule.name
        elif isinstance(value_schedule, (int, float)) and not isinstance(value_schedule, bool):
            self.value_schedule = ConstantSchedule(float(value_schedule))
        elif callable(value_schedule):
            self.value_schedule = value_schedule
        else:
            raise TypeError(
                f"A schedule must be a number or a callable, not {type(value_schedule).__name__}."
            )
        self.name: str | None = None if isinstance(self.value_schedule, _BUILT_IN) else name

    def __call__(self, progress_remaining: float) -> float:
        value = self.value_schedule(progress_remaining)
        if self.name is not None and not _is_schedule_value(value):
            raise ConfigurationError(
                f"The {self.name} schedule {self.value_schedule!r} returned {value!r} at progress_remaining="
                f"{progress_remaining:.4g}; a schedule must return finite, non-negative numbers."
            )
        return float(value)  # a plain float, as SB3's schedules give (numpy scalars become floats)

    def __repr__(self) -> str:
        return f"FloatSchedule({self.value_schedule})"


def constant_schedule(value: float) -> ConstantSchedule:
    """The registry's ``"constant"`` schedule."""
    return ConstantSchedule(float(value))


def linear_schedule(start: float, end: float = 0.0) -> LinearSchedule:
    """The registry's ``"linear"`` schedule: ``start`` to ``end`` over the whole of training (rl-zoo3's)."""
    return LinearSchedule(float(start), float(end), 1.0)


def make_schedule(value: ScheduleLike, name: str = "value") -> FloatSchedule:
    """Turn a number, an rl-zoo3 string (``"lin_0.001"``) or a callable into SB3's ``FloatSchedule``.

    A callable's values are checked as they are used (finite, non-negative).

    Raises:
        ConfigurationError: (a ValueError) for strings other than ``lin_<number>`` and for non-finite or
            negative numbers.
    """
    if callable(value):
        return FloatSchedule(value, name)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("lin_"):
            try:
                start = float(text[4:])
            except ValueError:
                start = float("nan")
            if start == start and start >= 0:  # not NaN
                return FloatSchedule(linear_schedule(start))
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
    return FloatSchedule(ConstantSchedule(number))


def checked_schedule(schedule: Schedule, name: str = "value") -> FloatSchedule:
    """``schedule`` with each value checked (finite, non-negative); the built-in schedules need no check."""
    return FloatSchedule(schedule, name)


def schedule_to_json(value: Any, name: str = "value") -> Any:
    """A schedule hyperparameter as a JSON value: numbers and strings as they are, SB3's constant and
    linear schedules by their numbers, any other callable by its values at :data:`SAMPLES` points.

    Raises:
        ConfigurationError: when a callable fails or returns something other than a finite number.
    """
    if isinstance(value, FloatSchedule):
        value = value.value_schedule
    if isinstance(value, ConstantSchedule):
        return float(value.val)
    if isinstance(value, LinearSchedule):
        return {_KIND: "linear", "start": value.start, "end": value.end, "end_fraction": value.end_fraction}
    if isinstance(value, SampledSchedule):
        return {_KIND: "sampled", "values": list(value.values)}
    if not callable(value) or isinstance(value, type):
        return value
    values = []
    for i in range(SAMPLES):
        progress = i / (SAMPLES - 1)
        try:
            sample = value(progress)
        except Exception as exc:
            raise ConfigurationError(
                f"The {name} schedule {value!r} raised {type(exc).__name__}: {exc} at progress_remaining="
                f"{progress:.4g}; it cannot be saved. Pass a number, 'lin_<start>' or a schedule that accepts "
                "any progress_remaining in [0, 1]."
            ) from None
        if not _is_schedule_value(sample):
            raise ConfigurationError(
                f"The {name} schedule {value!r} returned {sample!r} at progress_remaining={progress:.4g}; "
                "a schedule must return finite, non-negative numbers to be saved."
            )
        values.append(float(sample))
    return {_KIND: "sampled", "values": values}


def jsonable_schedules(hparams: Any) -> None:
    """Replace the callable schedules among a model's hyperparameters by their JSON form, in place.

    Lightning drops hyperparameters it cannot pickle (a lambda) when training starts, which would lose
    a schedule from the saved model; in JSON form they stay. Callables that are not schedules (an object
    whose ``__call__`` takes no progress) are left as they are.
    """
    for name, value in list(hparams.items()):
        if callable(value) and not isinstance(value, type):
            try:
                hparams[name] = schedule_to_json(value, name)
            except ConfigurationError:
                continue


def is_saved_schedule(value: Any) -> bool:
    """Whether a hyperparameter is a schedule in :func:`schedule_to_json`'s JSON form."""
    return isinstance(value, dict) and _KIND in value


def is_sampled(value: Any) -> bool:
    """Whether a file's hyperparameter is a callable saved as samples (see :func:`schedule_to_json`)."""
    return isinstance(value, dict) and value.get(_KIND) == "sampled"


def schedule_from_json(value: Any, name: str = "value") -> Any:
    """The schedule a :func:`schedule_to_json` value describes; any other value as it is.

    Raises:
        ConfigurationError: for a marked value that is not a well-formed schedule.
    """
    if not is_saved_schedule(value):
        return value
    kind = value[_KIND]
    if kind == "linear" and set(value) == {_KIND, "start", "end", "end_fraction"}:
        numbers_ = [value["start"], value["end"], value["end_fraction"]]
        if all(_is_schedule_value(v) for v in numbers_) and value["end_fraction"] > 0:
            return LinearSchedule(*(float(v) for v in numbers_))
    if kind == "sampled" and set(value) == {_KIND, "values"}:
        samples = value["values"]
        if (
            isinstance(samples, list)
            and len(samples) == SAMPLES
            and all(_is_schedule_value(v) for v in samples)
        ):
            return SampledSchedule(samples)
    raise ConfigurationError(
        f"The {name} schedule {str(value)[:120]} is not a well-formed saved schedule: a linear one has "
        f"non-negative start and end and end_fraction > 0; a sampled one has {SAMPLES} finite, non-negative "
        "values."
    )


def _is_schedule_value(value: Any) -> bool:
    """What a schedule may return: a finite, non-negative real number (numpy scalars included)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and 0 <= float(value) < math.inf
