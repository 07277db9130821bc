"""Space helpers shared by policies, buffers and model files: shapes, preprocessing and JSON round trips.

Observations reach the networks as float tensors; this module is the one place that knows how each
gymnasium space turns into one: Discrete and MultiDiscrete become one-hot vectors, uint8 images are
scaled to [0, 1], and channel-last (HxWxC) images are transposed to the CxHxW layout convolutions expect,
which is what Stable-Baselines3's ``VecTransposeImage`` wrapper does at the environment level. Doing it in
the policy keeps the environment, the rollout buffer and ``predict`` in the environment's own layout.
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from lit_sb3_core.foundation.checks import is_int

__all__ = [
    "ObsPreprocessor",
    "action_dim",
    "channels_first_space",
    "check_space_json",
    "describe_space",
    "flat_feature_dim",
    "is_image_space",
    "is_image_space_channels_first",
    "obs_to_tensor",
    "preprocess_obs",
    "scale_action",
    "space_from_json",
    "space_to_json",
    "to_numpy",
    "unscale_action",
]

# numpy arrays and torch tensors alike (the action rescaling helpers)
ArrayT = TypeVar("ArrayT", np.ndarray, torch.Tensor)


def is_image_space(space: spaces.Space, check_channels: bool = False, normalized_image: bool = False) -> bool:
    """True for 3-D uint8 Box spaces in [0, 255]: the images CnnPolicy handles and scales by 1/255.

    Args:
        space: any space.
        check_channels: also require 1, 3 or 4 channels (grey, RGB, RGB-D) on the channel axis.
        normalized_image: accept any 3-D Box (already-normalised images): skip dtype and bounds checks.
    """
    if not isinstance(space, spaces.Box) or len(space.shape) != 3:
        return False
    if not normalized_image and (
        space.dtype != np.uint8 or np.any(space.low != 0) or np.any(space.high != 255)
    ):
        return False
    if not check_channels:
        return True
    channels = space.shape[0] if is_image_space_channels_first(space) else space.shape[-1]
    return channels in (1, 3, 4)


def is_image_space_channels_first(space: spaces.Box) -> bool:
    """Guess the layout as SB3 does: the smallest axis holds the channels (CxHxW if it is the first)."""
    smallest = int(np.argmin(space.shape))
    if smallest == 1:
        warnings.warn(
            f"Treating the image space {describe_space(space)} as channels-last (HxWxC), although its second "
            "axis is the smallest.",
            UserWarning,
            stacklevel=2,
        )
    return smallest == 0


def _needs_transpose(space: spaces.Space) -> bool:
    return is_image_space(space) and not is_image_space_channels_first(space)  # type: ignore[arg-type]


def channels_first_space(space: spaces.Space) -> spaces.Space:
    """The space the networks see: channel-last uint8 images (also inside a Dict) become CxHxW."""
    if isinstance(space, spaces.Dict):
        return spaces.Dict({key: channels_first_space(sub) for key, sub in space.spaces.items()})
    if not _needs_transpose(space):
        return space
    assert isinstance(space, spaces.Box)
    return spaces.Box(
        low=np.moveaxis(space.low, -1, 0),
        high=np.moveaxis(space.high, -1, 0),
        dtype=space.dtype,
    )


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
    """Number of numbers that make one (flattened) action; 1 for Discrete."""
    if isinstance(space, spaces.Discrete):
        return 1
    if isinstance(space, (spaces.Box, spaces.MultiBinary, spaces.MultiDiscrete)):
        return int(np.prod(space.shape))
    raise NotImplementedError(f"Action space {describe_space(space)} is not supported.")


class ObsPreprocessor:
    """``preprocess_obs`` for one space with every per-space decision taken once, at construction.

    Policies call it on every forward pass, so the hot path is a couple of attribute reads and the tensor
    operations themselves. Batches keep any leading axes (images are transposed with ``movedim``).
    """

    def __init__(self, space: spaces.Space, normalize_images: bool = True) -> None:
        self.space = space
        self.children: dict[str, ObsPreprocessor] = {}
        self.transpose = self.scale = False
        self.n, self.start = 0, 0
        self.nvec: list[int] = []
        self.starts: list[int] = []
        # The shape of one preprocessed observation (``network_input`` tells them from raw ones by it).
        self.input_shape: tuple[int, ...] = ()
        if isinstance(space, spaces.Dict):
            self.kind = "dict"
            self.children = {key: ObsPreprocessor(sub, normalize_images) for key, sub in space.spaces.items()}
        elif isinstance(space, spaces.Box):
            self.kind = "box"
            image = is_image_space(space)
            self.transpose = image and not is_image_space_channels_first(space)
            self.scale = image and normalize_images
            self.input_shape = tuple(channels_first_space(space).shape or ())
        elif isinstance(space, spaces.Discrete):
            self.kind = "discrete"
            self.n, self.start = int(space.n), int(space.start)
            self.input_shape = (self.n,)
        elif isinstance(space, spaces.MultiDiscrete):
            self.kind = "multidiscrete"
            self.nvec = [int(n) for n in np.asarray(space.nvec).reshape(-1)]
            self.starts = [int(s) for s in np.asarray(space.start).reshape(-1)]
            self.input_shape = (sum(self.nvec),)
        elif isinstance(space, spaces.MultiBinary):
            self.kind = "binary"
            self.input_shape = tuple(space.shape)
        else:
            raise NotImplementedError(f"Observation space {describe_space(space)} is not supported.")

    def __call__(self, obs: Any) -> Any:
        kind = self.kind
        if kind == "box":
            if self.transpose:
                last = obs.dim() - 1  # positive axes: ONNX's Transpose takes no negative ones
                obs = obs.movedim(last, last - 2)
            as_float = obs.float()
            if not self.scale:
                return as_float
            # a new tensor (uint8 frames) is scaled in place: the same values, one pass less over a minibatch
            return as_float.div_(255.0) if as_float is not obs else as_float / 255.0
        if kind == "discrete":
            index = obs.long().reshape(-1)
            return F.one_hot(index - self.start if self.start else index, self.n).float()
        if kind == "multidiscrete":
            flat = obs.long().reshape(obs.shape[0], -1)
            return torch.cat(
                [
                    F.one_hot(flat[:, i] - start if start else flat[:, i], n).float()
                    for i, (n, start) in enumerate(zip(self.nvec, self.starts))
                ],
                dim=1,
            )
        if kind == "binary":
            return obs.float()
        return {key: child(obs[key]) for key, child in self.children.items()}

    def network_input(self, obs: Any) -> Any:
        """``obs`` as network input, whether already preprocessed or raw.

        SB3's networks preprocess inside (``model.actor(obs_to_tensor(obs)[0])`` one-hot encodes a
        Discrete index); lit-sb3's algorithms preprocess a batch once for all their networks. A float
        tensor of the preprocessed shape (``input_shape``) is taken as preprocessed (float32); anything
        else (integer indices, uint8 or channel-last images) as raw observations, preprocessed here.
        """
        if self.kind == "dict":
            return {key: child.network_input(obs[key]) for key, child in self.children.items()}
        if isinstance(obs, torch.Tensor) and obs.shape[1:] == self.input_shape:
            if obs.dtype is torch.float32:  # what training passes: checked in a few attribute reads
                return obs
            if obs.is_floating_point():
                return obs.float()
        return self(obs)


def scale_action(actions: ArrayT, low: Any, high: Any) -> ArrayT:
    """Box actions from ``[low, high]`` to ``[-1, 1]`` (SB3's ``scale_action``); numpy arrays or tensors.

    The one copy of the rule: policies, the off-policy loop, exported policies and plugins call it.
    """
    return 2.0 * ((actions - low) / (high - low)) - 1.0


def unscale_action(scaled: ArrayT, low: Any, high: Any) -> ArrayT:
    """Box actions from ``[-1, 1]`` (a tanh-squashed sample) to ``[low, high]`` (SB3's ``unscale_action``)."""
    return low + 0.5 * (scaled + 1.0) * (high - low)


def preprocess_obs(obs: Any, space: spaces.Space, normalize_images: bool = True) -> Any:
    """Turn a batch of raw observations (tensors in the space's dtype) into float network input.

    Repeated callers should build an ``ObsPreprocessor`` once instead.
    """
    return ObsPreprocessor(space, normalize_images)(obs)


def obs_to_tensor(obs: Any, device: torch.device) -> Any:
    """Numpy observation (or dict of them) to tensors on ``device`` without a copy where possible."""
    if isinstance(obs, dict):
        return {key: torch.as_tensor(value, device=device) for key, value in obs.items()}
    cpu = isinstance(device, torch.device) and device.type == "cpu"
    if cpu and type(obs) is np.ndarray and obs.flags.writeable and obs.dtype.isnative:
        return torch.from_numpy(obs)  # what as_tensor returns here, without parsing the device (~3 us a step)
    return torch.as_tensor(obs, device=device)


def to_numpy(tensor: torch.Tensor) -> np.ndarray:
    """A tensor as a numpy array; half-precision floats (from Lightning's mixed-precision autocast, which
    numpy cannot hold) become float32."""
    if tensor.dtype in (torch.bfloat16, torch.float16):
        tensor = tensor.float()
    if tensor.is_cpu and not tensor.requires_grad:
        return tensor.numpy()  # what detach().cpu() would hand numpy, two operators fewer
    return tensor.detach().cpu().numpy()


def describe_space(space: spaces.Space | None) -> str:
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
    if isinstance(space, spaces.Tuple):
        return f"Tuple({', '.join(describe_space(sub) for sub in space.spaces)})"
    return type(space).__name__


def _compact(values: np.ndarray) -> Any:
    """One number when every entry is equal (image bounds), else the nested list."""
    flat = values.reshape(-1)
    if flat.size and np.all(flat == flat[0]):
        return flat[0].item()
    return values.tolist()


def space_to_json(space: spaces.Space) -> dict[str, Any]:
    """A JSON description of ``space`` that ``space_from_json`` turns back into an equal space."""
    if isinstance(space, spaces.Box):
        return {
            "type": "Box",
            "low": _compact(space.low),
            "high": _compact(space.high),
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


# Limits on spaces read from files: far above any real environment (Atari frames are 28k elements, a
# 512x512 RGB image 786k), far below what would exhaust memory when a policy is built for the space.
MAX_SPACE_ELEMENTS = 2**24
MAX_DISCRETE_ACTIONS = 2**20
_MAX_DICT_KEYS = 1024
_MAX_DIMENSIONS = 8


def check_space_json(data: Any, field: str = "space") -> None:
    """Check a space description read from a file, before anything is allocated for it.

    Refuses what is not a description ``space_to_json`` writes, and sizes no environment has (a Box of
    shape ``[1e6, 1e6]``, ``Discrete(1e12)``): the policy built for such a space would exhaust memory.

    Raises:
        ValueError: naming ``field`` (and the key inside it) and the problem.
    """
    _check_space(data, field, depth=0)


def _check_space(data: Any, field: str, depth: int) -> None:
    if not isinstance(data, dict):
        raise ValueError(
            f"{field} must be a space description (a JSON object with 'type'), got {_short(data)}."
        )
    kind = data.get("type")
    if kind == "Box":
        shape = _shape(data.get("shape"), f"{field}.shape")
        size = int(np.prod(shape, dtype=np.float64)) if shape else 1
        if size > MAX_SPACE_ELEMENTS:
            raise ValueError(
                f"{field} is a Box of shape {list(shape)} ({size:.3g} elements): more than the "
                f"{MAX_SPACE_ELEMENTS} elements lit-sb3 reads from a file."
            )
        dtype = data.get("dtype")
        try:
            kind_of = np.dtype(dtype).kind if isinstance(dtype, str) else ""
        except TypeError:
            kind_of = ""
        if kind_of not in ("b", "i", "u", "f"):
            raise ValueError(
                f"{field}.dtype must name a numeric dtype such as 'float32', got {_short(dtype)}."
            )
        for bound in ("low", "high"):
            _bounds(data.get(bound), shape, size, f"{field}.{bound}", float_ok=kind_of == "f")
        low = np.broadcast_to(np.asarray(data["low"], dtype=np.float64), shape)
        high = np.broadcast_to(np.asarray(data["high"], dtype=np.float64), shape)
        if np.any(low > high):
            raise ValueError(f"{field}: low is above high for some entries.")
    elif kind == "Discrete":
        n = data.get("n")
        if not is_int(n) or not 1 <= n <= MAX_DISCRETE_ACTIONS:
            raise ValueError(
                f"{field}.n must be an integer from 1 to {MAX_DISCRETE_ACTIONS}, got {_short(n)}."
            )
        if not is_int(data.get("start", 0)):
            raise ValueError(f"{field}.start must be an integer, got {_short(data.get('start'))}.")
    elif kind == "MultiDiscrete":
        nvec = np.asarray(_int_array(data.get("nvec"), f"{field}.nvec"))
        if nvec.size == 0 or np.any(nvec < 1) or nvec.sum(dtype=np.float64) > MAX_DISCRETE_ACTIONS:
            raise ValueError(
                f"{field}.nvec must hold positive integers summing to at most {MAX_DISCRETE_ACTIONS}."
            )
        start = np.asarray(_int_array(data.get("start", 0), f"{field}.start"))
        if start.ndim and start.shape != nvec.shape:
            raise ValueError(f"{field}.start has shape {start.shape}, nvec {nvec.shape}.")
    elif kind == "MultiBinary":
        n = data.get("n")
        shape = _shape(n if isinstance(n, list) else [n], f"{field}.n")
        if not shape or int(np.prod(shape, dtype=np.float64)) > MAX_SPACE_ELEMENTS or min(shape) < 1:
            raise ValueError(f"{field}.n must be a positive size (at most {MAX_SPACE_ELEMENTS} elements).")
    elif kind == "Dict":
        subspaces = data.get("spaces")
        if not isinstance(subspaces, dict) or not subspaces or len(subspaces) > _MAX_DICT_KEYS:
            raise ValueError(f"{field}.spaces must map 1 to {_MAX_DICT_KEYS} keys to space descriptions.")
        if depth >= _MAX_DIMENSIONS:
            raise ValueError(f"{field} nests Dict spaces more than {_MAX_DIMENSIONS} deep.")
        for key, sub in subspaces.items():
            _check_space(sub, f"{field}.spaces[{key!r}]", depth + 1)
    else:
        raise ValueError(
            f"{field}.type must be Box, Discrete, MultiDiscrete, MultiBinary or Dict, got {_short(kind)}."
        )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _shape(value: Any, field: str) -> tuple[int, ...]:
    if not isinstance(value, list) or len(value) > _MAX_DIMENSIONS or not all(is_int(v, 0) for v in value):
        raise ValueError(
            f"{field} must be a list of at most {_MAX_DIMENSIONS} non-negative integers, got {_short(value)}."
        )
    return tuple(value)


def _count(value: Any, limit: int) -> int:
    """Leaves of a nested JSON list, counting no further than ``limit``."""
    if not isinstance(value, list):
        return 1
    total = 0
    for item in value:
        total += _count(item, limit - total)
        if total > limit:
            break
    return total


def _bounds(value: Any, shape: tuple[int, ...], size: int, field: str, float_ok: bool) -> None:
    count = _count(value, size)
    if count != 1 and count != size:
        raise ValueError(f"{field} must be one number or {size} numbers (shape {list(shape)}), got {count}.")
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{field} must hold numbers, got {_short(value)}.") from None
    if array.size != 1 and array.shape != shape:
        raise ValueError(f"{field} has shape {list(array.shape)}, the space {list(shape)}.")
    if np.isnan(array).any() or (not float_ok and not np.isfinite(array).all()):
        raise ValueError(f"{field} holds NaN{'' if float_ok else ' or infinity'}.")


def _int_array(value: Any, field: str) -> Any:
    count = _count(value, MAX_SPACE_ELEMENTS)
    if count > MAX_SPACE_ELEMENTS:
        raise ValueError(f"{field} has more than {MAX_SPACE_ELEMENTS} entries.")
    array = np.asarray(value, dtype=object)
    flat = array.reshape(-1)
    if array.dtype == object and not all(is_int(v) for v in flat):
        raise ValueError(f"{field} must hold integers, got {_short(value)}.")
    return value


def space_from_json(data: dict[str, Any]) -> spaces.Space:
    """Inverse of ``space_to_json``; checks the description first (``check_space_json``, a ValueError)."""
    check_space_json(data)
    return _space_from_json(data)


def _space_from_json(data: dict[str, Any]) -> spaces.Space:
    kind = data.get("type")
    if kind == "Box":
        shape = tuple(data["shape"])
        low = np.array(np.broadcast_to(np.asarray(data["low"], dtype=data["dtype"]), shape))
        high = np.array(np.broadcast_to(np.asarray(data["high"], dtype=data["dtype"]), shape))
        return spaces.Box(low=low, high=high, shape=shape, dtype=data["dtype"])
    if kind == "Discrete":
        return spaces.Discrete(int(data["n"]), start=int(data.get("start", 0)))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(np.asarray(data["nvec"]), start=np.asarray(data.get("start", 0)))
    if kind == "MultiBinary":
        return spaces.MultiBinary(data["n"])
    if kind == "Dict":
        return spaces.Dict({key: _space_from_json(sub) for key, sub in data["spaces"].items()})
    raise ValueError(f"Unknown space description {data!r}.")
