"""Plugin discovery: find every ``lit_sb3`` entry point, load each one in isolation, collect registrations.

Discovery runs once, on the first registry call (never on ``import lit_sb3``). Each plugin is checked and
loaded on its own, so one that fails to import, declares a hook core does not know, raises while
registering or needs another core version is skipped with a :class:`LitSb3PluginWarning` and recorded with
its error, and everything else keeps working. We iterate the entry points ourselves because pluggy's
``load_setuptools_entrypoints`` aborts on the first failure.

Environment variables, read when discovery runs:

- ``LIT_SB3_PLUGINS=a,b``: load only these plugins (entry-point or distribution names); empty: none.
- ``LIT_SB3_BLOCK_PLUGINS=a,b``: do not load these.
- ``LIT_SB3_TRACE_PLUGINS=1``: print each discovery step and hook call to stderr.

Core's own plugin (``core``, :mod:`lit_sb3_core.registry.builtin_plugin`) is always loaded and cannot be blocked;
it is loaded from the module directly, so a source checkout without installed metadata works too.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import sys
import threading
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import pluggy

from lit_sb3_core import hookspecs
from lit_sb3_core._version import __version__ as CORE_VERSION
from lit_sb3_core.errors import PluginError
from lit_sb3_core.registry.registrars import (
    ActivationRegistrar,
    AlgorithmRegistrar,
    BufferRegistrar,
    CallbackRegistrar,
    Entry,
    FeaturesExtractorRegistrar,
    OptimizerRegistrar,
    PolicyRegistrar,
    ScheduleRegistrar,
    _Registrar,
)

__all__ = [
    "LitSb3PluginWarning",
    "PluginInfo",
    "ensure_discovered",
    "register_plugin",
    "unregister_plugin",
]

ENTRY_POINT_GROUP = "lit_sb3"
ALLOW_ENV = "LIT_SB3_PLUGINS"
BLOCK_ENV = "LIT_SB3_BLOCK_PLUGINS"
TRACE_ENV = "LIT_SB3_TRACE_PLUGINS"

CORE_PLUGIN = "core"
CORE_MODULE = "lit_sb3_core.registry.builtin_plugin"
CORE_DISTRIBUTION = "lit-sb3-core"
USER_PLUGIN = "user"
"""Plugin name recorded for ``register_algo`` calls from user code."""
_RESERVED = frozenset({CORE_PLUGIN, USER_PLUGIN})

# hook name -> registrar handed to it, in the order hooks are called
_HOOKS: dict[str, type[_Registrar]] = {
    "lit_sb3_register_algorithms": AlgorithmRegistrar,
    "lit_sb3_register_policies": PolicyRegistrar,
    "lit_sb3_register_callbacks": CallbackRegistrar,
    "lit_sb3_register_buffers": BufferRegistrar,
    "lit_sb3_register_activations": ActivationRegistrar,
    "lit_sb3_register_features_extractors": FeaturesExtractorRegistrar,
    "lit_sb3_register_optimizers": OptimizerRegistrar,
    "lit_sb3_register_schedules": ScheduleRegistrar,
}

Status = Literal["loaded", "failed", "incompatible", "blocked"]


class LitSb3PluginWarning(UserWarning):
    """A plugin was skipped: it failed to load, needs another core version, or declares unknown hooks."""


@dataclass
class PluginInfo:
    """What discovery found for one plugin, as shown by ``lit-sb3 plugins``.

    Attributes:
        name: Entry-point name (``"ppo"``); also the ``<plugin>`` in ``"<plugin>/<name>"``.
        distribution: Distribution that installed it (``"lit-sb3-ppo"``); "" when unknown.
        version: Version of that distribution; "" when unknown.
        status: "loaded", "failed", "incompatible" or "blocked".
        error: Why it is not loaded; None when loaded.
        provides: What it registered, e.g. ``["algorithm:ppo", "policy:ppo/MlpLstmPolicy"]``.
    """

    name: str
    distribution: str
    version: str
    status: Status = "loaded"
    error: str | None = None
    provides: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line naming the plugin, its distribution and why it is not loaded."""
        origin = " ".join(part for part in (self.distribution, self.version) if part)
        head = f"{self.name} ({origin})" if origin else self.name
        return f"{head}: {self.status}" + (f": {self.error}" if self.error else "")


class _PluginManager(pluggy.PluginManager):
    """Also treats unmarked ``lit_sb3_*`` functions as hook implementations.

    Forgetting ``@hookimpl`` would otherwise silently register nothing; this way the hook runs, and a
    misspelled unmarked hook is reported as unknown.
    """

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is None and name.startswith(hookspecs.PROJECT_NAME + "_"):
            found = inspect.getattr_static(plugin, name, None)
            if inspect.isfunction(found) or isinstance(found, (staticmethod, classmethod, types.MethodType)):
                return {}
        return opts


class _State:
    """Everything discovery has produced; replaced wholesale by :func:`_reset_for_tests`."""

    def __init__(self) -> None:
        self.manager = _PluginManager(hookspecs.PROJECT_NAME)
        self.manager.add_hookspecs(hookspecs)
        self.infos: list[PluginInfo] = []
        self.entries: list[Entry] = []
        self.discovered = False
        self.discovering = False


_lock = threading.RLock()
_state = _State()


# --- public API ---------------------------------------------------------------------------------------


def ensure_discovered() -> None:
    """Discover and load all plugins, once; later calls return at once."""
    if _state.discovered:
        return
    with _lock:
        # A plugin that calls the registry from its hook re-enters here: let it see what exists so far.
        if _state.discovered or _state.discovering:
            return
        _state.discovering = True
        try:
            _discover(_tracer())
        finally:
            _state.discovering = False
            _state.discovered = True


def register_plugin(plugin: object, name: str, *, distribution: str = "", version: str = "") -> PluginInfo:
    """Register an in-process plugin object (a module, class or instance with hook implementations).

    For tests, notebooks and applications that ship their algorithms without packaging an entry point.
    The environment variables do not apply: the call itself is explicit.

    Args:
        plugin: Object whose ``lit_sb3_*`` hook implementations are called now.
        name: Plugin name, used in ``"<name>/<algo>"`` and ``lit-sb3 plugins``.
        distribution: Optional distribution name shown in listings.
        version: Optional version shown in listings.

    Returns:
        The recorded plugin info.

    Raises:
        PluginError: The name is taken or reserved, the plugin declares unknown hooks, or a hook raised.
    """
    ensure_discovered()
    with _lock:
        if name in _RESERVED or any(info.name == name for info in _state.infos):
            raise PluginError(
                f"A plugin named {name!r} is already registered (or reserved); choose another name."
            )
        info = PluginInfo(name=name, distribution=distribution, version=version)
        error = _load(info, plugin, _tracer())
        if error is not None:
            raise PluginError(f"Plugin {name!r} could not be registered: {error}")
        _state.infos.append(info)
        return replace(info, provides=list(info.provides))


def unregister_plugin(name: str) -> None:
    """Forget plugin ``name`` and everything it registered (a no-op when there is none)."""
    ensure_discovered()
    with _lock:
        plugin = _state.manager.get_plugin(name)
        if plugin is not None:
            _state.manager.unregister(plugin=plugin, name=name)
        _state.infos = [info for info in _state.infos if info.name != name]
        _state.entries = [entry for entry in _state.entries if entry.plugin != name]


def plugin_infos() -> list[PluginInfo]:
    """Copies of the plugin records, in discovery order."""
    ensure_discovered()
    return [replace(info, provides=list(info.provides)) for info in _state.infos]


def problems() -> list[str]:
    """One line per plugin that is not loaded, for error messages."""
    return [info.describe() for info in plugin_infos() if info.status != "loaded"]


def entries(kind: str) -> list[Entry]:
    """All registrations of ``kind`` (live records: resolving a class caches it on the entry)."""
    ensure_discovered()
    return [entry for entry in _state.entries if entry.kind == kind]


def add_entry(entry: Entry) -> None:
    """Record a registration made outside any plugin hook (``register_algo``)."""
    ensure_discovered()
    with _lock:
        _state.entries.append(entry)


def remove_entries(predicate: Callable[[Entry], bool]) -> None:
    """Drop the registrations for which ``predicate`` is true."""
    ensure_discovered()
    with _lock:
        _state.entries = [entry for entry in _state.entries if not predicate(entry)]


def _reset_for_tests() -> None:
    """Forget all discovery results so the next registry call discovers again (tests only)."""
    global _state
    with _lock:
        _state = _State()


# --- discovery ----------------------------------------------------------------------------------------


def _tracer() -> Callable[[str], None]:
    """A print-to-stderr function when ``LIT_SB3_TRACE_PLUGINS`` is set, else a no-op."""
    if os.environ.get(TRACE_ENV, "").strip().lower() in ("", "0", "false", "no", "off"):
        return lambda message: None
    return lambda message: print(f"[lit_sb3] {message}", file=sys.stderr, flush=True)


def _names_from_env(variable: str) -> set[str] | None:
    """The comma-separated names in ``variable``, lower-cased; None when it is unset."""
    value = os.environ.get(variable)
    if value is None:
        return None
    return {part.strip().lower() for part in value.split(",") if part.strip()}


def _core_distribution_version() -> str:
    try:
        return importlib.metadata.version(CORE_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return CORE_VERSION


def _discover(trace: Callable[[str], None]) -> None:
    allow = _names_from_env(ALLOW_ENV)
    block = _names_from_env(BLOCK_ENV) or set()
    trace(
        f"discovering plugins ({ALLOW_ENV}={os.environ.get(ALLOW_ENV, '<unset>')!s}, "
        f"{BLOCK_ENV}={os.environ.get(BLOCK_ENV, '<unset>')!s})"
    )

    core = PluginInfo(name=CORE_PLUGIN, distribution=CORE_DISTRIBUTION, version=_core_distribution_version())
    _state.infos.append(core)
    try:
        module = importlib.import_module(CORE_MODULE)
    except Exception as exc:
        _skip(core, "failed", f"import of {CORE_MODULE} failed: {type(exc).__name__}: {exc}", trace)
    else:
        error = _load(core, module, trace)
        if error is not None:
            _skip(core, "failed", error, trace)

    for point in sorted(_entry_points(), key=lambda ep: (ep.name, _distribution_of(ep)[0], ep.value)):
        _discover_entry_point(point, allow, block, trace)
    loaded = sum(info.status == "loaded" for info in _state.infos)
    trace(f"discovery done: {loaded} of {len(_state.infos)} loaded")


def _entry_points() -> list[importlib.metadata.EntryPoint]:
    """The installed ``lit_sb3`` entry points (tests replace this to hide the real ones)."""
    return list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))


def _distribution_of(point: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(point, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def _discover_entry_point(
    point: importlib.metadata.EntryPoint,
    allow: set[str] | None,
    block: set[str],
    trace: Callable[[str], None],
) -> None:
    distribution, version = _distribution_of(point)
    if point.name == CORE_PLUGIN and point.value == CORE_MODULE:
        trace(
            f"core: entry point from {distribution or '?'} skipped, core is already loaded from {CORE_MODULE}"
        )
        return
    info = PluginInfo(name=point.name, distribution=distribution, version=version)
    _state.infos.append(info)
    names = {point.name.lower(), _canonical(distribution)}

    if point.name in _RESERVED:
        _skip(info, "failed", f"the plugin name {point.name!r} is reserved; rename the entry point", trace)
    elif any(other.name == point.name for other in _state.infos if other is not info):
        owner = next(other for other in _state.infos if other is not info and other.name == point.name)
        _skip(
            info,
            "failed",
            f"another plugin named {point.name!r} ({owner.distribution or '?'}) was found first; "
            f"uninstall one of them or rename its entry point",
            trace,
        )
    elif allow is not None and not names & allow:
        info.status, info.error = "blocked", f"not listed in {ALLOW_ENV}"
        trace(f"{info.name}: blocked ({info.error})")
    elif names & block:
        info.status, info.error = "blocked", f"listed in {BLOCK_ENV}"
        trace(f"{info.name}: blocked ({info.error})")
    elif (reason := _core_incompatibility(point)) is not None:
        _skip(info, "incompatible", reason, trace)
    else:
        try:
            plugin = point.load()
        except Exception as exc:
            _skip(info, "failed", f"import of {point.value!r} failed: {type(exc).__name__}: {exc}", trace)
            return
        error = _load(info, plugin, trace)
        if error is not None:
            _skip(info, "failed", error, trace)


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _core_incompatibility(point: importlib.metadata.EntryPoint) -> str | None:
    """Why the plugin's declared ``lit-sb3-core`` requirement excludes this core, or None when it fits."""
    from packaging.requirements import InvalidRequirement, Requirement

    dist = getattr(point, "dist", None)
    if dist is None:
        return None
    for line in dist.requires or []:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if _canonical(requirement.name) != CORE_DISTRIBUTION:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(CORE_VERSION, prereleases=True):
            return (
                f"requires {CORE_DISTRIBUTION}{requirement.specifier} but {CORE_DISTRIBUTION} {CORE_VERSION} "
                f"is installed; install a matching version of {dist.metadata['Name']}"
            )
    return None


def _skip(info: PluginInfo, status: Status, error: str, trace: Callable[[str], None]) -> None:
    """Record that ``info`` is not loaded, and warn."""
    info.status, info.error, info.provides = status, error, []
    trace(f"{info.name}: {status}: {error}")
    warnings.warn(
        f"lit-sb3 plugin {info.describe()} (set {BLOCK_ENV}={info.name} to skip it silently)",
        LitSb3PluginWarning,
        stacklevel=2,
    )


def _load(info: PluginInfo, plugin: object, trace: Callable[[str], None]) -> str | None:
    """Register ``plugin``'s hooks and call them; commit its registrations only if all succeed.

    Returns:
        None on success, else the error text (the plugin is then fully unregistered).
    """
    manager = _state.manager
    try:
        manager.register(plugin, name=info.name)
    except Exception as exc:
        return f"its hooks could not be registered: {exc}"

    try:
        manager.check_pending()
    except pluggy.PluginValidationError:
        unknown = sorted(
            caller.name for caller in manager.get_hookcallers(plugin) or [] if not caller.has_spec()
        )
        manager.unregister(plugin=plugin, name=info.name)
        return (
            f"it implements unknown hook(s) {', '.join(unknown)}; the hooks core knows are "
            f"{', '.join(_HOOKS)}"
        )

    collected: list[Entry] = []
    others = [other for other in manager.get_plugins() if other is not plugin]
    for hook_name, registrar_class in _HOOKS.items():
        caller = getattr(manager.hook, hook_name)
        if not any(impl.plugin is plugin for impl in caller.get_hookimpls()):
            continue
        before = len(collected)
        registrar = registrar_class(collected, info.name, info.distribution, info.version)
        try:
            manager.subset_hook_caller(hook_name, remove_plugins=others)(registry=registrar)
        except Exception as exc:
            manager.unregister(plugin=plugin, name=info.name)
            return f"{hook_name} raised {type(exc).__name__}: {exc}"
        added = ", ".join(entry.label for entry in collected[before:]) or "(nothing)"
        trace(f"{info.name}: {hook_name}(registry) -> {added}")

    _state.entries.extend(collected)
    info.status, info.error, info.provides = "loaded", None, [entry.label for entry in collected]
    origin = " ".join(part for part in (info.distribution, info.version) if part) or "in-process"
    trace(f"{info.name}: loaded ({origin})")
    return None
