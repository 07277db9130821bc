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

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import check_positive_int

__all__ = ["BitFlippingEnv"]


class BitFlippingEnv(gym.Env[dict[str, Any], Any]):
    """Flip bits until the state matches the goal (the HER paper's bit-flipping task).

    Args:
        n_bits: length of the bit vector (the paper solves up to 50 with HER).
        continuous: Box actions in ``[-1, 1] ** n_bits`` that flip every bit whose component is positive,
            for continuous-action algorithms (SAC, TD3); otherwise ``Discrete(n_bits)``: the bit to flip.
        max_steps: steps before the episode is truncated; ``n_bits`` by default, enough to reach any goal.
        discrete_obs_space: observe each bit vector as one integer (``Discrete(2 ** n_bits)``, bit ``i``
            worth ``2 ** i``) instead of ``MultiBinary(n_bits)``.
        image_obs_space: observe each bit vector as a 36x36 greyscale ``uint8`` image whose first
            ``n_bits`` pixels are the bits (0 or 255) and the rest black, to test image inputs.
        channel_first: image shape ``(1, 36, 36)``; False: ``(36, 36, 1)``.
        render_mode: ``"human"`` prints the bits, ``"rgb_array"`` returns them; None renders nothing.
        random_goal: draw a new goal every episode, never equal to the start (the paper's task, the
            default); False: the goal is always all ones and a start may already equal it
            (Stable-Baselines3's ``BitFlippingEnv`` draw for draw, an easier task).

    Observations are Dicts with the keys ``observation``, ``achieved_goal`` (both the current bits) and
    ``desired_goal``; ``info["is_success"]`` says whether the goal was reached.
    """

    metadata: dict[str, Any] = {"render_modes": ["human", "rgb_array"]}  # noqa: RUF012 -- gymnasium.Env declares it so
    image_side = 36

    def __init__(
        self,
        n_bits: int = 10,
        continuous: bool = False,
        max_steps: int | None = None,
        discrete_obs_space: bool = False,
        image_obs_space: bool = False,
        channel_first: bool = True,
        render_mode: str | None = None,
        random_goal: bool = True,
    ) -> None:
        check_positive_int("n_bits", n_bits)
        if max_steps is None:
            max_steps = int(n_bits)
        check_positive_int("max_steps", max_steps)
        if discrete_obs_space and image_obs_space:
            raise ConfigurationError(
                "BitFlippingEnv observes the bits as an integer (discrete_obs_space) or as an image "
                "(image_obs_space), not both: set one of them to False."
            )
        if image_obs_space and n_bits > self.image_side**2:
            raise ConfigurationError(
                f"An image observation holds at most {self.image_side**2} bits, got n_bits={n_bits}."
            )
        self.n_bits = int(n_bits)
        self.continuous = bool(continuous)
        self.max_steps = int(max_steps)
        self.discrete_obs_space = bool(discrete_obs_space)
        self.image_obs_space = bool(image_obs_space)
        self.image_shape = (
            (1, self.image_side, self.image_side) if channel_first else (self.image_side, self.image_side, 1)
        )
        self.render_mode = render_mode
        self.random_goal = bool(random_goal)
        goal_space: spaces.Space
        if self.discrete_obs_space:
            goal_space = spaces.Discrete(2**self.n_bits)
        elif self.image_obs_space:
            goal_space = spaces.Box(0, 255, shape=self.image_shape, dtype=np.uint8)
        else:
            goal_space = spaces.MultiBinary(self.n_bits)
        self.observation_space = spaces.Dict(
            {"observation": goal_space, "achieved_goal": goal_space, "desired_goal": goal_space}
        )
        if self.continuous:
            self.action_space: spaces.Space = spaces.Box(-1.0, 1.0, shape=(self.n_bits,), dtype=np.float32)
        else:
            self.action_space = spaces.Discrete(self.n_bits)
        self.state = np.zeros(self.n_bits, dtype=np.int8)
        self.goal = np.ones(self.n_bits, dtype=np.int8)
        self.current_step = 0

    # encodings of a bit vector --------------------------------------------------------------------------
    def encode(self, bits: np.ndarray) -> Any:
        """One bit vector as this env observes it (bits, an integer or an image)."""
        if self.discrete_obs_space:
            return int(np.dot(bits.astype(np.int64), 1 << np.arange(self.n_bits, dtype=np.int64)))
        if self.image_obs_space:
            image = np.zeros(int(np.prod(self.image_shape)), dtype=np.uint8)
            image[: self.n_bits] = bits.astype(np.uint8) * 255
            return image.reshape(self.image_shape)
        return bits.copy()

    def decode(self, goals: Any) -> np.ndarray:
        """Observed goals (one, or a batch along the leading axes) back to bit vectors ``(..., n_bits)``."""
        goals = np.asarray(goals)
        if self.discrete_obs_space:
            return (goals.astype(np.int64)[..., None] >> np.arange(self.n_bits)) & 1
        if self.image_obs_space:
            flat = goals.reshape(*goals.shape[: goals.ndim - 3], -1)
            return (flat[..., : self.n_bits] > 0).astype(np.int8)
        return goals

    def _obs(self) -> dict[str, Any]:
        return {
            "observation": self.encode(self.state),
            "achieved_goal": self.encode(self.state),
            "desired_goal": self.encode(self.goal),
        }

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """A random start state, and a random goal different from it (or the fixed all-ones goal).

        With the fixed goal the start is drawn once, as Stable-Baselines3's env draws it, even when it
        already equals the goal: redrawing it would shift the random stream, so a seeded run would part
        from SB3's at the first such start (one reset in ``2 ** n_bits``).
        """
        super().reset(seed=seed)
        self.current_step = 0
        self.state = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
        if self.random_goal:
            self.goal = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
            while np.array_equal(self.state, self.goal):  # an episode that starts solved teaches nothing
                self.goal = self.np_random.integers(0, 2, size=self.n_bits, dtype=np.int8)
        return self._obs(), {}

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.continuous:
            flip = np.asarray(action, dtype=np.float32).reshape(self.n_bits) > 0
        else:
            flip = np.zeros(self.n_bits, dtype=bool)
            flip[int(action)] = True
        self.state = np.where(flip, 1 - self.state, self.state).astype(np.int8)
        self.current_step += 1
        obs = self._obs()
        reward = -float(not np.array_equal(self.state, self.goal))  # -0.0 on success, as compute_reward gives
        terminated = reward == 0.0
        truncated = not terminated and self.current_step >= self.max_steps
        return obs, reward, terminated, truncated, {"is_success": terminated}

    def compute_reward(self, achieved_goal: Any, desired_goal: Any, info: Any) -> np.ndarray:
        """0 where the goals match, -1 elsewhere; for one pair or a batch (leading axes are kept)."""
        achieved = self.decode(achieved_goal)
        desired = self.decode(desired_goal)
        return -np.any(achieved != desired, axis=-1).astype(np.float32)

    def render(self) -> np.ndarray | None:
        if self.render_mode == "rgb_array":
            return self.state.copy()
        if self.render_mode == "human":
            print(self.state)
        return None


gym.register("BitFlipping-v0", entry_point=BitFlippingEnv)  # type: ignore[arg-type]  # a class is an EnvCreator
