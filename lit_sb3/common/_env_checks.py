"""The parts of ``check_env`` that judge spaces and observations (``env_checker`` runs the env).

``observation_error`` is strict where lit-sb3's training checks are lenient: ``check_env`` is asked whether
an env returns exactly what it declares, and says which key, index or value does not.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["observation_error", "unsupported_space_names", "warn_about_spaces"]

_RL_TIPS = "(see SB3's RL tips: https://stable-baselines3.readthedocs.io/en/master/guide/rl_tips.html)"
_ARRAY_SPACES = (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)
_LISTED = 20  # out-of-bounds entries named in one message


def _unchecked_types() -> tuple[type[spaces.Space], ...]:
    """Spaces whose values have no fixed shape (gymnasium < 1.0 has no OneOf)."""
    found: list[type[spaces.Space]] = [spaces.Sequence, spaces.Graph]
    one_of = getattr(spaces, "OneOf", None)
    if one_of is not None:
        found.append(one_of)
    return tuple(found)


def unsupported_space_names(space: spaces.Space) -> list[str]:
    """Sequence, Graph and OneOf spaces at the top of ``space`` or one level down: no lit-sb3 (or SB3)
    algorithm takes them, and what an env returns for them is not checked."""
    members: list[spaces.Space] = [space]
    if isinstance(space, spaces.Dict):
        members += list(space.spaces.values())
    elif isinstance(space, spaces.Tuple):
        members += list(space.spaces)
    return sorted({type(member).__name__ for member in members if isinstance(member, _unchecked_types())})


# observations -----------------------------------------------------------------------------------------
def observation_error(space: spaces.Space, obs: Any, call: str) -> str | None:
    """What makes ``obs`` (returned by ``call``) not an element of ``space``, or None when it is one."""
    where = f"The observation returned by {call}"
    if isinstance(space, spaces.Dict):
        if not isinstance(obs, Mapping):
            return f"{where} must be a dict with the keys {list(space.spaces)}, got {type(obs).__name__}"
        missing = [key for key in space.spaces if key not in obs]
        extra = [key for key in obs if key not in space.spaces]
        if missing or extra:
            return (
                f"The observation keys returned by {call} must match the observation space keys "
                f"{list(space.spaces)}: missing {missing}, unexpected {extra}"
            )
        for key, sub in space.spaces.items():
            problem = observation_error(sub, obs[key], call)
            if problem:
                return f"Error while checking key={key}: {problem}"
        return None
    if not isinstance(space, spaces.Tuple) and isinstance(obs, tuple):
        return f"{where} must be a single value for {space}, not a tuple of {len(obs)}"
    if isinstance(space, spaces.Discrete):
        integer = np.issubdtype(type(obs), np.integer) or (
            isinstance(obs, np.ndarray) and obs.ndim == 0 and obs.dtype.kind in "iu"
        )
        if not integer:
            return f"{where} must be an int for {space}, got {obs!r} ({type(obs).__name__})"
        if not space.contains(obs):
            low, high = int(space.start), int(space.start + space.n - 1)
            return f"{where} is outside {space}. Expected: {low} <= obs <= {high}, actual value: {obs}"
        return None
    if isinstance(space, _ARRAY_SPACES):
        problem = _array_error(space, obs, where)
        if problem:
            return problem
    if not space.contains(obs):
        return f"{where} is not an element of the observation space {space}"
    return None


def _array_error(
    space: spaces.Box | spaces.MultiDiscrete | spaces.MultiBinary, obs: Any, where: str
) -> str | None:
    if not isinstance(obs, np.ndarray):
        return (
            f"{where} must be a numpy array for {space}, got {type(obs).__name__}: return "
            f"np.asarray(obs, dtype=np.{space.dtype})"
        )
    if obs.shape != space.shape:
        return (
            f"{where} does not match the shape of the observation space {space}. "
            f"Expected: {space.shape}, actual shape: {obs.shape}"
        )
    assert space.dtype is not None
    if not np.can_cast(obs.dtype, space.dtype):
        return (
            f"{where} does not match the dtype of the observation space {space} (it cannot be cast safely). "
            f"Expected: {space.dtype}, actual dtype: {obs.dtype}"
        )
    if isinstance(space, spaces.Box):
        low, high = space.low, space.high
    elif isinstance(space, spaces.MultiDiscrete):
        low, high = space.start, space.start + space.nvec - 1
    else:
        low, high = np.zeros(space.shape, np.int8), np.ones(space.shape, np.int8)
    inside = (obs >= low) & (obs <= high)  # False for NaN too
    if inside.all():
        return None
    invalid = list(zip(*np.nonzero(~inside), strict=True))
    listed = [
        f"Expected: {low[index]} <= obs[{','.join(map(str, index))}] <= {high[index]}, actual value: {obs[index]}"
        for index in invalid[:_LISTED]
    ]
    more = f"; and {len(invalid) - _LISTED} more" if len(invalid) > _LISTED else ""
    return (
        f"{where} does not match the bounds of the observation space {space}, at "
        f"{len(invalid)} invalid indices: " + "; ".join(listed) + more
    )


# spaces -----------------------------------------------------------------------------------------------
def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def warn_about_spaces(observation_space: spaces.Space, action_space: spaces.Space) -> None:
    """Warn about spaces that work but train badly, and those no algorithm takes (SB3's warnings)."""
    _warn_about_structure(observation_space)
    members = (
        dict(observation_space.spaces)
        if isinstance(observation_space, spaces.Dict)
        else {"": observation_space}
    )
    for key, member in members.items():
        where = f" (key {key!r})" if key else ""
        if isinstance(member, spaces.Box):
            _warn_about_box(member, where)
        _warn_about_discrete(member, f"observation space{where}")
    _warn_about_action_space(action_space)


def _warn_about_structure(observation_space: spaces.Space) -> None:
    if isinstance(observation_space, spaces.Tuple):
        _warn("Tuple observation spaces are not supported: use a Dict space (or flatten the observation).")
    if isinstance(observation_space, spaces.Dict):
        nested = [
            key
            for key, sub in observation_space.spaces.items()
            if isinstance(sub, (spaces.Dict, spaces.Tuple))
        ]
        if nested:
            _warn(f"Nested observation spaces are not supported (keys {nested}): flatten them to one level.")
    for name in unsupported_space_names(observation_space):
        hint = " Pad the observations to a fixed size instead." if name == "Sequence" else ""
        _warn(
            f"{name} observation spaces are not supported by lit-sb3 (nor SB3).{hint} The checks of what "
            "reset() and step() return are skipped."
        )


def _warn_about_box(box: spaces.Box, where: str) -> None:
    if np.any(box.low == box.high):
        _warn(
            f"The observation space{where} has dimensions whose low equals high: they carry no information."
        )
    if len(box.shape) == 3:
        if box.dtype != np.uint8:
            _warn(
                f"The observation space{where} looks like an image but has dtype {box.dtype}: CnnPolicy takes "
                "uint8 images. If it is not an image, flatten it to a 1D vector."
            )
        elif np.any(box.low != 0) or np.any(box.high != 255):
            _warn(f"The image observation space{where} should have bounds [0, 255] to be treated as images.")
        if min((s for s in box.shape if s > 4), default=0) < 36:
            _warn(
                f"The image observations{where} are smaller than 36x36: NatureCNN (CnnPolicy) needs at least that."
            )
    elif len(box.shape) != 1:
        _warn(
            f"The observation space{where} has the unconventional shape {box.shape} (neither an image nor a 1D "
            "vector): flatten it, or use a custom features extractor."
        )


def _warn_about_discrete(space: spaces.Space, what: str) -> None:
    if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)) and np.any(space.start != 0):
        _warn(f"The {what} {space} does not start at 0; lit-sb3 handles it, but some SB3 code does not.")
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim > 1:
        _warn(
            f"The {what} {space} is a multi-dimensional MultiDiscrete (nvec of shape {space.nvec.shape}), "
            "which SB3 does not support: flatten nvec to 1D with a wrapper."
        )


def _warn_about_action_space(action_space: spaces.Space) -> None:
    if isinstance(action_space, (spaces.Dict, spaces.Tuple)):
        _warn(
            f"{type(action_space).__name__} action spaces are not supported: flatten the actions into one space."
        )
    _warn_about_discrete(action_space, "action space")
    if isinstance(action_space, spaces.Box):
        if np.any(action_space.low != -1) or np.any(action_space.high != 1):
            _warn(f"We recommend a symmetric, normalized Box action space ([-1, 1]) {_RL_TIPS}.")
        if action_space.dtype != np.float32:
            _warn(f"The action space has dtype {action_space.dtype}; np.float32 avoids casting errors.")
