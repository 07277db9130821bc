"""sb3-contrib's identity envs with invalid actions, for action masking (``MaskablePPO``)."""

from __future__ import annotations

from typing import cast

import numpy as np
from gymnasium import spaces

from lit_sb3.common.envs.identity_env import IdentityEnv

__all__ = ["InvalidActionEnvDiscrete", "InvalidActionEnvMultiBinary", "InvalidActionEnvMultiDiscrete"]


class _Masked:
    """``action_masks()``: True for every flattened action choice that is not currently invalid."""

    possible_actions: np.ndarray
    invalid_actions: list[int]

    def action_masks(self) -> list[bool]:
        invalid = set(self.invalid_actions)
        return [int(action) not in invalid for action in self.possible_actions]

    def _draw_invalid(self, allowed: list[int], count: int) -> None:
        candidates = [int(i) for i in self.possible_actions if int(i) not in allowed]
        self.invalid_actions = np.random.choice(candidates, count, replace=False).tolist()


class InvalidActionEnvDiscrete(_Masked, IdentityEnv[int]):
    """A ``Discrete(dim)`` identity env where ``n_invalid_actions`` wrong answers are masked at each step."""

    def __init__(self, dim: int | None = None, ep_length: int = 100, n_invalid_actions: int = 0) -> None:
        dim = 1 if dim is None else dim
        if n_invalid_actions >= dim:
            raise ValueError(f"Too many invalid actions: {n_invalid_actions} must be below dim={dim}.")
        self.n_invalid_actions = n_invalid_actions
        self.possible_actions = np.arange(dim, dtype=int)
        self.invalid_actions = []
        super().__init__(space=spaces.Discrete(dim), ep_length=ep_length)

    def _choose_next_state(self) -> None:
        self.state = self.action_space.sample()
        self._draw_invalid([int(self.state)], self.n_invalid_actions)


class InvalidActionEnvMultiDiscrete(_Masked, IdentityEnv[np.ndarray]):
    """A ``MultiDiscrete(dims)`` identity env with ``n_invalid_actions`` masked choices (over all dims)."""

    def __init__(
        self, dims: list[int] | None = None, ep_length: int = 100, n_invalid_actions: int = 0
    ) -> None:
        dims = [1, 1] if dims is None else list(dims)
        if n_invalid_actions > sum(dims) - len(dims):
            raise ValueError(
                f"Cannot keep a valid action in each dim: use n_invalid_actions <= {sum(dims) - len(dims)}."
            )
        self.n_invalid_actions = n_invalid_actions
        self.possible_actions = np.arange(sum(dims))
        self.invalid_actions = []
        super().__init__(space=spaces.MultiDiscrete(dims), ep_length=ep_length)

    def _choose_next_state(self) -> None:
        self.state = self.action_space.sample()
        nvec = cast(spaces.MultiDiscrete, self.action_space).nvec
        offsets = np.concatenate([[0], np.cumsum(nvec)[:-1]])
        self._draw_invalid([int(v) for v in offsets + self.state], self.n_invalid_actions)


class InvalidActionEnvMultiBinary(_Masked, IdentityEnv[np.ndarray]):
    """A ``MultiBinary(dims)`` identity env with ``n_invalid_actions`` masked choices (two per bit)."""

    def __init__(self, dims: int | None = None, ep_length: int = 100, n_invalid_actions: int = 0) -> None:
        dims = 1 if dims is None else dims
        if n_invalid_actions > dims:
            raise ValueError(f"Cannot keep a valid action in each dim: use n_invalid_actions <= {dims}.")
        self.n_invalid_actions = n_invalid_actions
        self.possible_actions = np.arange(2 * dims)
        self.invalid_actions = []
        super().__init__(space=spaces.MultiBinary(dims), ep_length=ep_length)

    def _choose_next_state(self) -> None:
        self.state = self.action_space.sample()
        chosen = [2 * i + int(bit) for i, bit in enumerate(self.state)]
        self._draw_invalid(chosen, self.n_invalid_actions)
