"""The registry: algorithms, policies, callbacks and replay buffers by name, provided by plugins.

Names are lower-case and looked up case-insensitively (``make_algo("PPO")``). When two plugins register
the same name, ``"<plugin>/<name>"`` picks one and the bare name raises :class:`AmbiguousNameError`.
Registrations made from user code (:func:`register_algo`) win over plugins for the bare name; they belong
to the plugin name ``"user"``. Classes are imported on first use, from their ``"module:attr"`` target.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import importlib
from dataclasses import dataclass
from typing import Any

from lit_sb3_core.errors import (
    AmbiguousNameError,
    DuplicateNameError,
    MissingPluginError,
    RegistryError,
    TargetImportError,
    UnknownNameError,
)
from lit_sb3_core.foundation.first_party import FIRST_PARTY, SB3_CLASS_NAMES
from lit_sb3_core.registry import plugins as _plugins
from lit_sb3_core.registry.plugins import USER_PLUGIN, PluginInfo
from lit_sb3_core.registry.registrars import Entry, normalize_name, normalize_target

__all__ = [
    "FIRST_PARTY",
    "SB3_CLASS_NAMES",
    "AlgoSpec",
    "algo_spec",
    "get_algo_class",
    "get_buffer_class",
    "get_policy_class",
    "list_algos",
    "list_buffers",
    "list_callbacks",
    "list_plugins",
    "list_policies",
    "make_algo",
    "make_callback",
    "register_algo",
    "resolve_sb3_class_name",
]

_BUFFER_NAMES = frozenset({"her"})  # first-party names that are replay buffers, not algorithms


@dataclass(frozen=True)
class AlgoSpec:
    """Where an algorithm comes from, without importing it.

    Attributes:
        name: Registry name, lower-case (``"ppo"``).
        target: ``"module:attr"`` import string of the class.
        description: One line from the plugin.
        plugin: Entry-point name of the plugin that registered it (``"user"`` for :func:`register_algo`).
        distribution: Distribution that installed the plugin ("" when unknown).
        version: Version of that distribution ("" when unknown).
        aliases: Other names that resolve to it.
    """

    name: str
    target: str
    description: str
    plugin: str
    distribution: str
    version: str
    aliases: tuple[str, ...] = ()

    @property
    def class_name(self) -> str:
        """The class's name, from the target (``"lit_sb3_ppo.ppo:PPO"`` -> ``"PPO"``)."""
        return _class_name(self.target)


# --- algorithms ---------------------------------------------------------------------------------------


def make_algo(name: str, /, **kwargs: Any) -> Any:
    """Instantiate the algorithm registered as ``name``: ``make_algo("ppo", env="CartPole-v1")``.

    Raises:
        UnknownNameError: No such algorithm (the message says what exists and what to install).
        AmbiguousNameError: Two plugins provide ``name``; ask for ``"<plugin>/<name>"``.
        TargetImportError: The plugin's class could not be imported.
    """
    return get_algo_class(name)(**kwargs)


def get_algo_class(name: str) -> type[Any]:
    """The class registered as algorithm ``name`` (imported now if it was not yet)."""
    return _load(_find("algorithm", name))


def algo_spec(name: str) -> AlgoSpec:
    """What is registered as algorithm ``name``, without importing it."""
    return _spec(_find("algorithm", name))


def list_algos(pattern: str = "*") -> list[str]:
    """Sorted names of the registered algorithms matching the shell-style ``pattern`` (case-insensitive)."""
    return _list("algorithm", pattern)


def register_algo(name: str, target: str | type, *, description: str = "", override: bool = False) -> None:
    """Register an algorithm from user code, without writing a plugin.

    Args:
        name: Registry name; stored lower-case.
        target: ``"package.module:ClassName"`` (imported on first use) or the class itself.
        description: One line shown by ``lit-sb3 algos``.
        override: Take the bare name even though a plugin (or an earlier call) already registered it.
            Plugins' registrations stay reachable as ``"<plugin>/<name>"``.

    Raises:
        DuplicateNameError: ``name`` is taken and ``override`` is False.
        RegistrationError: ``name`` or ``target`` is malformed.
    """
    name = normalize_name("algorithm", name)
    target_string, obj = normalize_target("algorithm", name, target)
    taken = [entry for entry in _plugins.entries("algorithm") if entry.matches(name)]
    if taken and not override:
        raise DuplicateNameError("algorithm", name, sorted({entry.plugin for entry in taken}))
    _plugins.remove_entries(lambda e: e.kind == "algorithm" and e.plugin == USER_PLUGIN and e.matches(name))
    _plugins.add_entry(
        Entry(
            kind="algorithm",
            name=name,
            target=target_string,
            plugin=USER_PLUGIN,
            description=description,
            obj=obj,
        )
    )


def resolve_sb3_class_name(name: str) -> type[Any]:
    """The algorithm class for a Stable-Baselines3 class name (``"PPO"``), for ``from lit_sb3 import PPO``.

    Looks up the first-party registry name (``PPO`` -> ``ppo``) first, then any registered algorithm whose
    class has this name, so third-party plugins work as well.

    Raises:
        MissingPluginError: No installed plugin provides it (an ``ImportError`` with the install hint).
        AmbiguousNameError: Several plugins provide a class of this name.
    """
    registry_name = SB3_CLASS_NAMES.get(name)
    if registry_name is not None:
        try:
            return get_algo_class(registry_name)
        except UnknownNameError:
            pass
    found = [entry for entry in _plugins.entries("algorithm") if _class_name(entry.target) == name]
    if len({entry.target for entry in found}) > 1:
        raise AmbiguousNameError("algorithm class", name, [(e.plugin, e.distribution) for e in found])
    if found:
        return _load(found[0])

    problems = _plugins.problems()
    if registry_name is not None:
        distribution = FIRST_PARTY[registry_name]
        broken = _broken_plugin_of(distribution)
        if broken is not None:
            message = (
                f"{name} is provided by the plugin {distribution}, which is installed but was not loaded: "
                + (broken.describe())
            )
        else:
            message = (
                f"{name} is provided by the plugin {distribution}, which is not installed: "
                f"pip install {distribution}"
            )
    else:
        known = (
            ", ".join(f"{_class_name(e.target)} ({e.name})" for e in _plugins.entries("algorithm")) or "none"
        )
        message = f"No installed plugin provides an algorithm class named {name!r}. Available: {known}."
    if problems:
        message += "\nPlugins that were not loaded (see `lit-sb3 plugins`):\n" + "\n".join(
            f"  - {p}" for p in problems
        )
    raise MissingPluginError(message, name=name)


# --- policies, callbacks, buffers ---------------------------------------------------------------------


def get_policy_class(algo: str, alias: str) -> type[Any] | None:
    """The policy class a plugin registered as ``alias`` for algorithm ``algo``; None when there is none.

    The engine tries this before the algorithm's own ``policy_aliases``; ``alias`` is matched
    case-insensitively and may be written ``"<plugin>/<alias>"``.
    """
    plugin, _, bare = alias.strip().rpartition("/")
    matches = [
        entry
        for entry in _policy_entries(algo)
        if entry.name.lower() == bare.lower() and (not plugin or entry.plugin.lower() == plugin.lower())
    ]
    matches = [entry for entry in matches if entry.name == bare] or matches
    if not matches:
        return None
    if len({entry.target for entry in matches}) > 1:
        raise AmbiguousNameError(
            f"policy (for {algo!r})", bare, [(e.plugin, e.distribution) for e in matches]
        )
    return _load(matches[0])


def list_policies(algo: str) -> list[str]:
    """Sorted policy aliases that plugins registered for ``algo`` (not the algorithm's own ClassVar ones)."""
    return sorted({entry.name for entry in _policy_entries(algo)})


def make_callback(name: str, /, **kwargs: Any) -> Any:
    """Instantiate the callback registered as ``name`` with ``kwargs``."""
    return _load(_find("callback", name))(**kwargs)


def list_callbacks(pattern: str = "*") -> list[str]:
    """Sorted names of the registered callbacks matching the shell-style ``pattern``."""
    return _list("callback", pattern)


def get_buffer_class(name: str) -> type[Any]:
    """The replay buffer class registered as ``name`` (e.g. ``"her"``)."""
    return _load(_find("buffer", name))


def list_buffers(pattern: str = "*") -> list[str]:
    """Sorted names of the registered replay buffers matching the shell-style ``pattern``."""
    return _list("buffer", pattern)


def list_plugins() -> list[PluginInfo]:
    """Every plugin discovery found, loaded or not, with its status, error and what it provides."""
    return _plugins.plugin_infos()


# --- internals ----------------------------------------------------------------------------------------


def _all_algo_specs() -> list[AlgoSpec]:
    """Every algorithm registration, including names several plugins share (for ``lit-sb3 algos``)."""
    return sorted((_spec(entry) for entry in _plugins.entries("algorithm")), key=lambda s: (s.name, s.plugin))


def _class_name(target: str) -> str:
    return target.rpartition(":")[2].rpartition(".")[2]


def _spec(entry: Entry) -> AlgoSpec:
    return AlgoSpec(
        name=entry.name,
        target=entry.target,
        description=entry.description,
        plugin=entry.plugin,
        distribution=entry.distribution,
        version=entry.version,
        aliases=entry.aliases,
    )


def _list(kind: str, pattern: str) -> list[str]:
    pattern = pattern.lower()
    return sorted(
        {entry.name for entry in _plugins.entries(kind) if fnmatch.fnmatchcase(entry.name, pattern)}
    )


def _find(kind: str, query: str) -> Entry:
    """The single registration ``query`` (``"name"`` or ``"<plugin>/<name>"``) refers to."""
    if not isinstance(query, str):
        raise TypeError(f"A {kind} name must be a string, got {type(query).__name__}: {query!r}.")
    plugin, qualified, name = query.strip().lower().rpartition("/")
    pool = _plugins.entries(kind)
    if qualified:
        pool = [entry for entry in pool if entry.plugin.lower() == plugin]
    matches = [entry for entry in pool if entry.name == name] or [
        entry for entry in pool if name in entry.aliases
    ]
    if not matches:
        raise _unknown(kind, query.strip(), name, qualified=bool(qualified))
    users = [entry for entry in matches if entry.plugin == USER_PLUGIN]
    if users:
        return users[-1]
    if len({entry.target for entry in matches}) > 1:
        raise AmbiguousNameError(kind, name, [(entry.plugin, entry.distribution) for entry in matches])
    return matches[0]


def _unknown(kind: str, query: str, name: str, *, qualified: bool) -> UnknownNameError:
    everything = _plugins.entries(kind)
    if qualified:
        available = {f"{entry.plugin}/{entry.name}" for entry in everything}
    else:
        available = {entry.name for entry in everything}
    first_party = {n: d for n, d in FIRST_PARTY.items() if (n in _BUFFER_NAMES) == (kind == "buffer")}
    if kind not in ("algorithm", "buffer"):
        first_party = {}
    # The name itself, or else a close first-party name, may just need its plugin installed.
    provided = (
        name if name in first_party else next(iter(difflib.get_close_matches(name, first_party, n=1)), None)
    )
    distribution = first_party.get(provided) if provided is not None and provided not in available else None
    note = None
    if distribution is not None and (broken := _broken_plugin_of(distribution)) is not None:
        note = (
            f"{provided!r} is provided by {distribution}, which is installed but was not loaded "
            f"({broken.status}; see below)."
        )
    elif distribution is not None:
        note = (
            f"{provided!r} is provided by the first-party plugin {distribution}: pip install {distribution}"
        )
    return UnknownNameError(
        kind,
        query,
        sorted(available),
        installable=[] if qualified or name in first_party else list(first_party),
        distribution=distribution,
        distribution_note=note,
        problems=_plugins.problems(),
    )


def _broken_plugin_of(distribution: str) -> PluginInfo | None:
    """The not-loaded plugin that ``distribution`` installed, if any."""
    for info in _plugins.plugin_infos():
        if info.status != "loaded" and info.distribution.lower().replace("_", "-") == distribution:
            return info
    return None


def _policy_entries(algo: str) -> list[Entry]:
    bare = algo.strip().lower().rpartition("/")[2]
    names = {bare}
    with contextlib.suppress(RegistryError):  # policies may name an algorithm that is not registered (yet)
        names.add(_find("algorithm", algo).name)
    return [entry for entry in _plugins.entries("policy") if entry.algo in names]


def _load(entry: Entry) -> Any:
    """Import and cache the object at ``entry.target``."""
    if entry.obj is not None:
        return entry.obj
    module_name, _, attribute = entry.target.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            obj = getattr(obj, part)
    except Exception as exc:
        if entry.plugin == USER_PLUGIN:
            fix = "check the target given to register_algo"
        else:
            fix = (
                f"reinstall or upgrade {entry.distribution or 'the plugin'}, or skip the plugin with "
                f"LIT_SB3_BLOCK_PLUGINS={entry.plugin}"
            )
        origin = " ".join(part for part in (entry.distribution, entry.version) if part)
        owner = f"plugin {entry.plugin!r}" + (f" ({origin})" if origin else "")
        raise TargetImportError(
            f"The {entry.kind} {entry.name!r} registered by {owner} points to {entry.target!r}, "
            f"which could not be imported: {type(exc).__name__}: {exc}. To fix: {fix}.",
            name=module_name,
        ) from exc
    entry.obj = obj
    return obj
