"""SB3's ``common.preprocessing``: how observations of each space reach the networks (lit-sb3's own)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from lit_sb3_core.foundation.spaces import (
    action_dim,
    channels_first_space,
    flat_feature_dim,
    is_image_space,
    is_image_space_channels_first,
    preprocess_obs,
)

__all__ = [
    "check_for_nested_spaces",
    "get_action_dim",
    "get_flattened_obs_dim",
    "get_obs_shape",
    "is_image_space",
    "is_image_space_channels_first",
    "maybe_transpose",
    "preprocess_obs",
]


def get_obs_shape(observation_space: spaces.Space) -> tuple[int, ...] | dict[str, tuple[int, ...]]:
    """The shape one observation is stored with (a dict of shapes for Dict spaces)."""
    if isinstance(observation_space, spaces.Dict):
        return {key: get_obs_shape(sub) for key, sub in observation_space.spaces.items()}  # type: ignore[misc]
    if isinstance(observation_space, spaces.Discrete):
        return (1,)
    if isinstance(observation_space, (spaces.Box, spaces.MultiDiscrete, spaces.MultiBinary)):
        return tuple(int(n) for n in observation_space.shape)
    raise NotImplementedError(f"{observation_space} observation spaces are not supported.")


def get_flattened_obs_dim(observation_space: spaces.Space) -> int:
    """The size of one preprocessed, flattened observation (one-hot for discrete spaces)."""
    return flat_feature_dim(observation_space)


def get_action_dim(action_space: spaces.Space) -> int:
    """The number of numbers in one action."""
    return action_dim(action_space)


def maybe_transpose(observation: np.ndarray, observation_space: spaces.Space) -> np.ndarray:
    """Channel-last images (one or a batch) as channel-first, as CnnPolicy reads them; others unchanged."""
    if channels_first_space(observation_space) is observation_space:
        return observation
    observation = np.asarray(observation)
    if observation.shape == observation_space.shape:
        return np.transpose(observation, (2, 0, 1))
    return np.transpose(observation, (0, 3, 1, 2))


def check_for_nested_spaces(obs_space: spaces.Space) -> None:
    """Raise NotImplementedError for Dict or Tuple spaces inside a Dict or Tuple space."""
    if isinstance(obs_space, (spaces.Dict, spaces.Tuple)):
        subs: Any = obs_space.spaces.values() if isinstance(obs_space, spaces.Dict) else obs_space.spaces
        if any(isinstance(sub, (spaces.Dict, spaces.Tuple)) for sub in subs):
            raise NotImplementedError(
                f"Nested observation spaces are not supported (a Dict or Tuple in {obs_space})."
            )
