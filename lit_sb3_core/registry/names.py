"""Names that come from outside resolve through the registry only.

A class named in a model file, a checkpoint's hyperparameters, a config or a CLI flag (``policy``,
``policy_kwargs.activation_fn``, ``features_extractor_class``, ``optimizer_class``, ``replay_buffer_class``,
a schedule) is looked up in an allow-list *before anything is imported*, because importing a module runs
its code and calling a named function runs it too. What resolves:

1. a class (or, for schedules, a callable) passed as an object, of the expected kind;
2. a registered name, case-insensitive (``"relu"``, ``"NatureCNN"``, ``"adam"``, ``"her"``; plugins add
   theirs through the ``lit_sb3_register_*`` hooks, core registers torch's activations and optimizers);
3. the import path of a registered class, in any spelling: ``"torch.nn:ReLU"``,
   ``"torch.nn.modules.activation.ReLU"``, or a lit-sb3 0.1 path (``"lit_sb3_core.torch_layers:NatureCNN"``);
   only registered targets are imported to compare;
4. ``"module:Class"`` where ``module`` is already imported by the program (it is in ``sys.modules``: a
   script that defines and saves a custom extractor loads it back) and ``Class`` is a subclass of the
   expected base. The check reads the module's namespace and the class's MRO: nothing is imported or called.

Everything else raises :class:`~lit_sb3_core.errors.DisallowedNameError`, naming the field, the value,
why, and what is allowed. This module imports neither torch nor lightning: base classes are given by the
caller or imported from core's own registered targets when needed.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lit_sb3_core._legacy_paths import MOVED_BY_ENGINE_CUT, MOVED_MODULES
from lit_sb3_core.errors import DisallowedNameError, LitSb3Error
from lit_sb3_core.registry import plugins as _plugins
from lit_sb3_core.registry.registrars import Entry

__all__ = ["KINDS", "Kind", "allowed_names", "class_path", "resolve_named_class"]


@dataclass(frozen=True)
class Kind:
    """What one kind of name resolves to.

    Attributes:
        label: How messages call it ("activation").
        base: ``"module:Class"`` every class of this kind derives from ("" for callables).
        hook: The hook plugins register this kind with.
    """

    label: str
    base: str
    hook: str


KINDS: dict[str, Kind] = {
    "activation": Kind("activation", "torch.nn:Module", "lit_sb3_register_activations"),
    "features_extractor": Kind(
        "features extractor",
        "lit_sb3_core.nets.torch_layers:BaseFeaturesExtractor",
        "lit_sb3_register_features_extractors",
    ),
    "optimizer": Kind("optimizer", "torch.optim:Optimizer", "lit_sb3_register_optimizers"),
    "policy": Kind("policy", "torch.nn:Module", "lit_sb3_register_policies"),
    "buffer": Kind(
        "replay buffer", "lit_sb3_core.data.replay_buffer:ReplayBuffer", "lit_sb3_register_buffers"
    ),
    "schedule": Kind("schedule", "", "lit_sb3_register_schedules"),
    # Callers pass the base (lit_sb3_core.sdk.RLAlgorithm): the registry knows algorithms as names only.
    "algorithm": Kind("algorithm", "", "lit_sb3_register_algorithms"),
}


def resolve_named_class(
    kind: str,
    value: Any,
    *,
    field: str,
    base: type | None = None,
    algo: str = "",
    extra: Mapping[str, Any] | None = None,
) -> Any:
    """The class (or schedule) ``value`` names, if the allow-list allows it; see the module docstring.

    Args:
        kind: One of :data:`KINDS` ("activation", "features_extractor", "optimizer", "policy", "buffer",
            "schedule", "algorithm").
        value: A class (accepted when it is of the kind) or a name.
        field: Where ``value`` came from, for the message (``"policy_kwargs.activation_fn"``).
        base: The class every accepted class derives from; default: the kind's (``torch.nn.Module`` for
            activations and policies, ``torch.optim.Optimizer``, ``BaseFeaturesExtractor``, ``ReplayBuffer``).
        algo: For policies: the algorithm whose registered aliases apply.
        extra: Names the caller allows besides the registry (an algorithm's own policy aliases), mapped to
            a class or a ``"module:Class"`` target the caller vouches for.

    Raises:
        DisallowedNameError: ``value`` is not allowed (a ``ConfigurationError``, so a ``ValueError``).
    """
    if kind not in KINDS:
        raise ValueError(f"Unknown kind {kind!r}: use one of {sorted(KINDS)}.")
    spec = KINDS[kind]
    if base is None and spec.base:
        base = _import_trusted(spec.base)
    if not isinstance(value, str):
        if _of_kind(value, base):
            return value
        raise DisallowedNameError(
            f"{field} must be {_expected(kind, base)} (the class itself or a registered name such as "
            f"{', '.join(allowed_names(kind, algo, extra)[:3]) or '...'}), got {_describe(value)}.",
            kind=kind,
            field=field,
            value=value,
            allowed=allowed_names(kind, algo, extra),
        )
    text = value.strip()
    candidates = _candidates(kind, algo, extra)
    found = _by_name(candidates, text)
    if found is None:
        found = _by_path(candidates, text)
    if found is not None:
        obj = _load(found)
        if _of_kind(obj, base):
            return obj
        raise _refusal(
            kind, field, value, algo, extra, f"it resolves to {_describe(obj)}, not {_expected(kind, base)}"
        )
    path = _split(text)
    if path is None:
        raise _refusal(kind, field, value, algo, extra, f"no {spec.label} is registered under that name")
    obj, why = _already_imported(*path)
    if obj is None:
        raise _refusal(kind, field, value, algo, extra, why)
    if not _of_kind(obj, base):
        raise _refusal(
            kind, field, value, algo, extra, f"it is {_describe(obj)}, not {_expected(kind, base)}"
        )
    return obj


def allowed_names(kind: str, algo: str = "", extra: Mapping[str, Any] | None = None) -> list[str]:
    """The registered names of ``kind`` (and ``extra``'s), sorted, for messages and listings."""
    return sorted({name for name, _ in _candidates(kind, algo, extra)}, key=str.lower)


def class_path(obj: Any) -> str:
    """``"module:QualName"`` of a class or function: the form files store and the resolver reads back."""
    return f"{obj.__module__}:{obj.__qualname__}"


# --- candidates ---------------------------------------------------------------------------------------

# A candidate is (name, source): source is an Entry (imported on demand) or an object / target string the
# caller vouched for.
_Candidate = tuple[str, Any]


def _candidates(kind: str, algo: str, extra: Mapping[str, Any] | None) -> list[_Candidate]:
    found: list[_Candidate] = [(str(name), target) for name, target in (extra or {}).items()]
    if kind == "policy":
        bare = algo.strip().lower().rpartition("/")[2]
        entries = [e for e in _plugins.entries("policy") if not bare or e.algo == bare]
        # Paths of every registered policy are allowed; names only for this algorithm (matched below).
        others = [e for e in _plugins.entries("policy") if e not in entries]
        found += [(e.name, e) for e in entries]
        found += [("", e) for e in others]
    else:
        found += [(e.name, e) for e in _plugins.entries(kind)]
    return found


def _by_name(candidates: list[_Candidate], text: str) -> _Candidate | None:
    plugin, _, bare = text.rpartition("/")
    if not bare or ":" in bare or "." in bare:
        return None
    usable = [
        c
        for c in candidates
        if c[0] and (not plugin or (isinstance(c[1], Entry) and c[1].plugin.lower() == plugin.lower()))
    ]
    exact = [c for c in usable if c[0] == bare]
    matches = exact or [c for c in usable if c[0].lower() == bare.lower()]
    return matches[0] if matches else None


def _by_path(candidates: list[_Candidate], text: str) -> _Candidate | None:
    path = _split(text)
    if path is None:
        return None
    wanted = {path, *_modernized(*path)}
    # Without importing: the target string itself, in either spelling.
    for candidate in candidates:
        target = _target_of(candidate[1])
        if target is not None and _split(target) in wanted:
            return candidate
    # Importing registered targets only (the allow-list), those whose class name matches.
    leaf = path[1].rpartition(".")[2]
    for candidate in candidates:
        target = _target_of(candidate[1])
        if target is not None and target.rpartition(":")[2].rpartition(".")[2] != leaf:
            continue
        try:
            obj = _load(candidate)
        except LitSb3Error:
            continue  # a broken plugin's target is reported when it is asked for by name
        found = _path_of(obj)
        if found in wanted:
            return candidate
        # A package re-exporting a registered class ("lit_sb3_dqn.DQN" for "lit_sb3_dqn.dqn:DQN").
        if found is not None and found[1] == path[1] and found[0].startswith(path[0] + "."):
            return candidate
    return None


def _target_of(source: Any) -> str | None:
    if isinstance(source, Entry):
        return source.target
    return source if isinstance(source, str) else None


def _load(candidate: _Candidate) -> Any:
    source = candidate[1]
    if isinstance(source, Entry):
        from lit_sb3_core.registry.registry import _load as load_entry

        return load_entry(source)
    if isinstance(source, str):
        return _import_trusted(source)
    return source


# --- paths --------------------------------------------------------------------------------------------


def _split(text: str) -> tuple[str, str] | None:
    """``"a.b:C.D"`` -> ``("a.b", "C.D")``; ``"a.b.C"`` -> ``("a.b", "C")``; None when it is no path."""
    module, sep, qualname = text.partition(":")
    if not sep:
        module, _, qualname = text.rpartition(".")
    parts = [*module.split("."), *qualname.split(".")]
    if not module or not qualname or not all(part.isidentifier() for part in parts):
        return None
    return module, qualname


def _modernized(module: str, qualname: str) -> list[tuple[str, str]]:
    """The current homes of an older path (0.1's ``lit_sb3_core.torch_layers`` ->
    ``lit_sb3_core.nets.torch_layers``; 0.2's ``lit_sb3_core.engine.atari`` -> ``lit_sb3_core.envs.atari``)."""
    moved = MOVED_MODULES.get(module, ()) or tuple(filter(None, [MOVED_BY_ENGINE_CUT.get(module)]))
    return [(target, qualname) for target in moved]


def _path_of(obj: Any) -> tuple[str, str] | None:
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return (module, qualname) if isinstance(module, str) and isinstance(qualname, str) else None


def _already_imported(module_name: str, qualname: str) -> tuple[Any, str]:
    """The object at ``module_name:qualname`` if that module is already imported; else ``(None, why)``.

    Reads the module's ``__dict__`` and the classes' own attributes statically: no import, no module
    ``__getattr__``, no descriptor runs.
    """
    for name in [module_name, *(target for target, _ in _modernized(module_name, qualname))]:
        module = sys.modules.get(name)
        if module is None:
            continue
        obj: Any = vars(module).get(qualname.split(".")[0])
        for part in qualname.split(".")[1:]:
            if obj is None:
                break
            obj = inspect.getattr_static(obj, part, None)
        if obj is not None:
            return obj, ""
        return None, f"module {name!r} has no attribute {qualname!r}"
    return None, (
        f"it is neither registered nor from a module this program has imported ({module_name!r} is not "
        "imported, and lit-sb3 never imports a module named in a file or config)"
    )


# --- kinds --------------------------------------------------------------------------------------------


def _import_trusted(target: str) -> Any:
    """Import a target core or a plugin vouched for (a registered target or a kind's base class)."""
    import importlib

    module, _, attribute = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attribute.split("."):
        obj = getattr(obj, part)
    return obj


def _of_kind(obj: Any, base: type | None) -> bool:
    if base is None:
        return callable(obj)
    return isinstance(obj, type) and base in type.__dict__["__mro__"].__get__(obj)


def _expected(kind: str, base: type | None) -> str:
    if base is None:
        return f"a {KINDS[kind].label} (a callable)"
    spec = KINDS[kind]
    if spec.base and spec.base.rpartition(":")[2] == base.__qualname__:
        return f"a subclass of {spec.base.replace(':', '.')}"  # torch.nn.Module, not torch.nn.modules.module.Module
    return f"a subclass of {base.__module__}.{base.__qualname__}"


def _describe(obj: Any) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    if callable(obj):
        return (
            f"a {type(obj).__name__} ({getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', obj)})"
        )
    return f"a {type(obj).__name__} value"


def _refusal(
    kind: str, field: str, value: Any, algo: str, extra: Mapping[str, Any] | None, why: str
) -> DisallowedNameError:
    spec = KINDS[kind]
    allowed = allowed_names(kind, algo, extra)
    shown = ", ".join(allowed) if allowed else "none registered"
    subject = f"{field}={value!r}" if isinstance(value, str) else f"{field}={_describe(value)}"
    article = "An" if spec.label[0] in "aeiou" else "A"
    return DisallowedNameError(
        f"{subject} is not allowed: {why}. {article} {spec.label} named in a model file, checkpoint, config or "
        f"command line resolves only to a registered name ({shown}), the import path of one, or a class of "
        f"the right kind from a module the program has already imported. To use your own {spec.label}, "
        f"import it before loading (or pass the class itself, e.g. custom_objects={{...}} or the "
        f"constructor argument), or register it from a plugin with the {spec.hook} hook.",
        kind=kind,
        field=field,
        value=value,
        allowed=allowed,
    )
