"""SB3's ``VecTransposeImage``: channel-last images become channel-first (HxWxC to CxHxW); ``get_env()``
of a model trained on channel-last images returns the training env wrapped in it, as SB3's does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from gymnasium import spaces

from lit_sb3_core.foundation.spaces import channels_first_space, is_image_space, is_image_space_channels_first
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

if TYPE_CHECKING:
    from gymnasium.vector import VectorEnv

__all__ = ["VecTransposeImage", "needs_transpose", "sb3_training_env"]

_TRANSPOSED_ATTRIBUTE = "_lit_sb3_sb3_transposed"


class VecTransposeImage(VecEnvWrapper):
    """Move the channel axis of image observations first, as PyTorch convolutions read them.

    lit-sb3's policies already do this themselves (they take either layout), so the wrapper is only needed
    by code that wants CxHxW arrays. Dict observations are transposed key by key.

    Args:
        venv: the vector env to wrap.
        skip: leave the observations as they are (SB3 uses it for envs that are already channel-first).
    """

    def __init__(self, venv: VecEnv, skip: bool = False) -> None:
        self.skip = skip
        space = venv.observation_space
        if isinstance(space, spaces.Dict):
            self.image_space_keys = [key for key, sub in space.spaces.items() if is_image_space(sub)]
            if not self.image_space_keys:
                raise ValueError("VecTransposeImage: the Dict observation space has no image key.")
        elif not is_image_space(space):
            raise ValueError(f"VecTransposeImage needs image observations (uint8 HxWxC Box), got {space}.")
        super().__init__(venv, observation_space=space if skip else self.transpose_space(space))  # type: ignore[arg-type]

    @staticmethod
    def transpose_space(observation_space: spaces.Box | spaces.Dict, key: str = "") -> spaces.Space:
        """The channel-first version of ``observation_space``."""
        if isinstance(observation_space, spaces.Box) and is_image_space_channels_first(observation_space):
            raise ValueError(f"The observation space {key or ''} is already channel-first: use skip=True.")
        return channels_first_space(observation_space)

    @staticmethod
    def transpose_image(image: np.ndarray) -> np.ndarray:
        """HxWxC (or NxHxWxC) to CxHxW (NxCxHxW)."""
        return np.transpose(image, (2, 0, 1)) if image.ndim == 3 else np.transpose(image, (0, 3, 1, 2))

    def transpose_observations(self, observations: Any) -> Any:
        if self.skip:
            return observations
        if isinstance(observations, dict):
            observations = dict(observations)
            for key in self.image_space_keys:
                observations[key] = self.transpose_image(observations[key])
            return observations
        return self.transpose_image(observations)

    def reset(self) -> VecEnvObs:
        return self.transpose_observations(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        for i in np.flatnonzero(dones):
            if "terminal_observation" in infos[i]:
                infos[i]["terminal_observation"] = self.transpose_observations(
                    infos[i]["terminal_observation"]
                )
        return self.transpose_observations(observations), rewards, dones, infos


def _channel_last_image(space: spaces.Space) -> bool:
    return is_image_space(space) and not is_image_space_channels_first(space)  # type: ignore[arg-type]


def needs_transpose(space: spaces.Space) -> bool:
    """SB3's rule for wrapping an env in ``VecTransposeImage``: a channel-last image observation, or a
    Dict with one."""
    if isinstance(space, spaces.Dict):
        return any(_channel_last_image(sub) for sub in space.spaces.values())
    return _channel_last_image(space)


def sb3_training_env(vector_env: VectorEnv) -> VecEnv:
    """The training env as SB3 code sees it (``get_env()``): its SB3 view, in ``VecTransposeImage`` when
    the observations are channel-last images and nothing in the chain transposes them yet, as SB3 wraps
    such envs. Made once per vector env, so every call returns the same object."""
    from lit_sb3_core.sb3.vec_env_views import as_sb3_vec_env, find_vec_wrapper

    view = as_sb3_vec_env(vector_env)
    if not needs_transpose(view.observation_space) or find_vec_wrapper(view, VecTransposeImage) is not None:
        return view
    wrapped = vars(vector_env).get(_TRANSPOSED_ATTRIBUTE)
    if wrapped is None or wrapped.venv is not view:
        wrapped = VecTransposeImage(view)
        setattr(vector_env, _TRANSPOSED_ATTRIBUTE, wrapped)
    return wrapped
