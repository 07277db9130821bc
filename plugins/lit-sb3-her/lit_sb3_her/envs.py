"""The bit-flipping environment of the HER paper: a goal-conditioned task that is hopeless without HER.

Andrychowicz et al., "Hindsight Experience Replay", NeurIPS 2017, https://arxiv.org/abs/1707.01495 (section
3.1): the state is a vector of ``n_bits`` bits, each action flips one bit, and the episode succeeds when the
state equals the goal. The start state and the goal are drawn at random each episode, and the reward is
sparse: 0 on reaching the goal, -1 on every other step. Random exploration almost never reaches a goal once
``n_bits`` passes 10 or so, so an agent that learns only from real rewards sees nothing but -1; replaying
each episode with the states it *did* reach as goals gives it a signal.

Observations follow the goal-environment convention that ``HerReplayBuffer`` relies on: a Dict with
``observation`` (the bits), ``achieved_goal`` (the bits again: here the goal is a state) and
``desired_goal`` (the target bits). ``compute_reward`` is vectorised over a batch of goals.

Importing this module registers the id ``BitFlipping-v0``, so configs can name it as
``"lit_sb3_her.envs:BitFlipping-v0"`` (gymnasium imports the module first).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lit_sb3_core.sdk import check_positive_int

__all__ = ["BitFlippingEnv"]


class BitFlippingEnv(gym.Env[dict[str, np.ndarray], Any]):
    """Flip bits until the state matches a random goal (the HER paper's bit-flipping task).

    Args:
        n_bits: length of the bit vector (the paper solves up to 50 with HER).
        continuous: Box actions in ``[-1, 1] ** n_bits`` that flip every bit whose component is positive,
            for continuous-action algorithms (SAC, TD3); otherwise ``Discrete(n_bits)``: the bit to flip.
        max_steps: steps before the episode is truncated; ``n_bits`` by default, enough to reach any goal.

    Observations are ``MultiBinary(n_bits)`` under the keys ``observation``, ``achieved_goal`` and
    ``desired_goal``; ``info["is_success"]`` says whether the goal was reached.
    """

    metadata: dict[str, Any] = {"render_modes": []}  # noqa: RUF012 -- gymnasium.Env declares it so

    def __init__(self, n_bits: int = 10, continuous: bool = False, max_steps: int | None = None) -> None:
        check_positive_int("n_bits", n_bits)
        if max_steps is None:
            max_steps = int(n_bits)
        check_positive_int("max_steps", max_steps)
        self.n_bits = int(n_bits)
        self.continuous = bool(continuous)
        self.max_steps = int(max_steps)
        bits = spaces.MultiBinary(self.n_bits)
        self.observation_space = spaces.Dict(  # type: ignore[assignment]  # gymnasium's generic Space
            {"observation": bits, "achieved_goal": bits, "desired_goal": bits}
        )
        if self.continuous:
            self.action_space: spaces.Space = spaces.Box(-1.0, 1.0, shape=(self.n_bits,), dtype=np.float32)
        else:
            self.action_space = spaces.Discrete(self.n_bits)
        self.state = np.zeros(self.n_bits, dtype=np.int8)
        self.goal = np.ones(self.n_bits, dtype=np.int8)
        self.current_step = 0

    def _obs(self) -> dict[str, np.ndarray]:
        return {
            "observation": self.state.copy(),
            "achieved_goal": self.state.copy(),
            "desired_goal": self.goal.copy(),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """A random start state and a different random goal."""
        super().reset(seed=seed)
        self.current_step = 0
        self.state = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
        self.goal = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
        while np.array_equal(self.state, self.goal):  # an episode that starts solved teaches nothing
            self.goal = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
        return self._obs(), {}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        if self.continuous:
            flip = np.asarray(action, dtype=np.float32).reshape(self.n_bits) > 0
        else:
            flip = np.zeros(self.n_bits, dtype=bool)
            flip[int(action)] = True
        self.state = np.where(flip, 1 - self.state, self.state).astype(np.int8)
        self.current_step += 1
        obs = self._obs()
        reward = float(self.compute_reward(obs["achieved_goal"], obs["desired_goal"], {}))
        terminated = reward == 0.0
        truncated = not terminated and self.current_step >= self.max_steps
        return obs, reward, terminated, truncated, {"is_success": terminated}

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> np.ndarray:
        """0 where the goals match, -1 elsewhere; for one pair or a batch (leading axes are kept)."""
        achieved = np.asarray(achieved_goal)
        desired = np.asarray(desired_goal)
        return -np.any(achieved != desired, axis=-1).astype(np.float32)


gym.register("BitFlipping-v0", entry_point=BitFlippingEnv)  # type: ignore[arg-type]  # a class is an EnvCreator
