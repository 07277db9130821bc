"""Space helpers shared by policies, buffers and model files: shapes, preprocessing and JSON round trips.

Observations reach the networks as float tensors; this module is the one place that knows how each
gymnasium space turns into one (Discrete becomes one-hot, images are scaled to [0, 1], ...).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

__all__ = [
    "is_image_space",
    "flat_feature_dim",
    "action_dim",
    "preprocess_obs",
    "obs_to_tensor",
    "space_to_json",
    "space_from_json",
    "describe_space",
]


def is_image_space(space: spaces.Space, check_channels: bool = False) -> bool:
    """True for 3-D uint8 Box spaces in [0, 255], the images SB3's CnnPolicy scales by 1/255."""
    if not isinstance(space, spaces.Box) or len(space.shape) != 3 or space.dtype != np.uint8:
        return False
    if np.any(space.low != 0) or np.any(space.high != 255):
        return False
    if not check_channels:
        return True
    smallest = min(space.shape[0], space.shape[-1])
    return smallest in (1, 3, 4)


def flat_feature_dim(space: spaces.Space) -> int:
    """Size of the flat float vector ``preprocess_obs`` makes for one observation."""
    if isinstance(space, spaces.Box):
        return int(np.prod(space.shape))
    if isinstance(space, spaces.Discrete):
        return int(space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return int(np.sum(space.nvec))
    if isinstance(space, spaces.MultiBinary):
        return int(np.prod(space.shape))
    if isinstance(space, spaces.Dict):
        return sum(flat_feature_dim(sub) for sub in space.spaces.values())
    raise NotImplementedError(f"Observation space {describe_space(space)} is not supported.")


def action_dim(space: spaces.Space) -> int:
    """Number of numbers that make one action (1 for Discrete)."""
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, (spaces.Box, spaces.MultiBinary)):
        return int(np.prod(space.shape))
    if isinstance(space, spaces.MultiDiscrete):
        return len(space.nvec)
    raise NotImplementedError(f"Action space {describe_space(space)} is not supported.")


def preprocess_obs(obs: Any, space: spaces.Space, normalize_images: bool = True) -> Any:
    """Turn a batch of raw observations (tensors in the space's dtype) into float network input."""
    if isinstance(space, spaces.Box):
        if normalize_images and is_image_space(space):
            return obs.float() / 255.0
        return obs.float()
    if isinstance(space, spaces.Discrete):
        return F.one_hot((obs.long() - int(space.start)).reshape(-1), int(space.n)).float()
    if isinstance(space, spaces.MultiDiscrete):
        flat = obs.long().reshape(obs.shape[0], -1)
        return torch.cat(
            [F.one_hot(flat[:, i], int(n)).float() for i, n in enumerate(space.nvec.reshape(-1))], dim=1
        )
    if isinstance(space, spaces.MultiBinary):
        return obs.float()
    if isinstance(space, spaces.Dict):
        return {key: preprocess_obs(obs[key], sub, normalize_images) for key, sub in space.spaces.items()}
    raise NotImplementedError(f"Observation space {describe_space(space)} is not supported.")


def obs_to_tensor(obs: Any, device: torch.device) -> Any:
    """Numpy observation (or dict of them) to tensors on ``device`` without a copy where possible."""
    if isinstance(obs, dict):
        return {key: torch.as_tensor(value, device=device) for key, value in obs.items()}
    return torch.as_tensor(obs, device=device)


def describe_space(space: spaces.Space) -> str:
    """Short human-readable name of a space for error messages, e.g. ``Box(shape=(4,), float32)``."""
    if isinstance(space, spaces.Box):
        return f"Box(shape={space.shape}, {space.dtype})"
    if isinstance(space, spaces.Discrete):
        return f"Discrete({space.n})"
    if isinstance(space, spaces.MultiDiscrete):
        return f"MultiDiscrete({space.nvec.tolist()})"
    if isinstance(space, spaces.MultiBinary):
        return f"MultiBinary({space.n})"
    if isinstance(space, spaces.Dict):
        inner = ", ".join(f"{k}: {describe_space(v)}" for k, v in space.spaces.items())
        return f"Dict({inner})"
    return type(space).__name__


def space_to_json(space: spaces.Space) -> dict[str, Any]:
    """A JSON description of ``space`` that ``space_from_json`` turns back into an equal space."""
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": space.low.tolist(),
            "high": space.high.tolist(),
            "shape": list(space.shape),
            "dtype": str(space.dtype),
        }
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist(), "start": space.start.tolist()}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {key: space_to_json(sub) for key, sub in space.spaces.items()}}
    raise NotImplementedError(f"Cannot describe {describe_space(space)} as JSON.")


def space_from_json(data: dict[str, Any]) -> spaces.Space:
    """Inverse of ``space_to_json``; raises ValueError on descriptions it does not know."""
    kind = data.get("type")
    if kind == "Box":
        low = np.asarray(data["low"], dtype=data["dtype"])
        high = np.asarray(data["high"], dtype=data["dtype"])
        return spaces.Box(low=low, high=high, shape=tuple(data["shape"]), dtype=data["dtype"])
    if kind == "Discrete":
        return spaces.Discrete(int(data["n"]), start=int(data.get("start", 0)))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(np.asarray(data["nvec"]), start=np.asarray(data.get("start", 0)))
    if kind == "MultiBinary":
        return spaces.MultiBinary(data["n"])
    if kind == "Dict":
        return spaces.Dict({key: space_from_json(sub) for key, sub in data["spaces"].items()})
    raise ValueError(f"Unknown space description {data!r}.")
