"""RLAlgorithm's methods that moved onto the helpers it holds: the old spelling works for one release.

CONTRIBUTING's compatibility policy: a name of the SDK is removed or moved only after a release in which
the old spelling still works and raises a ``DeprecationWarning`` naming the new one. :class:`MovedName` is
that old spelling: a class attribute that, read from an instance, warns and returns the new bound method
(``model.log_iteration`` -> ``model.metrics.log_iteration``). A subclass that still *defines* an old name
gets the warning when the class is created, since the SDK no longer calls it.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

__all__ = ["MovedName", "warn_on_moved_overrides"]

REMOVED_IN = "0.4"


class MovedName:
    """The deprecated spelling of ``new`` (a dotted path on the algorithm, ``"metrics.log_iteration"``)."""

    def __init__(self, new: str, takes_algorithm: bool = False) -> None:
        self.new = new
        self.name = ""
        self.takes_algorithm = takes_algorithm  # the new function takes the algorithm first

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def message(self) -> str:
        return (
            f"RLAlgorithm.{self.name} is deprecated and will be removed in {REMOVED_IN}: "
            f"use self.{self.new} instead."
        )

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:  # class access (dir, inspect, monkeypatch): the descriptor itself, silently
            return self
        warnings.warn(self.message(), DeprecationWarning, stacklevel=2)
        target = instance
        for part in self.new.split("."):
            target = getattr(target, part)
        return functools.partial(target, instance) if self.takes_algorithm else target


def warn_on_moved_overrides(cls: type) -> None:
    """Warn when ``cls`` defines a method under a moved name: the SDK calls the new one, not it."""
    for name, value in vars(cls).items():
        if isinstance(value, MovedName):
            continue
        for base in cls.__mro__[1:]:
            moved = vars(base).get(name)
            if isinstance(moved, MovedName):
                warnings.warn(
                    f"{cls.__qualname__}.{name} overrides a moved name, which the SDK no longer calls; "
                    f"{moved.message()}",
                    DeprecationWarning,
                    stacklevel=3,
                )
                break
