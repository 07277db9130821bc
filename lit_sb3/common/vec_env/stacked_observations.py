"""SB3's ``StackedObservations``: the last ``n_stack`` observations of each env, side by side."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from gymnasium import spaces

from lit_sb3_core.errors import InvalidArgumentError
from lit_sb3_core.foundation.spaces import is_image_space, is_image_space_channels_first

__all__ = ["StackedObservations"]


class StackedObservations:
    """Frame stacking as SB3 does it: frames are concatenated on the channel axis (images: the last axis,
    or the first for channel-first images; vectors: the last axis), zeros before an episode's first frame.

    Args:
        num_envs: number of envs.
        n_stack: frames per observation.
        observation_space: the space of one frame (a Box, or a Dict of Boxes).
        channels_order: ``"last"`` or ``"first"`` (a dict of them for Dict spaces); None guesses for images
            and uses the last axis otherwise.
    """

    def __init__(
        self,
        num_envs: int,
        n_stack: int,
        observation_space: spaces.Box | spaces.Dict,
        channels_order: str | dict[str, str | None] | None = None,
    ) -> None:
        self.n_stack = n_stack
        self.observation_space = observation_space
        if isinstance(observation_space, spaces.Dict):
            orders = channels_order if isinstance(channels_order, dict) else {}
            self.sub_stackers = {
                key: StackedObservations(num_envs, n_stack, space, orders.get(key, channels_order))  # type: ignore[arg-type]
                for key, space in observation_space.spaces.items()
            }
            self.stacked_observation_space: spaces.Space = spaces.Dict(
                {key: stacker.stacked_observation_space for key, stacker in self.sub_stackers.items()}
            )
            return
        if not isinstance(observation_space, spaces.Box):
            raise TypeError(
                f"Frame stacking needs Box or Dict observations, not {type(observation_space).__name__}."
            )
        order = channels_order if isinstance(channels_order, str) or channels_order is None else None
        first, self.stack_dimension, _, self.repeat_axis = self.compute_stacking(
            n_stack, observation_space, order
        )
        self.channels_first = first
        low = np.repeat(observation_space.low, n_stack, axis=self.repeat_axis)
        high = np.repeat(observation_space.high, n_stack, axis=self.repeat_axis)
        self.stacked_observation_space = spaces.Box(low, high, dtype=observation_space.dtype)
        self.stacked_obs = np.zeros((num_envs, *low.shape), dtype=observation_space.dtype)

    @staticmethod
    def compute_stacking(
        n_stack: int, observation_space: spaces.Box, channels_order: str | None = None
    ) -> tuple[bool, int, tuple[int, ...], int]:
        """Where frames go: ``(channels_first, stack_dimension, stacked_shape, repeat_axis)``.

        ``stack_dimension`` indexes a batch of stacks (env axis first), ``repeat_axis`` one observation.
        ``channels_order`` None stacks channel-first images on their first axis and everything else on the
        last axis.
        """
        if channels_order is None:
            first = is_image_space(observation_space) and is_image_space_channels_first(observation_space)
        elif channels_order in ("first", "last"):
            first = channels_order == "first"
        else:
            raise InvalidArgumentError(
                f"channels_order must be 'first' or 'last' (or None to detect it), got {channels_order!r}."
            )
        repeat_axis = 0 if first else -1
        shape = list(observation_space.shape)
        shape[repeat_axis] *= n_stack
        return first, 1 if first else -1, tuple(shape), repeat_axis

    def _frame_size(self, observations: np.ndarray) -> int:
        return observations.shape[self.stack_dimension]

    def reset(self, observation: Any) -> Any:
        """Stacks that hold zeros and then ``observation``."""
        if hasattr(self, "sub_stackers"):
            return {key: stacker.reset(observation[key]) for key, stacker in self.sub_stackers.items()}
        self.stacked_obs[...] = 0
        self._put_last(observation)
        return self.stacked_obs.copy()

    def _put_last(self, observations: np.ndarray) -> None:
        size = self._frame_size(observations)
        if self.channels_first:
            self.stacked_obs[:, -size:, ...] = observations
        else:
            self.stacked_obs[..., -size:] = observations

    def update(
        self, observations: Any, dones: np.ndarray, infos: list[dict[str, Any]]
    ) -> tuple[Any, list[dict]]:
        """Shift in the new frames; a finished env's ``terminal_observation`` becomes its final stack."""
        if hasattr(self, "sub_stackers"):
            return self._update_dict(observations, dones, infos)
        size = self._frame_size(observations)
        self.stacked_obs = np.roll(self.stacked_obs, shift=-size, axis=self.stack_dimension)
        for i in np.flatnonzero(dones):
            final = infos[i].get("terminal_observation")
            if final is not None:
                previous = (
                    self.stacked_obs[i, :-size] if self.channels_first else self.stacked_obs[i, ..., :-size]
                )
                infos[i]["terminal_observation"] = np.concatenate((previous, final), axis=self.repeat_axis)
            else:
                warnings.warn("VecFrameStack wraps an env that gives no terminal_observation.", stacklevel=2)
            self.stacked_obs[i] = 0
        self._put_last(observations)
        return self.stacked_obs.copy(), infos

    def _update_dict(self, observations: dict[str, np.ndarray], dones: np.ndarray, infos: list[dict]) -> Any:
        stacked = {}
        for key, stacker in self.sub_stackers.items():
            sub_infos = [
                {"terminal_observation": info["terminal_observation"][key]}
                if "terminal_observation" in info
                else {}
                for info in infos
            ]
            stacked[key], sub_infos = stacker.update(observations[key], dones, sub_infos)
            for info, sub in zip(infos, sub_infos):
                if "terminal_observation" in sub:
                    info.setdefault("_stacked_terminal", {})[key] = sub["terminal_observation"]
        for info in infos:
            if "_stacked_terminal" in info:
                info["terminal_observation"] = info.pop("_stacked_terminal")
        return stacked, infos
