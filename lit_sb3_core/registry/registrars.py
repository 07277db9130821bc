"""The ``registry`` objects handed to plugin hooks, and the records they produce.

A registrar only records names and ``"module:attr"`` import strings: nothing is imported at registration
time, so discovering every installed plugin stays cheap. Records of one plugin are collected apart and
committed together, so a plugin whose hook raises half-way leaves nothing behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from lit_sb3_core.errors import DuplicateNameError, RegistrationError

__all__ = [
    "ActivationRegistrar",
    "AlgorithmRegistrar",
    "BufferRegistrar",
    "CallbackRegistrar",
    "Entry",
    "FeaturesExtractorRegistrar",
    "OptimizerRegistrar",
    "PolicyRegistrar",
    "ScheduleRegistrar",
]

_NAME = re.compile(r"[a-z0-9][a-z0-9_.\-]*\Z")
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_TARGET = re.compile(rf"{_DOTTED}:{_DOTTED}\Z")
_ALIAS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class Entry:
    """One registration: a name, where its class lives, and which plugin registered it.

    Attributes:
        kind: "algorithm", "policy", "callback", "buffer", "activation", "features_extractor",
            "optimizer" or "schedule".
        name: Lower-case registry name; for a policy, the alias as registered (e.g. "MlpLstmPolicy").
        target: ``"module:attr"`` import string.
        plugin: Name of the plugin (entry-point name) that registered it; "user" for ``register_algo``.
        distribution: Distribution that installed the plugin ("" when unknown).
        version: Version of that distribution.
        description: One line for ``lit-sb3 algos``.
        aliases: Extra lower-case names that resolve to this entry (algorithms only).
        algo: Algorithm name a policy alias belongs to (policies only).
        obj: The class, once imported (or when it was registered as a class).
    """

    kind: str
    name: str
    target: str
    plugin: str
    distribution: str = ""
    version: str = ""
    description: str = ""
    aliases: tuple[str, ...] = ()
    algo: str = ""
    obj: Any = field(default=None, repr=False, compare=False)

    @property
    def label(self) -> str:
        """Short form for listings, e.g. ``algorithm:ppo`` or ``policy:ppo/MlpLstmPolicy``."""
        return f"{self.kind}:{self.algo}/{self.name}" if self.kind == "policy" else f"{self.kind}:{self.name}"

    def matches(self, name: str) -> bool:
        """Whether ``name`` (already normalised) is this entry's name or one of its aliases."""
        if self.kind == "policy":
            return self.name.lower() == name.lower()
        return name == self.name or name in self.aliases


def normalize_name(kind: str, name: str) -> str:
    """Lower-case ``name`` and check it can be used bare and as ``"<plugin>/<name>"``."""
    if not isinstance(name, str):
        raise RegistrationError(f"A {kind} name must be a string, got {name!r}.")
    normalized = name.strip().lower()
    if not _NAME.match(normalized):
        raise RegistrationError(
            f"Invalid {kind} name {name!r}: use letters, digits, '_', '-' or '.', starting with a letter or "
            f"digit (no '/', which separates a plugin from a name)."
        )
    return normalized


def normalize_target(kind: str, name: str, target: object) -> tuple[str, Any]:
    """Return ``(import string, object or None)`` for a ``"module:attr"`` string or a class."""
    if isinstance(target, str):
        if not _TARGET.match(target):
            raise RegistrationError(
                f"Invalid target {target!r} for {kind} {name!r}: expected 'package.module:ClassName'."
            )
        return target, None
    if callable(target) and hasattr(target, "__module__") and hasattr(target, "__qualname__"):
        return f"{target.__module__}:{target.__qualname__}", target
    raise RegistrationError(
        f"Invalid target {target!r} for {kind} {name!r}: expected 'package.module:ClassName' or a class."
    )


class _Registrar:
    """Collects one plugin's registrations of one kind into a shared list."""

    kind: ClassVar[str]

    def __init__(self, entries: list[Entry], plugin: str, distribution: str = "", version: str = "") -> None:
        self._entries = entries
        self._plugin = plugin
        self._distribution = distribution
        self._version = version

    def _record(self, entry: Entry) -> None:
        for existing in self._entries:
            if existing.kind != entry.kind or existing.algo != entry.algo:
                continue
            if any(existing.matches(n) for n in (entry.name, *entry.aliases)):
                raise DuplicateNameError(entry.kind, entry.name, [self._plugin])
        self._entries.append(entry)

    def _entry(self, name: str, target: object, **extra: Any) -> Entry:
        target_string, obj = normalize_target(self.kind, name, target)
        return Entry(
            kind=self.kind,
            name=name,
            target=target_string,
            plugin=self._plugin,
            distribution=self._distribution,
            version=self._version,
            obj=obj,
            **extra,
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for plugin {self._plugin!r}>"


class _NamedRegistrar(_Registrar):
    """Registrar for kinds that are just ``name -> class`` (callbacks, buffers, activations, ...)."""

    def add(self, name: str, target: str | type, *, description: str = "") -> None:
        """Register ``name`` (case-insensitive) for the class at ``target``.

        Args:
            name: Registry name; stored lower-case.
            target: ``"package.module:ClassName"`` (imported on first use) or the class itself.
            description: One line shown in listings.
        """
        name = normalize_name(self.kind, name)
        self._record(self._entry(name, target, description=description))


class AlgorithmRegistrar(_Registrar):
    """The ``registry`` argument of ``lit_sb3_register_algorithms``."""

    kind = "algorithm"

    def add(
        self, name: str, target: str | type, *, description: str = "", aliases: Iterable[str] = ()
    ) -> None:
        """Register algorithm ``name`` for the class at ``target``.

        Args:
            name: Registry name, e.g. "ppo"; stored lower-case, looked up case-insensitively.
            target: ``"package.module:ClassName"`` (imported on first use) or the class itself.
            description: One line shown by ``lit-sb3 algos``.
            aliases: Extra names that resolve to the same registration, e.g. ``("ppo_lstm",)``.
        """
        name = normalize_name(self.kind, name)
        extra = tuple(dict.fromkeys(normalize_name(self.kind, a) for a in aliases if a.lower() != name))
        self._record(self._entry(name, target, description=description, aliases=extra))


class PolicyRegistrar(_Registrar):
    """The ``registry`` argument of ``lit_sb3_register_policies``."""

    kind = "policy"

    def add(self, algo: str, alias: str, target: str | type, *, description: str = "") -> None:
        """Register policy ``alias`` for algorithm ``algo`` (aliases are per algorithm, as in SB3).

        Args:
            algo: Registry name of the algorithm the alias applies to, e.g. "ppo".
            alias: Policy alias as users pass it, e.g. "MlpLstmPolicy" (matched case-insensitively).
            target: ``"package.module:ClassName"`` (imported on first use) or the class itself.
            description: One line shown in listings.
        """
        algo = normalize_name("algorithm", algo)
        if not isinstance(alias, str) or not _ALIAS.match(alias):
            raise RegistrationError(f"Invalid policy alias {alias!r} for {algo!r}: use a Python identifier.")
        self._record(self._entry(alias, target, description=description, algo=algo))


class CallbackRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_callbacks``."""

    kind = "callback"


class BufferRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_buffers``."""

    kind = "buffer"


class ActivationRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_activations``."""

    kind = "activation"


class FeaturesExtractorRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_features_extractors``."""

    kind = "features_extractor"


class OptimizerRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_optimizers``."""

    kind = "optimizer"


class ScheduleRegistrar(_NamedRegistrar):
    """The ``registry`` argument of ``lit_sb3_register_schedules``."""

    kind = "schedule"
