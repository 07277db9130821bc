"""SB3's identity envs: the reward is 1 when the action repeats the observation (a check that an algorithm
learns at all), and ``FakeImageEnv`` (random Atari-sized frames)."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = [
    "FakeImageEnv",
    "IdentityEnv",
    "IdentityEnvBox",
    "IdentityEnvMultiBinary",
    "IdentityEnvMultiDiscrete",
]

T = TypeVar("T", int, np.ndarray)


class IdentityEnv(gym.Env, Generic[T]):
    """Observe a random element of ``space``; reward 1 for answering with that same element.

    Args:
        dim: size of a ``Discrete(dim)`` space (used when ``space`` is None; default 1).
        space: the observation and action space.
        ep_length: steps per episode (then it is truncated).
    """

    def __init__(
        self, dim: int | None = None, space: spaces.Space | None = None, ep_length: int = 100
    ) -> None:
        if space is None:
            space = spaces.Discrete(1 if dim is None else dim)
        elif dim is not None:
            raise ValueError("Pass dim or space to IdentityEnv, not both.")
        self.action_space = self.observation_space = space
        self.ep_length = ep_length
        self.current_step = 0
        self.num_resets = -1  # 0 once __init__ has reset
        self.reset()

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[T, dict]:
        if seed is not None:
            super().reset(seed=seed)
            self.action_space.seed(seed)
        self.current_step = 0
        self.num_resets += 1
        self._choose_next_state()
        return self.state, {}

    def step(self, action: T) -> tuple[T, float, bool, bool, dict[str, Any]]:
        reward = self._get_reward(action)
        self._choose_next_state()
        self.current_step += 1
        return self.state, reward, False, self.current_step >= self.ep_length, {}

    def _choose_next_state(self) -> None:
        self.state = self.action_space.sample()

    def _get_reward(self, action: T) -> float:
        return 1.0 if np.all(self.state == action) else 0.0

    def render(self, mode: str = "human") -> None:
        pass


class IdentityEnvBox(IdentityEnv[np.ndarray]):
    """A 1-D Box identity env: reward 1 when the action is within ``eps`` of the observation."""

    def __init__(self, low: float = -1.0, high: float = 1.0, eps: float = 0.05, ep_length: int = 100) -> None:
        super().__init__(
            ep_length=ep_length, space=spaces.Box(low=low, high=high, shape=(1,), dtype=np.float32)
        )
        self.eps = eps

    def _get_reward(self, action: np.ndarray) -> float:
        state, answer = float(np.ravel(self.state)[0]), float(np.ravel(action)[0])
        return 1.0 if state - self.eps <= answer <= state + self.eps else 0.0


class IdentityEnvMultiDiscrete(IdentityEnv[np.ndarray]):
    """An identity env over ``MultiDiscrete([dim, dim])``."""

    def __init__(self, dim: int = 1, ep_length: int = 100) -> None:
        super().__init__(ep_length=ep_length, space=spaces.MultiDiscrete([dim, dim]))


class IdentityEnvMultiBinary(IdentityEnv[np.ndarray]):
    """An identity env over ``MultiBinary(dim)``."""

    def __init__(self, dim: int = 1, ep_length: int = 100) -> None:
        super().__init__(ep_length=ep_length, space=spaces.MultiBinary(dim))


class FakeImageEnv(gym.Env):
    """Random uint8 frames the size of preprocessed Atari screens, zero reward, 10 steps per episode.

    Args:
        action_dim: number of discrete actions.
        screen_height: frame height.
        screen_width: frame width.
        n_channels: frame channels.
        discrete: Discrete actions (else a 5-D Box in [-1, 1]).
        channel_first: CxHxW frames instead of HxWxC.
    """

    def __init__(
        self,
        action_dim: int = 6,
        screen_height: int = 84,
        screen_width: int = 84,
        n_channels: int = 1,
        discrete: bool = True,
        channel_first: bool = False,
    ) -> None:
        shape = (
            (n_channels, screen_height, screen_width)
            if channel_first
            else (screen_height, screen_width, n_channels)
        )
        self.observation_shape = shape
        self.observation_space = spaces.Box(low=0, high=255, shape=shape, dtype=np.uint8)
        self.action_space = (
            spaces.Discrete(action_dim)
            if discrete
            else spaces.Box(low=-1, high=1, shape=(5,), dtype=np.float32)
        )
        self.ep_length = 10
        self.current_step = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        if seed is not None:
            super().reset(seed=seed)
            self.observation_space.seed(seed)
        self.current_step = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.current_step += 1
        return self.observation_space.sample(), 0.0, False, self.current_step >= self.ep_length, {}

    def render(self, mode: str = "human") -> None:
        pass
