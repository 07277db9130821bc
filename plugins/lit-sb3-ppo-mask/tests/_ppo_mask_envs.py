"""Small environments with invalid actions for MaskablePPO's tests, registered as gymnasium ids.

``MaskedChoicesEnv``: every step a random subset of the choices is allowed (at least one per sub-action)
and the observation is that mask. Choice ``c`` of a sub-action with ``n`` choices pays ``c / (n - 1)``, so
the best policy picks the highest allowed choice. Taking a forbidden action costs -1 and is counted in the
class attribute ``invalid_actions``, which the tests assert stays 0.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lit_sb3_ppo_mask import ActionMasker

ARMS = "LitSb3MaskTest/Arms-v0"  # Discrete(6)
MULTI_ARMS = "LitSb3MaskTest/MultiArms-v0"  # MultiDiscrete([3, 4])
BITS = "LitSb3MaskTest/Bits-v0"  # MultiBinary(3)
CARTPOLE_ALL_VALID = "LitSb3MaskTest/CartPoleAllValid-v0"  # CartPole-v1 through ActionMasker, nothing masked


class MaskedChoicesEnv(gym.Env):
    """Pick the best allowed choice; ``kind`` is ``"discrete"``, ``"multidiscrete"`` or ``"multibinary"``."""

    invalid_actions = 0
    steps = 0

    def __init__(self, kind: str = "discrete", episode_length: int = 8) -> None:
        self.kind = kind
        self.episode_length = episode_length
        if kind == "discrete":
            self.action_space: spaces.Space = spaces.Discrete(6)
            self.nvec = [6]
        elif kind == "multidiscrete":
            self.action_space = spaces.MultiDiscrete([3, 4])
            self.nvec = [3, 4]
        elif kind == "multibinary":
            self.action_space = spaces.MultiBinary(3)
            self.nvec = [2, 2, 2]
        else:
            raise ValueError(kind)
        self.observation_space = spaces.Box(0.0, 1.0, (sum(self.nvec),), np.float32)
        self._mask = np.ones(sum(self.nvec), dtype=bool)
        self._step_count = 0

    def _draw_mask(self) -> None:
        blocks = []
        for n in self.nvec:
            block = self.np_random.random(n) < 0.5
            if not block.any():
                block[self.np_random.integers(n)] = True
            blocks.append(block)
        self._mask = np.concatenate(blocks)

    def _obs(self) -> np.ndarray:
        return self._mask.astype(np.float32)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._step_count = 0
        self._draw_mask()
        return self._obs(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        choices = np.atleast_1d(np.asarray(action)).astype(int).reshape(-1)
        offsets = np.cumsum([0, *self.nvec[:-1]])
        allowed = self._mask[offsets + choices]
        type(self).steps += 1
        if not allowed.all():
            type(self).invalid_actions += 1
            reward = -1.0
        else:
            reward = float(np.mean([c / (n - 1) for c, n in zip(choices, self.nvec)]))
        self._step_count += 1
        self._draw_mask()
        return self._obs(), reward, False, self._step_count >= self.episode_length, {}

    def action_masks(self) -> np.ndarray:
        return self._mask.copy()


def _cartpole_all_valid(**kwargs: Any) -> gym.Env:
    return ActionMasker(gym.make("CartPole-v1", **kwargs), lambda env: np.ones(2, dtype=bool))


for _id, _kwargs in (
    (ARMS, {"kind": "discrete"}),
    (MULTI_ARMS, {"kind": "multidiscrete"}),
    (BITS, {"kind": "multibinary"}),
):
    if _id not in gym.registry:
        gym.register(_id, entry_point=MaskedChoicesEnv, kwargs=_kwargs)
if CARTPOLE_ALL_VALID not in gym.registry:
    gym.register(CARTPOLE_ALL_VALID, entry_point=_cartpole_all_valid)
