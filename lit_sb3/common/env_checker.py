"""SB3's ``check_env``: check a custom env before training on it.

The API check is the one lit-sb3 runs on the first ``reset`` and ``step`` of every env it trains or
evaluates on (``lit_sb3_core.envs.guards.CheckedEnv``: return types, observations inside the observation
space, the old Gym API), so a problem found here reads exactly as it would at the start of training.
With ``warn=True`` it also warns, as SB3 does, about choices that work but train badly.
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lit_sb3_core.envs.guards import CheckedEnv
from lit_sb3_core.errors import EnvCheckError, EnvError

__all__ = ["check_env"]

_RL_TIPS = "(see SB3's RL tips: https://stable-baselines3.readthedocs.io/en/master/guide/rl_tips.html)"


def check_env(env: gym.Env, warn: bool = True, skip_render_check: bool = True) -> None:
    """Check that ``env`` follows the Gymnasium API and suits lit-sb3's (and SB3's) algorithms.

    Args:
        env: the env to check (it is reset and stepped).
        warn: also warn about spaces and values that train badly.
        skip_render_check: do not call ``render()``.

    Raises:
        TypeError: ``env`` is not a ``gymnasium.Env`` or its spaces are not gymnasium spaces.
        EnvError: ``reset``/``step`` do not follow the API, or return observations outside the space.
        ValueError: a continuous action space without finite bounds.
    """
    if not isinstance(env, gym.Env):
        raise TypeError(
            f"check_env needs a gymnasium.Env, got {type(env).__name__}: subclass gymnasium.Env "
            "(https://gymnasium.farama.org/api/env/)."
        )
    for name in ("observation_space", "action_space"):
        if not isinstance(getattr(env, name, None), spaces.Space):
            raise TypeError(
                f"The env's {name} must be a gymnasium.spaces.Space, got {getattr(env, name, None)!r}."
            )
    action_space = env.action_space
    if isinstance(action_space, spaces.Box) and not np.all(
        np.isfinite([action_space.low, action_space.high])
    ):
        raise ValueError(f"The continuous action space {action_space} needs finite lower and upper bounds.")
    if warn:
        _warn_about_spaces(env.observation_space, action_space)
    try:
        observations = _run_checked(env, action_space)
    except EnvError as error:
        if isinstance(error, AssertionError):
            raise
        raise EnvCheckError(str(error)) from error
    observation = observations[-1]
    if warn:
        _warn_about_values(observations)
    if isinstance(env.observation_space, spaces.Dict) and {"achieved_goal", "desired_goal"} <= set(
        env.observation_space.spaces
    ):
        _check_compute_reward(env, observation)
    if not skip_render_check and env.render_mode is not None:
        env.render()


def _run_checked(env: gym.Env, action_space: spaces.Space) -> list[Any]:
    """Reset and 10 random steps through lit-sb3's env checks; the observations seen (the last one current)."""
    checked = CheckedEnv(env, 0, "checked")
    observation, _ = checked.reset(seed=0)
    observations = [observation]
    for _ in range(10):
        observation, reward, terminated, truncated, _ = checked.step(action_space.sample())
        observations.append(observation)
        if not np.isfinite(float(reward)):
            raise EnvError(f"The env returned a non-finite reward {reward!r}.")
        if terminated or truncated:
            observation, _ = checked.reset()
            observations.append(observation)
    return observations


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def _warn_about_spaces(observation_space: spaces.Space, action_space: spaces.Space) -> None:
    if isinstance(observation_space, spaces.Tuple):
        _warn("Tuple observation spaces are not supported: flatten them or use a Dict space.")
    if isinstance(observation_space, spaces.Dict):
        nested = [
            key
            for key, sub in observation_space.spaces.items()
            if isinstance(sub, (spaces.Dict, spaces.Tuple))
        ]
        if nested:
            _warn(f"Nested observation spaces are not supported (keys {nested}): flatten them.")
    if isinstance(action_space, (spaces.Dict, spaces.Tuple)):
        _warn(
            f"{type(action_space).__name__} action spaces are not supported: flatten the actions into one space."
        )
    boxes = (
        observation_space.spaces if isinstance(observation_space, spaces.Dict) else {"": observation_space}
    )
    for key, box in boxes.items():
        where = f" (key {key!r})" if key else ""
        if not isinstance(box, spaces.Box):
            continue
        if np.any(box.low == box.high):
            _warn(
                f"The observation space{where} has dimensions whose low equals high: they carry no information."
            )
        if box.dtype == np.uint8 and len(box.shape) == 3:
            if np.any(box.low != 0) or np.any(box.high != 255):
                _warn(
                    f"The image observation space{where} should have bounds [0, 255] to be treated as images."
                )
            if min(s for s in box.shape if s > 4) < 36:
                _warn(
                    f"The image observations{where} are smaller than 36x36: NatureCNN (CnnPolicy) needs at least that."
                )
    if isinstance(action_space, spaces.Box):
        if np.any(action_space.low != -1) or np.any(action_space.high != 1):
            _warn(f"We recommend a symmetric, normalized Box action space ([-1, 1]) {_RL_TIPS}.")
        if action_space.dtype != np.float32:
            _warn(f"The action space has dtype {action_space.dtype}; np.float32 avoids casting errors.")
    for name, space in (("observation", observation_space), ("action", action_space)):
        start = getattr(space, "start", None)
        if isinstance(space, (spaces.Discrete, spaces.MultiDiscrete)) and np.any(start != 0):
            _warn(
                f"The {name} space {space} does not start at 0; lit-sb3 handles it, but some SB3 code does not."
            )


def _warn_about_values(observations: list[Any]) -> None:
    def finite(value: Any) -> bool:
        if isinstance(value, dict):
            return all(finite(v) for v in value.values())
        array = np.asarray(value)
        return array.dtype.kind not in "fc" or bool(np.all(np.isfinite(array)))

    if not all(finite(obs) for obs in observations):
        _warn("The env returned NaN or infinite observations.")


def _check_compute_reward(env: gym.Env, observation: dict[str, Any]) -> None:
    compute_reward = env.get_wrapper_attr("compute_reward")
    achieved, desired = observation["achieved_goal"], observation["desired_goal"]
    one = compute_reward(achieved, desired, {})
    batch = compute_reward(np.stack([achieved, achieved]), np.stack([desired, desired]), [{}, {}])
    if np.shape(batch) != (2,) or not np.allclose(np.asarray(batch)[0], one):
        raise EnvError(
            "compute_reward(achieved_goal, desired_goal, info) must work on batches (HER calls it with arrays of "
            f"goals) and give one reward per goal: got {batch!r} for two copies of one goal whose reward is {one!r}."
        )
