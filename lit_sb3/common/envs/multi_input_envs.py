"""SB3's ``SimpleMultiObsEnv``: a grid world whose cells are seen as a vector and an image (Dict observations)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["SimpleMultiObsEnv"]


class SimpleMultiObsEnv(gym.Env):
    """A 4x4 grid (cells 0..15, 5/6/9/10 blocked): walk from the start to cell 15.

    Each column is seen as a random 5-vector and each row as a random 64x64 image, both drawn when the env
    is created. Actions: left, down, right, up. Reward -0.1 per step and 1 at the goal; an episode is
    truncated after 100 steps.

    Args:
        num_col: grid columns.
        num_row: grid rows.
        random_start: start in a random cell (else in cell 0).
        discrete_actions: ``Discrete(4)`` actions (else a Box of 4 scores, argmax taken).
        channel_last: images as 64x64x1 (else 1x64x64).
    """

    _ACTION_NAMES = ("left", "down", "right", "up")

    def __init__(
        self,
        num_col: int = 4,
        num_row: int = 4,
        random_start: bool = True,
        discrete_actions: bool = True,
        channel_last: bool = True,
    ) -> None:
        super().__init__()
        self.vector_size = 5
        self.img_size = [64, 64, 1] if channel_last else [1, 64, 64]
        self.random_start = random_start
        self.discrete_actions = discrete_actions
        self.action_space = spaces.Discrete(4) if discrete_actions else spaces.Box(0, 1, (4,))
        self.observation_space = spaces.Dict(
            {
                "vec": spaces.Box(0, 1, (self.vector_size,), dtype=np.float64),
                "img": spaces.Box(0, 255, self.img_size, dtype=np.uint8),
            }
        )
        self.count = 0
        self.max_count = 100
        self.log = ""
        self.state = 0
        self.num_col = num_col
        # cells from which each move stays inside the grid and off the blocked cells
        self.left_possible = [1, 2, 3, 13, 14, 15]
        self.down_possible = [0, 4, 8, 3, 7, 11]
        self.right_possible = [0, 1, 2, 12, 13, 14]
        self.up_possible = [4, 8, 12, 7, 11, 15]
        columns = np.random.random((num_col, self.vector_size))
        rows = np.random.randint(0, 255, (num_row, 64, 64), dtype=np.uint8)
        self.state_mapping: list[dict[str, np.ndarray]] = [
            {"vec": columns[i], "img": rows[j].reshape(self.img_size)}
            for i in range(num_col)
            for j in range(num_row)
        ]
        self.max_state = len(self.state_mapping) - 1

    def get_state_mapping(self) -> dict[str, np.ndarray]:
        return self.state_mapping[self.state]

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if not self.discrete_actions:
            action = int(np.argmax(action))
        action = int(action)
        self.count += 1
        previous = self.state
        if self.state in self.left_possible and action == 0:
            self.state -= 1
        elif self.state in self.down_possible and action == 1:
            self.state += self.num_col
        elif self.state in self.right_possible and action == 2:
            self.state += 1
        elif self.state in self.up_possible and action == 3:
            self.state -= self.num_col
        at_goal = self.state == self.max_state
        self.log = f"Went {self._ACTION_NAMES[action]} in state {previous}, got to state {self.state}"
        reward = 1.0 if at_goal else -0.1
        return self.get_state_mapping(), reward, at_goal, self.count > self.max_count, {"got_to_end": at_goal}

    def render(self, mode: str = "human") -> None:
        print(self.log)

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict]:
        if seed is not None:
            super().reset(seed=seed)
        self.count = 0
        self.state = int(np.random.randint(0, self.max_state)) if self.random_start else 0
        return self.state_mapping[self.state], {}
