"""SB3's ``predict`` and the conversions around it: observations in, actions as the env takes them out.

:class:`Prediction` is a helper RLAlgorithm holds (``self.prediction``); ``RLAlgorithm.predict`` delegates
to it, and an algorithm that overrides ``predict`` (RecurrentPPO, MaskablePPO) calls its conversions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.foundation.spaces import (
    describe_space,
    is_image_space,
    is_image_space_channels_first,
    obs_to_tensor,
    to_numpy,
)
from lit_sb3_core.nets.torch_layers import evaluation_mode

if TYPE_CHECKING:
    from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["Prediction"]


class Prediction:
    """``predict`` for one algorithm, and the observation/action conversions around its policy."""

    def __init__(self, algorithm: AlgorithmPart) -> None:
        self.algorithm = algorithm

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch, as numpy; returns ``(actions, state)`` like SB3."""
        algorithm = self.algorithm
        policy: Any = algorithm.require_policy()  # an SDK policy: predict_actions(obs, deterministic)
        obs, single = self.batch_observation(observation)
        with evaluation_mode(policy), torch.no_grad():
            obs_tensor = algorithm.normalizers.obs(obs_to_tensor(obs, algorithm.device))
            actions = policy.predict_actions(obs_tensor, deterministic)
        return self.unbatch_actions(actions, single), state

    def batch_observation(self, observation: Any) -> tuple[Any, bool]:
        """Add a batch axis to a single observation; reject shapes that fit neither form."""
        space = self.algorithm.observation_space
        assert space is not None
        if isinstance(observation, tuple) and len(observation) == 2 and isinstance(observation[1], dict):
            raise ValueError(
                "predict() got a tuple (observation, info): this is mixing Gym API and SB3 VecEnv API. "
                "gymnasium's env.reset() returns (obs, info): pass obs, as in obs, info = env.reset(); a VecEnv's "
                "reset() returns the observations alone."
            )
        if isinstance(space, spaces.Dict):
            if not isinstance(observation, dict):
                raise ValueError(f"Expected a dict observation with keys {list(space.spaces)}.")
            observation = {
                k: _channel_last(np.asarray(v), space.spaces[k]) if k in space.spaces else v
                for k, v in observation.items()
            }
            first = next(iter(space.spaces))
            single = np.asarray(observation[first]).shape == space.spaces[first].shape
            batched = {k: np.asarray(v)[None] if single else np.asarray(v) for k, v in observation.items()}
            return batched, single
        obs = _channel_last(np.asarray(observation), space)
        expected = space.shape
        if obs.shape == expected:
            return obs[None], True
        if obs.shape[1:] == expected:
            return obs, False
        raise ValueError(
            f"Unexpected observation shape {obs.shape} for {describe_space(space)}: expected {expected} for "
            f"one observation or (n_envs, {', '.join(map(str, expected))}) for a batch."
            if expected
            else f"Unexpected observation shape {obs.shape} for {describe_space(space)}: expected () or (n_envs,)."
        )

    def unbatch_actions(self, actions: torch.Tensor, single: bool) -> np.ndarray:
        array = self.to_env_actions(to_numpy(actions))
        return array[0, ...] if single else array  # an array, 0-d for one Discrete action, as SB3's

    def to_env_actions(self, array: np.ndarray) -> np.ndarray:
        """Policy outputs (a batch) as the env takes them: shaped, bounded, offset by the space's start."""
        algorithm = self.algorithm
        space = algorithm.action_space
        if isinstance(space, spaces.Discrete):
            array = array.reshape(-1).astype(np.int64)
            return array + int(space.start) if space.start else array
        if isinstance(space, spaces.Box):
            array = array.reshape((-1, *space.shape))
            policy: Any = algorithm.policy
            if getattr(policy, "squash_output", False):  # gSDE's tanh-squashed actions are in [-1, 1]
                array = policy.unscale_action(array)
            array = np.clip(array, space.low, space.high)
        elif isinstance(space, spaces.MultiDiscrete):
            array = array.reshape((-1, *space.shape)).astype(space.dtype) + space.start
        elif isinstance(space, spaces.MultiBinary):
            array = array.reshape((-1, *space.shape)).astype(space.dtype)
        return array


def _channel_last(obs: np.ndarray, space: spaces.Space) -> np.ndarray:
    """A channel-first image (what ``VecTransposeImage``, and so SB3's ``get_env()``, returns) in the
    layout of the model's channel-last image space; anything else unchanged."""
    shape = getattr(space, "shape", None)
    if not shape or len(shape) != 3 or obs.ndim < 3 or obs.shape == shape or obs.shape[1:] == shape:
        return obs
    if not isinstance(space, spaces.Box) or not is_image_space(space) or is_image_space_channels_first(space):
        return obs
    moved = np.moveaxis(obs, -3, -1)
    return moved if moved.shape == shape or moved.shape[1:] == shape else obs
