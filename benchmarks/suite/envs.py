"""Benchmark-only environments and wrappers, shared by both libraries.

Cases name a wrapper by its key in ``WRAPPERS`` so that they stay plain data. Importing this module
registers ``BenchMaskedArms-v0``. Only gymnasium and numpy are imported: the SB3 run and the lit-sb3 run
load exactly the same code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["WRAPPERS", "AllActionsAllowed", "MaskedArms", "NoVelocity"]


class MaskedArms(gym.Env):
    """Pick the best allowed arm: an action-masking task that a policy without masks cannot solve.

    10 arms, a random half allowed each step (the observation is the mask); arm ``i`` pays ``i / 9``;
    16-step episodes. A random allowed arm earns about 8 per episode, the best allowed arm about 15. A
    forbidden arm costs -1 and sets ``info["invalid_action"]``, which the episode recorder counts: with
    masking, both libraries must finish with 0.
    """

    n_arms, length = 10, 16

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0.0, 1.0, (self.n_arms,), np.float32)
        self.action_space = spaces.Discrete(self.n_arms)
        self._mask = np.ones(self.n_arms, dtype=bool)
        self._t = 0

    def _draw(self) -> np.ndarray:
        mask = self.np_random.random(self.n_arms) < 0.5
        if not mask.any():
            mask[self.np_random.integers(self.n_arms)] = True
        self._mask = mask
        return mask.astype(np.float32)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._t = 0
        return self._draw(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        action = int(action)
        allowed = bool(self._mask[action])
        reward = action / (self.n_arms - 1) if allowed else -1.0
        self._t += 1
        info = {} if allowed else {"invalid_action": True}
        return self._draw(), reward, False, self._t >= self.length, info

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()


class AllActionsAllowed(gym.Wrapper):
    """An all-true ``action_masks()``: the cost of masking on a standard workload (CartPole)."""

    def action_masks(self) -> np.ndarray:
        assert isinstance(self.action_space, spaces.Discrete)
        return np.ones(int(self.action_space.n), dtype=bool)


class NoVelocity(gym.ObservationWrapper):
    """CartPole without velocities (observation ``[x, theta]``): a policy needs memory to balance it.

    rl-zoo3's ``CartPoleNoVel-v1`` zeroes the velocities instead of removing them: the same information,
    so its tuned RecurrentPPO hyperparameters apply.
    """

    keep = (0, 2)  # [x, x_dot, theta, theta_dot] -> [x, theta]

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        box = env.observation_space
        assert isinstance(box, spaces.Box) and box.shape == (4,), "NoVelocity expects CartPole's observation"
        index = list(self.keep)
        self.observation_space = spaces.Box(box.low[index], box.high[index], dtype=box.dtype)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        return observation[list(self.keep)]


WRAPPERS: dict[str, Callable[[gym.Env], gym.Env]] = {
    "all_actions_allowed": AllActionsAllowed,
    "no_velocity": NoVelocity,
}

if "BenchMaskedArms-v0" not in gym.registry:
    gym.register("BenchMaskedArms-v0", entry_point=MaskedArms)
