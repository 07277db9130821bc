"""Tiny environments for every kind of space, so the kit can train an algorithm on each space it declares.

An algorithm declares what it handles with ``supported_observation_spaces`` and
``supported_action_spaces``; :func:`space_cases` turns those declarations into a few small
:class:`SpaceTestEnv` configurations that together cover every declared kind at least once. The envs
check every action they receive, so an algorithm that sends actions of the wrong shape, dtype or range
fails loudly instead of training on garbage.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["ACTION_SPACES", "OBSERVATION_SPACES", "PointGoalEnv", "SpaceCase", "SpaceTestEnv", "space_cases"]

# One small example of each kind of space lit-sb3 supports, keyed by the space class's name.
OBSERVATION_SPACES: dict[str, spaces.Space] = {
    "Box": spaces.Box(-1.0, 1.0, (3,), np.float32),
    "Discrete": spaces.Discrete(4),
    "MultiDiscrete": spaces.MultiDiscrete([3, 2]),
    "MultiBinary": spaces.MultiBinary(3),
    "Dict": spaces.Dict({"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "mode": spaces.Discrete(3)}),
}
ACTION_SPACES: dict[str, spaces.Space] = {
    "Box": spaces.Box(-1.0, 1.0, (2,), np.float32),
    "Discrete": spaces.Discrete(3),
    "MultiDiscrete": spaces.MultiDiscrete([3, 2]),
    "MultiBinary": spaces.MultiBinary(2),
}


class SpaceTestEnv(gym.Env):
    """Random observations from ``observation_space``; rewards the first action component being high.

    Episodes end after ``episode_length`` steps (truncated) or earlier, with probability 1/8 per step
    (terminated), so an algorithm meets both kinds of episode end. Every action is checked against the
    action space. ``action_masks()`` allows every action, so action-masking algorithms run here too.

    Args:
        observation_space: what ``reset`` and ``step`` return (sampled from the env's seeded RNG).
        action_space: what ``step`` accepts.
        episode_length: the step at which an episode is truncated.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 -- gymnasium.Env declares it so

    def __init__(
        self, observation_space: spaces.Space, action_space: spaces.Space, episode_length: int = 16
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.episode_length = episode_length
        self._t = 0

    def _observation(self) -> Any:
        return self.observation_space.sample()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(int(self.np_random.integers(2**31 - 1)))
        self._t = 0
        return self._observation(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if not self.action_space.contains(action):
            raise ValueError(
                f"SpaceTestEnv got the action {action!r} (dtype {getattr(action, 'dtype', type(action))}), which "
                f"is not in its action space {self.action_space}: the algorithm must send actions of the "
                "space's shape, dtype and range (RLAlgorithm.prediction.to_env_actions converts policy outputs)."
            )
        self._t += 1
        first = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        terminated = bool(self.np_random.random() < 1 / 8)
        truncated = self._t >= self.episode_length and not terminated
        return self._observation(), first, terminated, truncated, {}

    def action_masks(self) -> np.ndarray:
        """Every action allowed, in the layout maskable algorithms read (one boolean per choice)."""
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            return np.ones(int(space.n), dtype=bool)
        if isinstance(space, spaces.MultiDiscrete):
            return np.ones(int(np.sum(space.nvec)), dtype=bool)
        if isinstance(space, spaces.MultiBinary):
            return np.ones(2 * int(np.prod(space.shape)), dtype=bool)
        raise TypeError(f"{space} has no action masks: only discrete action spaces are masked.")


@dataclass(frozen=True)
class SpaceCase:
    """One env configuration of :func:`space_cases`: the kinds of space it covers, and a factory."""

    observation_kind: str
    action_kind: str

    @property
    def label(self) -> str:
        return f"{self.observation_kind} observations, {self.action_kind} actions"

    def make_env(self) -> SpaceTestEnv:
        # Copies: an env seeds its spaces, and the examples are shared module-level objects.
        observation_space = copy.deepcopy(OBSERVATION_SPACES[self.observation_kind])
        return SpaceTestEnv(observation_space, copy.deepcopy(ACTION_SPACES[self.action_kind]))

    def __call__(self) -> SpaceTestEnv:  # an env factory, as RLEnvDataModule accepts
        return self.make_env()


def _kinds(declared: tuple[type[spaces.Space], ...], examples: dict[str, spaces.Space]) -> list[str]:
    return [kind for kind, space in examples.items() if isinstance(space, declared)]


def space_cases(
    supported_observation_spaces: tuple[type[spaces.Space], ...],
    supported_action_spaces: tuple[type[spaces.Space], ...],
) -> list[SpaceCase]:
    """The fewest env configurations that cover every declared observation kind and action kind.

    Kinds are paired in order (Box observations with the first action kind, and so on), so an algorithm
    declaring 5 observation kinds and 4 action kinds is checked on 5 envs, not 20.
    """
    observations = _kinds(supported_observation_spaces, OBSERVATION_SPACES)
    actions = _kinds(supported_action_spaces, ACTION_SPACES)
    if not observations or not actions:
        return []
    count = max(len(observations), len(actions))
    return [SpaceCase(observations[i % len(observations)], actions[i % len(actions)]) for i in range(count)]


class PointGoalEnv(gym.Env):
    """A goal env on a plane (HER's Dict layout): a point moves by up to 2 per step towards a goal.

    Start and goal are uniform in [-10, 10]^2; the reward is 0 within ``radius`` of the goal, else -1 (and
    the episode then ends), episodes are cut after 20 steps. Goals far from 0 on a scale of 10 make a
    goal-normalizing ``VecNormalize`` visible: relabelling on normalized goals scores far more successes.
    """

    def __init__(self, radius: float = 1.0) -> None:
        box = spaces.Box(-20.0, 20.0, (2,), np.float32)
        self.observation_space = spaces.Dict({"observation": box, "achieved_goal": box, "desired_goal": box})
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.radius = radius
        self.position = np.zeros(2, np.float32)
        self.goal = np.zeros(2, np.float32)
        self.steps = 0

    def _goal_observation(self) -> dict[str, np.ndarray]:
        position = self.position.copy()
        return {"observation": position, "achieved_goal": position.copy(), "desired_goal": self.goal.copy()}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.position = self.np_random.uniform(-10, 10, 2).astype(np.float32)
        self.goal = self.np_random.uniform(-10, 10, 2).astype(np.float32)
        self.steps = 0
        return self._goal_observation(), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        moved = self.position + 2.0 * np.asarray(action, dtype=np.float32)
        self.position = np.clip(moved, -20.0, 20.0).astype(np.float32)
        self.steps += 1
        reward = float(self.compute_reward(self.position, self.goal, {}))
        return (
            self._goal_observation(),
            reward,
            reward == 0.0,
            self.steps >= 20,
            {"is_success": reward == 0.0},
        )

    def compute_reward(self, achieved_goal: np.ndarray, desired_goal: np.ndarray, info: Any) -> np.ndarray:
        """0 within ``radius`` of the goal, else -1; vectorised over a leading batch axis."""
        distance = np.linalg.norm(np.asarray(achieved_goal) - np.asarray(desired_goal), axis=-1)
        return -(distance > self.radius).astype(np.float32)
