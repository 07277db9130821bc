"""SB3's ``check_env``: check a custom env before training on it.

``check_env`` is stricter than the checks lit-sb3 runs when it trains (``lit_sb3_core.envs.guards.CheckedEnv``
casts a float64 observation to a float32 space and lets values outside loose bounds pass): as SB3's, it asks
the first ``reset`` and ``step`` for exactly what the spaces declare (types, shapes, dtypes that cast
safely, values inside the bounds) and names the key, the index and the value that is wrong. Then it steps
the env through lit-sb3's own checks for ten random actions and warns about NaN and infinity. With
``warn=True`` it also warns, as SB3 does, about spaces that work but train badly or not at all.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lit_sb3.common._env_checks import observation_error, unsupported_space_names, warn_about_spaces
from lit_sb3_core.envs.guards import CheckedEnv
from lit_sb3_core.errors import EnvCheckError, EnvError, EnvTypeError

__all__ = ["check_env"]

_SPACES_DOC = "https://gymnasium.farama.org/api/spaces/"
_API = (
    "Gymnasium's API is reset(*, seed=None, options=None) -> (observation, info) and "
    "step(action) -> (observation, reward, terminated, truncated, info)."
)


def check_env(env: gym.Env, warn: bool = True, skip_render_check: bool = True) -> None:
    """Check that ``env`` follows the Gymnasium API and suits lit-sb3's (and SB3's) algorithms.

    Args:
        env: the env to check (it is reset and stepped).
        warn: also warn about spaces and values that train badly.
        skip_render_check: do not call ``render()``.

    Raises:
        EnvTypeError: ``env`` is not a ``gymnasium.Env``, its spaces are not gymnasium spaces, or its
            ``reset`` does not take ``seed`` (a ``TypeError`` and an ``AssertionError``).
        EnvCheckError: ``reset``/``step`` return what the API or the spaces do not allow, or a continuous
            action space has infinite bounds (an ``AssertionError`` and a ``ValueError``).
    """
    _check_types(env)
    observation_space, action_space = env.observation_space, env.action_space
    try:
        first = env.reset(seed=0)
    except TypeError as error:
        if "unexpected keyword argument 'seed'" not in str(error):
            raise
        raise EnvTypeError(
            f"The env's reset() does not accept a seed ({error}): it follows the old Gym API. {_API} Add the "
            "keyword-only arguments seed=None and options=None (and call super().reset(seed=seed))."
        ) from error
    if warn:
        warn_about_spaces(observation_space, action_space)
    if isinstance(action_space, spaces.Box) and not np.all(
        np.isfinite([action_space.low, action_space.high])
    ):
        raise EnvCheckError(
            f"The continuous action space {action_space} needs finite lower and upper bounds: the policy's "
            "actions are clipped to them (or rescaled from [-1, 1] into them)."
        )
    if unsupported_space_names(observation_space):
        return  # what reset/step return cannot be checked against these spaces (warned above)
    _check_reset_result(first, observation_space)
    observation = _check_step_result(env.step(action_space.sample()), observation_space)
    # A goal env (HER's) is one with compute_reward, as in SB3: goal keys alone are a plain Dict env.
    if (
        isinstance(observation_space, spaces.Dict)
        and {"achieved_goal", "desired_goal"} <= set(observation_space.spaces)
        and hasattr(env.unwrapped, "compute_reward")
    ):
        _check_compute_reward(env, observation)
    if not skip_render_check and env.render_mode is not None:
        env.render()
    _check_random_steps(env, action_space)


def _check_types(env: Any) -> None:
    if not isinstance(env, gym.Env):
        raise EnvTypeError(
            f"check_env needs a gymnasium.Env, got {type(env).__name__}: subclass gymnasium.Env "
            "(https://gymnasium.farama.org/api/env/)."
        )
    for name in ("observation_space", "action_space"):
        space = getattr(env, name, None)
        if not isinstance(space, spaces.Space):
            raise EnvTypeError(
                f"The env's {name} must be a gymnasium.spaces.Space, got {space!r}: set it in __init__ "
                f"({_SPACES_DOC})."
            )


def _fail(problem: str, call: str) -> None:
    raise EnvCheckError(f"{problem}. Fix the env's observation_space or what {call} returns.")


def _check_reset_result(result: Any, observation_space: spaces.Space) -> None:
    if not (isinstance(result, tuple) and len(result) == 2):
        what = f"a tuple of {len(result)} values" if isinstance(result, tuple) else type(result).__name__
        raise EnvCheckError(
            f"reset() returned {what}, not the pair (observation, info); returning the observation alone is "
            f"the old Gym API. {_API}"
        )
    observation, info = result
    if not isinstance(info, dict):
        raise EnvCheckError(f"reset() returned info={info!r}; the second value it returns must be a dict.")
    problem = observation_error(observation_space, observation, "reset()")
    if problem:
        _fail(problem, "reset()")


def _check_step_result(result: Any, observation_space: spaces.Space) -> Any:
    if not (isinstance(result, tuple) and len(result) == 5):
        count = len(result) if isinstance(result, (tuple, list)) else None
        old = " (observation, reward, done, info) is the old Gym API" if count == 4 else ""
        raise EnvCheckError(
            f"step() must return five values, it returned "
            f"{count if count is not None else type(result).__name__}{old}. {_API}"
        )
    observation, reward, terminated, truncated, info = result
    problem = observation_error(observation_space, observation, "step()")
    if problem:
        _fail(problem, "step()")
    if isinstance(reward, (bool, np.bool_)) or not isinstance(reward, (int, float, np.integer, np.floating)):
        raise EnvCheckError(
            f"step() returned the reward {reward!r} ({type(reward).__name__}); it must be a single number "
            "(a Python float, e.g. float(reward))."
        )
    for name, flag in (("terminated", terminated), ("truncated", truncated)):
        if not isinstance(flag, (bool, np.bool_)):
            raise EnvCheckError(
                f"step() returned {name}={flag!r} ({type(flag).__name__}); it must be a bool (bool({name}))."
            )
    if not isinstance(info, dict):
        raise EnvCheckError(f"step() returned info={info!r}; the last value it returns must be a dict.")
    return observation


def _check_random_steps(env: gym.Env, action_space: spaces.Space) -> None:
    """Ten random steps through lit-sb3's env checks; warns (as SB3's VecCheckNan does) about NaN and inf."""
    checked = CheckedEnv(env, 0, "checked")
    try:
        checked.reset(seed=0)
        rewards, observations = [], []
        for _ in range(10):
            observation, reward, terminated, truncated, _ = checked.step(action_space.sample())
            rewards.append(reward)
            observations.append(observation)
            if terminated or truncated:
                observations.append(checked.reset()[0])
    except EnvError as error:
        if isinstance(error, AssertionError):
            raise
        raise EnvCheckError(str(error)) from error
    if not _finite(rewards):
        _warn("The env returned NaN or infinite rewards.")
    if not _finite(observations):
        _warn("The env returned NaN or infinite observations.")


def _finite(value: Any) -> bool:
    if isinstance(value, Mapping):
        return all(_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_finite(v) for v in value)
    array = np.asarray(value)
    return array.dtype.kind not in "fc" or bool(np.all(np.isfinite(array)))


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=4)


def _check_compute_reward(env: gym.Env, observation: dict[str, Any]) -> None:
    compute_reward = env.get_wrapper_attr("compute_reward")
    achieved, desired = observation["achieved_goal"], observation["desired_goal"]
    one = compute_reward(achieved, desired, {})
    batch = compute_reward(np.stack([achieved, achieved]), np.stack([desired, desired]), [{}, {}])
    if np.shape(batch) != (2,) or not np.allclose(np.asarray(batch)[0], one):
        raise EnvCheckError(
            "compute_reward(achieved_goal, desired_goal, info) must work on batches (HER calls it with arrays of "
            f"goals) and give one reward per goal: got {batch!r} for two copies of one goal whose reward is {one!r}."
        )
