"""Checks on what model files and checkpoints declare, before anything is built or allocated from it.

A file is data from outside: every field is validated, and every failure is one error type,
:class:`~lit_sb3_core.errors.ModelFileError`, whose message starts with the file and names the field
(``'run.zip': num_timesteps must be a non-negative integer, got nan``). Model files
(:mod:`lit_sb3_core.engine.model_file`) and Lightning checkpoints
(:mod:`lit_sb3_core.engine.checkpoint_io`) share these checks, so a tampered counter or space reads the
same whichever way it is loaded.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from lit_sb3_core.errors import ConfigurationError, ModelFileError
from lit_sb3_core.foundation.checks import is_int, is_number
from lit_sb3_core.foundation.spaces import check_space_json

__all__ = [
    "MAX_COUNTER",
    "check_checkpoint_fits",
    "check_counter",
    "check_named_classes",
    "check_normalization",
    "check_param_groups",
    "check_plain_values",
    "check_rng_state",
    "check_spaces",
    "check_state_against",
    "check_tensor_values",
    "is_sb3_archive",
    "rebuild_error",
    "refuse",
]

MAX_COUNTER = 2**62
_NORMALIZATION_KEYS = {"observation", "reward", "clip_obs", "clip_reward", "gamma", "epsilon"}


def is_sb3_archive(names: Iterable[str]) -> bool:
    """Whether a zip's member names are those of a Stable-Baselines3 model file (``data`` and
    ``policy.pth``, no lit-sb3 ``metadata.json``). Here, not in ``sb3/``, because ``load`` asks it first."""
    names = set(names)
    return "data" in names and "policy.pth" in names and "metadata.json" not in names


def refuse(source: str, field: str | None, problem: str) -> ModelFileError:
    """The one error for a file that cannot be loaded: ``'<source>': <field> <problem>``."""
    where = f"{field} " if field else ""
    return ModelFileError(f"{source!r}: {where}{problem}", path=source, field=field)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_counter(value: Any, source: str, field: str) -> int:
    """A step/iteration/update counter: a non-negative integer (NaN, floats, bools and -5 are refused)."""
    if not (is_int(value, 0) and value <= MAX_COUNTER):
        raise refuse(source, field, f"must be a non-negative integer, got {_short(value)}.")
    return int(value)


def check_spaces(container: Mapping[str, Any], source: str, prefix: str = "") -> None:
    """``observation_space`` and ``action_space`` are valid space descriptions of sane size."""
    for key in ("observation_space", "action_space"):
        if key not in container:
            raise refuse(source, None, f"has no {prefix}{key}.")
        try:
            check_space_json(container[key], f"{prefix}{key}")
        except ValueError as exc:
            raise refuse(source, f"{prefix}{key}", f"is not a valid space: {exc}") from None


def check_normalization(config: Any, source: str, field: str = "normalization") -> None:
    """None, or the dict ``parse_normalize`` writes: booleans, positive finite clips, gamma in [0, 1]."""
    if config is None:
        return
    if not isinstance(config, dict):
        raise refuse(
            source, field, f"must be null or a normalization config (a JSON object), got {_short(config)}."
        )
    unknown = set(config) - _NORMALIZATION_KEYS
    missing = _NORMALIZATION_KEYS - set(config)
    if unknown or missing:
        raise refuse(
            source, field, f"must have exactly the keys {sorted(_NORMALIZATION_KEYS)} (unknown {sorted(unknown)}, "
            f"missing {sorted(missing)})."
        )  # fmt: skip
    for key in ("observation", "reward"):
        if not isinstance(config[key], bool):
            raise refuse(source, f"{field}.{key}", f"must be true or false, got {_short(config[key])}.")
    for key in ("clip_obs", "clip_reward", "epsilon"):
        if not (is_number(config[key]) and config[key] > 0):
            raise refuse(
                source, f"{field}.{key}", f"must be a positive finite number, got {_short(config[key])}."
            )
    gamma = config["gamma"]
    if gamma is not None and not (is_number(gamma) and 0 <= gamma <= 1):
        raise refuse(source, f"{field}.gamma", f"must be null or a number in [0, 1], got {_short(gamma)}.")


MAX_NESTING = 100
_PLAIN_SCALARS = (str, int, float, bool, type(None))


def check_plain_values(value: Any, source: str, field: str, max_depth: int = MAX_NESTING) -> None:
    """Hyperparameters read from a file hold no functions or classes, and are not nested absurdly deep.

    A function or class (a YAML ``!!python/name:`` tag, an object unpickled from a trusted checkpoint)
    would be called by the first ``learn()``; any callable is refused (data such as tensors passes), and
    so is nesting deeper than ``max_depth`` (walked without recursion, so no ``RecursionError`` escapes).
    """
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, _PLAIN_SCALARS):
            continue
        if depth >= max_depth:
            raise refuse(source, field, f"are nested more than {max_depth} levels deep (at {where}).")
        if isinstance(item, dict):
            stack.extend((v, f"{where}.{k}", depth + 1) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item))
        elif callable(item):  # a function, a class, an object that would be called as a schedule
            raise refuse(
                source,
                where,
                f"is a {type(item).__name__} ({_short(item)}), not a plain value: a file may hold numbers, "
                "strings, lists and mappings only (name classes by their registered name, schedules as "
                "strings such as 'lin_3e-4').",
            )


def check_rng_state(state: Any, source: str, field: str) -> None:
    """What ``capture_rng_state`` writes: torch's byte state, numpy's MT19937 and python's Mersenne state.

    Checked whole before any generator is restored, so a garbage state never half-restores the generators.
    """

    def bad(where: str, expected: str) -> ModelFileError:
        return refuse(
            source,
            f"{field}{where}",
            f"must be {expected} (what lit-sb3 saves); the checkpoint is damaged or was tampered with. "
            "Remove the entry to resume without restoring the generators.",
        )

    if not isinstance(state, dict):
        raise bad("", "a dict of generator states with keys torch, numpy and python")
    for key in ("torch", "numpy", "python"):
        if key not in state:
            raise bad("", f"a dict of generator states with keys torch, numpy and python (it has no {key!r})")
    generator = state["torch"]
    if not isinstance(generator, torch.Tensor) or generator.dtype != torch.uint8 or generator.dim() != 1:
        raise bad(".torch", "a 1-D uint8 tensor (torch.get_rng_state())")
    numpy_state = state["numpy"]
    keys = numpy_state.get("keys") if isinstance(numpy_state, dict) else None
    if (
        not isinstance(numpy_state, dict)
        or numpy_state.get("kind") != "MT19937"
        or not isinstance(keys, torch.Tensor)
        or keys.numel() != 624
        or not all(isinstance(numpy_state.get(k), int) for k in ("pos", "has_gauss"))
        or not 0 <= numpy_state["pos"] <= 624
        or not isinstance(numpy_state.get("cached_gaussian"), (int, float))
    ):
        raise bad(".numpy", "numpy's MT19937 state (kind, 624 keys, pos, has_gauss, cached_gaussian)")
    python_state = state["python"]
    values = python_state.get("state") if isinstance(python_state, dict) else None
    if (
        not isinstance(python_state, dict)
        or not isinstance(python_state.get("version"), int)
        or not isinstance(values, list)
        or len(values) != 625
        or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**32 for v in values[:-1])
        or not isinstance(values[-1], int)
        or not (python_state.get("gauss") is None or isinstance(python_state.get("gauss"), float))
    ):
        raise bad(".python", "python's random state (version, 625 integers, gauss)")


def check_param_groups(groups: Any, source: str, field: str = "optimizer_param_groups") -> None:
    """Per optimizer, a list of param groups: ``params`` a list of distinct integers, numbers finite."""
    if not isinstance(groups, list):
        raise refuse(source, field, f"must be a list (one entry per optimizer), got {_short(groups)}.")
    for i, optimizer_groups in enumerate(groups):
        where = f"{field}[{i}]"
        if not isinstance(optimizer_groups, list) or not optimizer_groups:
            raise refuse(
                source, where, f"must be a non-empty list of param groups, got {_short(optimizer_groups)}."
            )
        seen: set[int] = set()
        for j, group in enumerate(optimizer_groups):
            here = f"{where}[{j}]"
            if not isinstance(group, dict):
                raise refuse(source, here, f"must be a param group (a JSON object), got {_short(group)}.")
            params = group.get("params")
            if not isinstance(params, list) or not all(is_int(p, 0) and p < 2**31 for p in params):
                raise refuse(
                    source, f"{here}.params", f"must be a list of parameter indices, got {_short(params)}."
                )
            if seen & set(params) or len(set(params)) != len(params):
                raise refuse(source, f"{here}.params", "lists a parameter twice.")
            seen.update(params)
            for key, value in group.items():
                if key != "params" and not _finite_json(value):
                    raise refuse(source, f"{here}.{key}", f"must be finite, got {_short(value)}.")


def check_state_against(
    expected: Mapping[str, tuple[tuple[int, ...], torch.dtype]],
    found: Mapping[str, tuple[tuple[int, ...], torch.dtype]],
    source: str,
    prefix: str,
    what: str,
) -> None:
    """The file's tensors (name -> shape, dtype) are exactly those the model ``what`` needs.

    Runs on the shapes and dtypes the file *declares*, before its tensors are read: a tampered file
    cannot make lit-sb3 allocate more than the model it describes.
    """
    missing = sorted(set(expected) - set(found))
    extra = sorted(set(found) - set(expected))
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"lacks {_names(missing)}")
        if extra:
            parts.append(f"has unexpected {_names(extra)}")
        raise refuse(source, prefix.rstrip("."), f"do not fit {what}: the file {' and '.join(parts)}.")
    for name, (shape, dtype) in expected.items():
        file_shape, file_dtype = found[name]
        if tuple(file_shape) != tuple(shape):
            raise refuse(
                source, f"{prefix}{name}", f"has shape {list(file_shape)}, but {what} needs {list(shape)}."
            )
        if file_dtype != dtype:
            raise refuse(
                source,
                f"{prefix}{name}",
                f"is {str(file_dtype).replace('torch.', '')}, but {what} needs "
                f"{str(dtype).replace('torch.', '')} (weights must be floating point where the model's are).",
            )


def check_tensor_values(state: Mapping[str, Any], source: str, prefix: str) -> None:
    """Floating-point tensors hold finite numbers only (NaN or infinite weights cannot act)."""
    for name, tensor in state.items():
        if not isinstance(tensor, torch.Tensor):
            raise refuse(source, f"{prefix}{name}", f"must be a tensor, got {type(tensor).__name__}.")
        if tensor.is_floating_point() and tensor.numel() and not bool(torch.isfinite(tensor).all()):
            raise refuse(
                source,
                f"{prefix}{name}",
                "holds NaN or infinity: the model diverged or the file was tampered with.",
            )


def rebuild_error(exc: BaseException, source: str, prefix: str) -> ModelFileError | None:
    """A ``ModelFileError`` for a bad hyperparameter met while rebuilding a model from a file, else None.

    ``prefix`` is where the file keeps its hyperparameters (``"hyperparameters."`` in model files,
    ``"hyper_parameters."`` in Lightning checkpoints).
    """
    if isinstance(exc, ConfigurationError):
        text = str(exc)
        if exc.field and text.startswith(
            exc.field
        ):  # "vf_coef must be ..." -> "hyperparameters.vf_coef must ..."
            error = ModelFileError(f"{source!r}: {prefix}{text}", path=source, field=f"{prefix}{exc.field}")
        else:
            field = f"{prefix}{exc.field}" if exc.field else prefix.rstrip(".")
            error = refuse(source, field, f"cannot be used: {text}")
        error.__cause__ = exc
        return error
    if isinstance(exc, TypeError) and "argument" in str(exc):
        error = refuse(source, prefix.rstrip("."), f"do not fit the algorithm: {exc}")
        error.__cause__ = exc
        return error
    return None


# Hyperparameters that name classes, and the kind of class each names.
_NAMED_POLICY_KWARGS = {
    "activation_fn": "activation",
    "features_extractor_class": "features_extractor",
    "optimizer_class": "optimizer",
}


def check_named_classes(cls: type, hyperparameters: Mapping[str, Any], source: str, prefix: str) -> None:
    """Every class the hyperparameters name resolves through the allow-list, before the model is built.

    The algorithm resolves them again when it builds its policy; checking first means a file naming
    ``tempfile:mkdtemp`` or ``this:x`` is refused with the file and the field named, on every load path,
    before anything is imported or called.
    """
    from lit_sb3_core.errors import DisallowedNameError
    from lit_sb3_core.registry.names import resolve_named_class

    try:
        policy = hyperparameters.get("policy")
        if isinstance(policy, str) and set(policy) & {":", "."}:
            resolve_named_class(
                "policy",
                policy,
                field="policy",
                base=torch.nn.Module,
                algo=getattr(cls, "algo_name", ""),
                extra=getattr(cls, "policy_aliases", {}),
            )
        policy_kwargs = hyperparameters.get("policy_kwargs")
        if policy_kwargs is not None and not isinstance(policy_kwargs, dict):
            raise refuse(
                source, f"{prefix}policy_kwargs", f"must be a dict or null, got {_short(policy_kwargs)}."
            )
        for key, kind in _NAMED_POLICY_KWARGS.items():
            value = (policy_kwargs or {}).get(key)
            if isinstance(value, str):
                resolve_named_class(kind, value, field=f"policy_kwargs.{key}")
        buffer = hyperparameters.get("replay_buffer_class")
        if isinstance(buffer, str):
            resolve_named_class("buffer", buffer, field="replay_buffer_class")
    except DisallowedNameError as exc:
        error = rebuild_error(exc, source, prefix)
        assert error is not None
        raise error from exc


def check_checkpoint_fits(
    model: Any, checkpoint: Mapping[str, Any], observation_space: Any, action_space: Any
) -> None:
    """The checkpoint describes ``model`` (already built): the same spaces, and weights of its shapes.

    The message says what the checkpoint holds and what was given (the model built for the run's env), so
    a resume with the wrong environment reads the right way round.
    """
    from lit_sb3_core.foundation.spaces import describe_space

    if observation_space != model.observation_space or action_space != model.action_space:
        trainer = getattr(model, "_trainer", None)
        stage = getattr(getattr(trainer, "state", None), "fn", None)
        given = (
            f"the model given to {stage.value if hasattr(stage, 'value') else stage}"
            if stage
            else "the model"
        )
        raise ModelFileError(
            f"the checkpoint holds a model for observations {describe_space(observation_space)} and actions "
            f"{describe_space(action_space)}, but {given} was built for observations "
            f"{describe_space(model.observation_space)} and actions {describe_space(model.action_space)} (from its "
            "environment). Resume with an environment of the checkpoint's spaces, or build the model from the "
            "checkpoint with <Algorithm>.load_from_checkpoint(path).",
            field="lit_sb3.observation_space",
        )
    state_dict = checkpoint.get("state_dict") or {}
    expected = {name: (tuple(t.shape), t.dtype) for name, t in model.state_dict().items()}
    found = {name: (tuple(t.shape), t.dtype) for name, t in state_dict.items() if isinstance(t, torch.Tensor)}
    try:
        check_state_against(expected, found, "", "state_dict.", "the model")
    except ModelFileError as exc:
        raise ModelFileError(str(exc).removeprefix("'': "), field=exc.field) from None


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
    return f"tensor{'s' if len(names) > 1 else ''} {shown}"


def _finite_json(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(_finite_json(v) for v in value)
    if isinstance(value, dict):
        return all(_finite_json(v) for v in value.values())
    return value is None or isinstance(value, (bool, int, str))
