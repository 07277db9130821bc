"""sb3-contrib's ``TimeFeatureWrapper``: the remaining fraction of the episode as one more observation value."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["TimeFeatureWrapper"]


class TimeFeatureWrapper(gym.Wrapper):
    """Append ``1 - t / max_steps`` to 1-D Box observations (or to the ``"observation"`` key of a Dict), so
    a policy for fixed-length episodes knows how much time is left (Pardo et al., 2018).

    Args:
        env: the env; its ``spec.max_episode_steps`` (from ``TimeLimit``) wins over ``max_steps``.
        max_steps: episode length when the env has no time limit.
        test_mode: always append 1.0 (checks that the policy does not depend on the feature).
    """

    def __init__(self, env: gym.Env, max_steps: int = 1000, test_mode: bool = False) -> None:
        space = env.observation_space
        if isinstance(space, spaces.Dict):
            if "observation" not in space.spaces:
                raise ValueError("TimeFeatureWrapper needs an 'observation' key in Dict observation spaces.")
            box = space.spaces["observation"]
        else:
            box = space
        if not isinstance(box, spaces.Box) or len(box.shape) != 1:
            raise ValueError(f"TimeFeatureWrapper supports 1-D Box observations only, not {box}.")
        super().__init__(env)
        self.dtype = box.dtype
        extended = spaces.Box(
            low=np.append(box.low, 0.0).astype(self.dtype),
            high=np.append(box.high, 1.0).astype(self.dtype),
            dtype=self.dtype,
        )
        self.observation_space = (
            spaces.Dict({**space.spaces, "observation": extended})
            if isinstance(space, spaces.Dict)
            else extended
        )
        limit = env.spec.max_episode_steps if env.spec is not None else None
        self._max_steps = limit if limit is not None else max_steps
        self._current_step = 0
        self._test_mode = test_mode

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._current_step = 0
        obs, info = self.env.reset(**kwargs)
        return self._get_obs(obs), info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        self._current_step += 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._get_obs(obs), reward, terminated, truncated, info

    def _get_obs(self, obs: Any) -> Any:
        remaining = 1.0 if self._test_mode else 1.0 - self._current_step / self._max_steps
        feature = np.array(remaining, dtype=self.dtype)
        if isinstance(obs, dict):
            return {**obs, "observation": np.append(obs["observation"], feature)}
        return np.append(obs, feature)
