"""Environment guards: catch a broken environment where it breaks, and say which env and how to fix it.

Two kinds of checks, both wrappers, none of them costing anything per step unless asked for:

* ``CheckedEnv`` wraps every single env a vector env is built from (``make_vector_env`` adds it). It checks
  the **first** ``reset`` and the **first** ``step`` only: the Gymnasium API (``reset`` returning
  ``(obs, info)``, ``step`` returning five values, the old Gym API detected and explained) and the
  observation against the env's own ``observation_space`` (structure, shape, dtype). Then it takes itself
  out of the call path: later calls go straight to the wrapped env's methods.
* ``CheckFinite`` (opt-in: ``RLEnvDataModule(check_finite=True)``) wraps the vector env and checks every
  step's observations, rewards and actions for NaN and infinity, naming the env index and the action that
  produced the value. It costs one ``np.isfinite`` per array per vector step.

The vector envs themselves (errors that name the env and the step, step timeouts, dead async workers)
are in :mod:`lit_sb3_core.envs.vector_envs`.

This module imports gymnasium and numpy only: async workers started with the spawn method import it.
"""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv, VectorWrapper

from lit_sb3_core.errors import EnvError, NonFiniteError

__all__ = ["CheckFinite", "CheckedEnv", "env_name", "observation_problem"]


_NEW_API = (
    "Gymnasium's API is reset(*, seed=None, options=None) -> (observation, info) and "
    "step(action) -> (observation, reward, terminated, truncated, info)."
)
_PORT_HINT = (
    "Port the environment to that API (https://gymnasium.farama.org/introduction/migration_guide/), or wrap "
    "an old-API env with shimmy: shimmy.GymV21CompatibilityV0(env=old_env) (pip install shimmy)."
)


def env_name(env: gym.Env) -> str:
    """The env's class, and its id when it has one: ``TimeLimit`` hides nothing, ``CartPole (CartPole-v1)``."""
    spec = getattr(env, "spec", None)
    if spec is not None and getattr(spec, "id", None):
        return f"{type(env.unwrapped).__name__} ({spec.id})"
    return type(env.unwrapped).__name__


def _describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape}, dtype {value.dtype}"
    if isinstance(value, np.generic):
        return f"numpy scalar of dtype {value.dtype}"
    if isinstance(value, Mapping):
        return f"dict with keys {sorted(map(str, value))}"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__} of length {len(value)}"
    return f"{type(value).__name__} {value!r}"[:120]


def _space_name(space: spaces.Space) -> str:
    if isinstance(space, spaces.Box):
        return f"Box(shape={space.shape}, {space.dtype})"
    return repr(space)


def observation_problem(space: spaces.Space, obs: Any, path: str = "observation") -> str | None:
    """What is wrong with ``obs`` as an element of ``space`` (structure, shape, dtype), or None.

    Values outside the bounds are not a problem here: many environments declare loose bounds, and SB3 only
    warns about them in ``check_env``. Spaces this module does not know are not checked.
    """
    if isinstance(space, spaces.Dict):
        if not isinstance(obs, Mapping):
            return f"{path} should be a dict with keys {list(space.spaces)}, got {_describe_value(obs)}"
        missing = [key for key in space.spaces if key not in obs]
        extra = [key for key in obs if key not in space.spaces]
        if missing or extra:
            return f"{path} has keys {list(obs)}, the space has {list(space.spaces)}"
        for key, sub in space.spaces.items():
            problem = observation_problem(sub, obs[key], f"{path}[{key!r}]")
            if problem:
                return problem
        return None
    if not isinstance(space, (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)):
        return None
    if not isinstance(obs, (np.ndarray, np.generic, int, float, bool, list, tuple)):
        return f"{path} should be a numpy array for {_space_name(space)}, got {_describe_value(obs)}"
    array = np.asarray(obs)
    if array.dtype == object:
        return f"{path} is not numeric ({_describe_value(obs)}); {_space_name(space)} needs {space.dtype}"
    expected_shape = () if isinstance(space, spaces.Discrete) else space.shape
    if array.shape != expected_shape:
        return (
            f"{path} has shape {array.shape}, but the observation space {_space_name(space)} expects shape "
            f"{expected_shape}"
        )
    assert space.dtype is not None
    target = np.dtype(space.dtype)
    lossy = (array.dtype.kind == "c" and target.kind != "c") or (
        array.dtype.kind == "f" and target.kind in "iub"
    )
    if lossy:
        return (
            f"{path} has dtype {array.dtype}, which does not convert safely to the space's dtype {space.dtype} "
            f"({_space_name(space)}): values would be cut off"
        )
    if array.dtype.kind in "iu" and target.kind in "iu" and array.size:
        info = np.iinfo(target)
        low, high = array.min(), array.max()
        if low < info.min or high > info.max:
            return (
                f"{path} holds integers from {low} to {high}, outside the range of the space's dtype {space.dtype} "
                f"({_space_name(space)}): values would wrap around"
            )
    return None


def _takes_options(reset: Any) -> bool:
    """Whether ``reset`` accepts ``options=`` (else CheckedEnv keeps passing ``seed`` alone, as SB3 does)."""
    try:
        parameters = inspect.signature(reset).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "options" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


class CheckedEnv(gym.Wrapper):
    """Checks one env's first ``reset`` and first ``step``, then gets out of the way.

    Args:
        env: the env (with the user's wrappers already applied: this is what the vector env sees).
        index: its position in the vector env, for the messages.
        role: what the vector env is for ("training", "evaluation"), for the messages.
        in_worker: the env runs in an ``AsyncVectorEnv`` worker. The wrapper then stays in the call path
            (one call per step, next to a pipe round trip) to make sure an exception the env raises can
            reach the main process: one that cannot be rebuilt there becomes an ``EnvError`` that names it.
    """

    def __init__(self, env: gym.Env, index: int = 0, role: str = "", in_worker: bool = False) -> None:
        super().__init__(env)
        self.index = index
        self.role = role
        self.in_worker = in_worker
        self._reset_checked = False
        self._step_checked = False

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper]) -> bool:
        """Whether ``wrapper_class`` is in this env's wrapper chain: SB3's ``env_is_wrapped``, answered inside
        an async worker (a class can be sent there, a question about the chain cannot)."""
        current: Any = self
        while isinstance(current, gym.Wrapper):
            if isinstance(current, wrapper_class):
                return True
            current = current.env
        return False

    def sb3_set_attr(self, name: str, value: Any) -> None:
        """SB3's ``set_attr`` inside an async worker: a plain ``setattr`` on the env as its factory made it
        (the outermost of the user's wrappers), not gymnasium's search for where ``name`` already lives."""
        setattr(self.env, name, value)

    def _where(self) -> str:
        role = f"{self.role} " if self.role else ""
        return f"{role}env {self.index} ({env_name(self.env)})"

    def _transportable(self, exc: Exception) -> Exception | None:
        """In a worker, an ``EnvError`` standing in for ``exc`` when ``exc`` cannot be rebuilt after pickling."""
        if not self.in_worker:
            return None
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception as problem:
            name = f"{type(exc).__module__}.{type(exc).__qualname__}"
            return EnvError(
                f"The {self._where()} raised {name}: {exc} (attributes {vars(exc)}). That exception cannot be "
                f"sent from its AsyncVectorEnv worker to the main process ({type(problem).__name__}: "
                f"{problem}), so it is reported as this EnvError. Make the exception class picklable (an "
                "__init__ that accepts exactly its args, or a __reduce__), or train with "
                "vectorization='sync' to receive it as it is."
            )
        return None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        try:
            # options only when there are some, as SB3's VecEnvs do: envs whose reset takes seed alone work,
            # and an env reset without options (an empty dict from a vector reset) sees options=None.
            result = self.env.reset(seed=seed) if not options else self.env.reset(seed=seed, options=options)
        except Exception as exc:
            text = str(exc)
            old_api = "unexpected keyword argument" in text and ("'seed'" in text or "'options'" in text)
            if isinstance(exc, TypeError) and old_api:
                raise EnvError(
                    f"The {self._where()} uses the old Gym API: its reset() does not accept seed/options "
                    f"({text}). {_NEW_API} {_PORT_HINT}"
                ) from None
            stand_in = self._transportable(exc)
            if stand_in is not None:
                raise stand_in from None
            raise
        if self._reset_checked:
            return result
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], dict)):
            raise EnvError(
                f"The {self._where()} returned {_describe_value(result)} from reset(), not (observation, info): "
                f"this is the old Gym API, where reset() returned only the observation. {_NEW_API} {_PORT_HINT}"
            )
        problem = observation_problem(self.observation_space, result[0])
        if problem:
            raise EnvError(
                f"The {self._where()} returned an observation that does not match its observation space on "
                f"reset(): {problem}. Fix the environment's observation_space or what reset() returns."
            )
        self._reset_checked = True
        if not self.in_worker and _takes_options(self.env.reset):
            self.reset = self.env.reset  # type: ignore[method-assign]  # checked once; no cost from now on
        return result

    def step(self, action: Any) -> Any:
        try:
            result = self.env.step(action)
        except Exception as exc:
            stand_in = self._transportable(exc)
            if stand_in is not None:
                raise stand_in from None
            raise
        if self._step_checked:
            if self.in_worker:  # next to a pipe round trip, a shape check costs nothing noticeable
                self._check_later_observation(result)
            return result
        if not isinstance(result, tuple) or len(result) != 5:
            if isinstance(result, tuple) and len(result) == 4:
                raise EnvError(
                    f"The {self._where()} returned 4 values from step() (observation, reward, done, info): this "
                    f"is the old Gym API, with one 'done' flag instead of terminated and truncated. {_NEW_API} "
                    f"{_PORT_HINT}"
                )
            raise EnvError(f"The {self._where()} returned {_describe_value(result)} from step(); {_NEW_API}")
        observation, reward, terminated, truncated, info = result
        problem = observation_problem(self.observation_space, observation)
        if problem:
            raise EnvError(
                f"The {self._where()} returned an observation that does not match its observation space on "
                f"step(): {problem}. Fix the environment's observation_space or what step() returns."
            )
        reward_array = np.asarray(reward)
        if reward_array.ndim != 0 or not isinstance(reward_array.item(), (int, float, bool)):
            raise EnvError(
                f"The {self._where()} returned a reward that is not a number from step(): "
                f"{_describe_value(reward)}. Return a Python float (e.g. float(reward))."
            )
        for name, flag in (("terminated", terminated), ("truncated", truncated)):
            if np.ndim(flag) != 0 or not isinstance(np.asarray(flag).item(), (bool, int)):
                raise EnvError(
                    f"The {self._where()} returned {name}={_describe_value(flag)} from step(); it must be a "
                    f"bool. {_NEW_API}"
                )
        if not isinstance(info, dict):
            raise EnvError(
                f"The {self._where()} returned info={_describe_value(info)} from step(); it must be a dict."
            )
        self._step_checked = True
        self._steps = 1
        if not self.in_worker:
            self.step = self.env.step  # type: ignore[method-assign]
        return result

    def _check_later_observation(self, result: Any) -> None:
        self._steps += 1
        observation = result[0] if isinstance(result, tuple) and result else None
        problem = observation_problem(self.observation_space, observation)
        if problem:
            raise EnvError(
                f"The {self._where()} returned an observation that does not match its observation space at its "
                f"step {self._steps} (its first steps were fine): {problem}. Fix what step() returns."
            )


def _non_finite(value: Any) -> np.ndarray | None:
    """Indices (along the first axis) of rows holding NaN or infinity; None when all are finite."""
    if isinstance(value, Mapping):
        rows = [r for r in (_non_finite(v) for v in value.values()) if r is not None]
        return np.unique(np.concatenate(rows)) if rows else None
    array = np.asarray(value)
    if array.dtype.kind not in "fc":
        return None
    finite = np.isfinite(array)
    if finite.all():
        return None
    return np.flatnonzero(~finite.reshape(len(array), -1).all(axis=1)) if array.ndim else np.array([0])


def _entry(value: Any, index: int) -> Any:
    if isinstance(value, Mapping):
        return {key: _entry(v, index) for key, v in value.items()}
    return np.asarray(value)[index]


def _show(value: Any) -> str:
    """Plain-Python rendering of numpy values for messages (``[0.0, nan]`` rather than ``array(...)``)."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{key!r}: {_show(v)}" for key, v in value.items()) + "}"
    if isinstance(value, (np.ndarray, np.generic)):
        return repr(value.tolist())
    return repr(value)


class CheckFinite(VectorWrapper):
    """Raise ``NonFiniteError`` as soon as an observation, reward or action holds NaN or infinity.

    The message names the env index, what was non-finite, and the action that env was given (the policy's
    action when the env produced the value, the action itself when the policy did). SB3's counterpart is
    ``VecCheckNan(raise_exception=True)``.
    """

    def __init__(self, env: VectorEnv, role: str = "training") -> None:
        super().__init__(env)
        self.role = role
        self._steps = 0

    def _raise(self, what: str, rows: np.ndarray, value: Any, actions: Any, when: str) -> None:
        index = int(rows[0])
        others = f" (also envs {rows[1:].tolist()})" if len(rows) > 1 else ""
        action = "" if actions is None else f" after action {_show(_entry(actions, index))}"
        raise NonFiniteError(
            f"The {self.role} env {index}{others} returned a non-finite {what} {when}{action}: "
            f"{_show(_entry(value, index))}. Fix the environment (or clip/sanitize with a wrapper); if the policy "
            "diverged first, lower the learning rate or normalize observations and rewards (normalize=True).",
            what=what,
            env_index=index,
            action=None if actions is None else _entry(actions, index),
            step=self._steps,
        )

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        observations, infos = self.env.reset(seed=seed, options=options)
        rows = _non_finite(observations)
        if rows is not None:
            self._raise("observation", rows, observations, None, "on reset()")
        return observations, infos

    def step(self, actions: Any) -> Any:
        self._steps += 1
        when = f"at vector step {self._steps}"
        rows = _non_finite(actions)
        if rows is not None:
            raise NonFiniteError(
                f"The policy produced a non-finite action for {self.role} env {int(rows[0])} {when}: "
                f"{_show(_entry(actions, int(rows[0])))}. Its parameters diverged: lower the learning rate, clip "
                "gradients (max_grad_norm) or normalize observations and rewards (normalize=True).",
                what="action",
                env_index=int(rows[0]),
                action=_entry(actions, int(rows[0])),
                step=self._steps,
            )
        observations, rewards, terminated, truncated, infos = self.env.step(actions)
        rows = _non_finite(rewards)
        if rows is not None:
            self._raise("reward", rows, rewards, actions, when)
        rows = _non_finite(observations)
        if rows is not None:
            self._raise("observation", rows, observations, actions, when)
        if "final_obs" in infos:
            final = infos["final_obs"]
            for i in np.flatnonzero(np.logical_or(terminated, truncated)):
                one = final[i]
                batch = (
                    {k: np.asarray(v)[None] for k, v in one.items()}
                    if isinstance(one, Mapping)
                    else np.asarray(one)[None]
                )
                if _non_finite(batch) is not None:
                    self._raise("final observation", np.array([i]), final, actions, when)
        return observations, rewards, terminated, truncated, infos
