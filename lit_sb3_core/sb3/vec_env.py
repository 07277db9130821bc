"""Stable-Baselines3's vector-env API: ``VecEnv`` and ``VecEnvWrapper``, for code written against SB3.

lit-sb3 trains on gymnasium's vector envs. SB3 code talks to its own ``VecEnv`` instead: ``reset()``
returns only observations, ``step()`` returns ``(obs, rewards, dones, infos)`` with one info dict per env
(``"terminal_observation"``, ``"TimeLimit.truncated"``), and sub-envs are reached with ``env_method``,
``get_attr`` and ``set_attr``. This module defines that API; ``vec_env_views`` turns gymnasium vector envs
into it and back, so a user's ``VecEnvWrapper`` subclass trains like any other env.

Gymnasium and numpy only (no torch): ``lit_sb3.common.vec_env`` builds on it.
"""

from __future__ import annotations

import inspect
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from copy import deepcopy
from typing import Any, TypeAlias

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = [
    "VecEnv",
    "VecEnvIndices",
    "VecEnvObs",
    "VecEnvStepReturn",
    "VecEnvWrapper",
    "tile_images",
]

VecEnvIndices: TypeAlias = int | Iterable[int] | None
VecEnvObs: TypeAlias = np.ndarray | dict[str, np.ndarray] | tuple[np.ndarray, ...]
VecEnvStepReturn: TypeAlias = tuple[VecEnvObs, np.ndarray, np.ndarray, list[dict[str, Any]]]


def tile_images(images: Sequence[np.ndarray]) -> np.ndarray:
    """One HxWxC image holding ``images`` (N of them) on a grid as close to square as possible."""
    batch = np.asarray(images)
    count, height, width, channels = batch.shape
    rows = int(np.ceil(np.sqrt(count)))
    cols = int(np.ceil(count / rows))
    padded = np.zeros((rows * cols, height, width, channels), dtype=batch.dtype)
    padded[:count] = batch
    grid = padded.reshape(rows, cols, height, width, channels).transpose(0, 2, 1, 3, 4)
    return grid.reshape(rows * height, cols * width, channels)


class VecEnv(ABC):
    """SB3's abstract vectorized environment: ``num_envs`` copies stepped together, resetting themselves.

    Args:
        num_envs: number of environments.
        observation_space: the observation space of one environment.
        action_space: the action space of one environment.
    """

    def __init__(self, num_envs: int, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        self.num_envs = num_envs
        self.observation_space = observation_space
        self.action_space = action_space
        self.reset_infos: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        self._seeds: list[int | None] = [None] * num_envs  # used by the next reset() only
        self._options: list[dict[str, Any]] = [{} for _ in range(num_envs)]
        try:
            render_modes = self.get_attr("render_mode")
        except AttributeError:
            render_modes = [None] * num_envs
        if any(mode != render_modes[0] for mode in render_modes):
            raise ValueError(f"All environments must use the same render_mode, got {list(render_modes)}.")
        self.render_mode = render_modes[0] if render_modes else None
        shown = ["human", "rgb_array"] if self.render_mode == "rgb_array" else [self.render_mode]
        self.metadata: dict[str, Any] = {"render_modes": shown if self.render_mode is not None else []}

    # the abstract API ------------------------------------------------------------------------------
    @abstractmethod
    def reset(self) -> VecEnvObs:
        """Reset every environment and return their first observations."""

    @abstractmethod
    def step_async(self, actions: np.ndarray) -> None:
        """Start a step of every environment with ``actions``; ``step_wait`` returns its results."""

    @abstractmethod
    def step_wait(self) -> VecEnvStepReturn:
        """The results of the step started by ``step_async``: ``(obs, rewards, dones, infos)``."""

    @abstractmethod
    def close(self) -> None:
        """Release the environments' resources."""

    @abstractmethod
    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute ``attr_name`` of each environment (searched through its wrappers)."""

    @abstractmethod
    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set ``attr_name`` to ``value`` in each selected environment."""

    @abstractmethod
    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call ``method_name(*method_args, **method_kwargs)`` on each selected environment."""

    @abstractmethod
    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        """Whether each selected environment is wrapped in ``wrapper_class``."""

    # the rest of SB3's API, built on the abstract part ---------------------------------------------
    def step(self, actions: np.ndarray) -> VecEnvStepReturn:
        """Step every environment; the ones whose episode ended reset themselves."""
        self.step_async(actions)
        return self.step_wait()

    def has_attr(self, attr_name: str) -> bool:
        """True when every environment has ``attr_name``."""
        try:
            self.get_attr(attr_name)
        except AttributeError:
            return False
        return True

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One RGB frame per environment (``render_mode="rgb_array"`` environments only)."""
        raise NotImplementedError(f"{type(self).__name__} cannot render images.")

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """Render as SB3 does: ``"rgb_array"`` returns the frames tiled into one image; ``"human"`` shows
        the environments' own window (or that image in an OpenCV window when they render to arrays)."""
        if (
            mode is not None
            and mode != self.render_mode
            and not (mode == "human" and self.render_mode == "rgb_array")
        ):
            warnings.warn(
                f"render(mode={mode!r}) on environments created with render_mode={self.render_mode!r}: the "
                "mode is chosen when an environment is created (gymnasium.make(id, render_mode=...)).",
                stacklevel=2,
            )
            return None
        mode = mode or self.render_mode
        if mode is None:
            warnings.warn(
                "render() was called but the environments have no render_mode: create them with "
                "gymnasium.make(id, render_mode='rgb_array').",
                stacklevel=2,
            )
            return None
        if self.render_mode != "rgb_array":
            self.env_method("render")
            return None
        image = tile_images(self.get_images())  # type: ignore[arg-type]
        if mode == "human":
            try:
                import cv2
            except ImportError as exc:
                raise ImportError(
                    "render('human') of rgb_array environments shows the frames with OpenCV: "
                    "pip install opencv-python (or call render() to get the image)."
                ) from exc
            cv2.imshow("vecenv", image[:, :, ::-1])
            cv2.waitKey(1)
            return None
        return image

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed environment ``i`` with ``seed + i`` at the next ``reset()`` (a random base when None)."""
        if seed is None:
            seed = int(np.random.randint(0, np.iinfo(np.uint32).max, dtype=np.uint32))
        self._seeds = [seed + i for i in range(self.num_envs)]
        return self._seeds

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        """Reset options for the next ``reset()``: one dict for every environment, or a list of them."""
        options = {} if options is None else options
        self._options = deepcopy([options] * self.num_envs if isinstance(options, dict) else list(options))

    def _reset_seeds(self) -> None:
        self._seeds = [None] * self.num_envs

    def _reset_options(self) -> None:
        self._options = [{} for _ in range(self.num_envs)]

    @property
    def unwrapped(self) -> VecEnv:
        return self.venv.unwrapped if isinstance(self, VecEnvWrapper) else self

    def getattr_depth_check(self, name: str, already_found: bool) -> str | None:
        """The class whose ``name`` a wrapper above hides, if any (SB3's ambiguity check)."""
        if hasattr(self, name) and already_found:
            return f"{type(self).__module__}.{type(self).__name__}"
        return None

    def _get_indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]


class VecEnvWrapper(VecEnv):
    """Base class of SB3 vector-env wrappers: forwards everything to ``venv`` except what it overrides.

    Subclasses override ``reset`` and ``step_wait`` (and ``step_async`` when they change actions).
    Attributes it does not have are looked up in the wrapped env, as in SB3.

    Args:
        venv: the vector env to wrap.
        observation_space: the wrapper's observation space (default: the wrapped env's).
        action_space: the wrapper's action space (default: the wrapped env's).
    """

    def __init__(
        self,
        venv: VecEnv,
        observation_space: spaces.Space | None = None,
        action_space: spaces.Space | None = None,
    ) -> None:
        self.venv = venv
        super().__init__(
            venv.num_envs,
            observation_space or venv.observation_space,
            action_space or venv.action_space,
        )
        self.class_attributes = dict(inspect.getmembers(self.__class__))

    def step_async(self, actions: np.ndarray) -> None:
        self.venv.step_async(actions)

    @abstractmethod
    def reset(self) -> VecEnvObs: ...

    @abstractmethod
    def step_wait(self) -> VecEnvStepReturn: ...

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        return self.venv.seed(seed)

    def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
        self.venv.set_options(options)

    def close(self) -> None:
        self.venv.close()

    def render(self, mode: str | None = None) -> np.ndarray | None:
        return self.venv.render(mode=mode)

    def get_images(self) -> Sequence[np.ndarray | None]:
        return self.venv.get_images()

    def has_attr(self, attr_name: str) -> bool:
        return self.venv.has_attr(attr_name)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self.venv.get_attr(attr_name, indices)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self.venv.set_attr(attr_name, value, indices)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return self.venv.env_is_wrapped(wrapper_class, indices=indices)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("venv", "class_attributes"):
            raise AttributeError(name)  # not set yet (during __init__ or unpickling)
        hidden = self.getattr_depth_check(name, already_found=False)
        if hidden is not None:
            raise AttributeError(
                f"{type(self).__name__}.{name} is ambiguous: it would hide the attribute of {hidden} below it."
            )
        return self.getattr_recursive(name)

    def _get_all_attributes(self) -> dict[str, Any]:
        attributes = self.__dict__.copy()
        attributes.update(self.class_attributes)
        return attributes

    def getattr_recursive(self, name: str) -> Any:
        """``name`` from the first env down the wrapper chain that has it."""
        if name in self._get_all_attributes():
            return getattr(self, name)
        if hasattr(self.venv, "getattr_recursive"):
            return self.venv.getattr_recursive(name)
        return getattr(self.venv, name)

    def getattr_depth_check(self, name: str, already_found: bool) -> str | None:
        here = name in self._get_all_attributes()
        if here and already_found:
            return f"{type(self).__module__}.{type(self).__name__}"
        return self.venv.getattr_depth_check(name, already_found or here)
