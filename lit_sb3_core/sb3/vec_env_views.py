"""Views between gymnasium's vector envs (what lit-sb3 trains on) and SB3's ``VecEnv`` API (what SB3 code uses).

- ``as_sb3_vec_env(vector_env)``: SB3's API over a SAME_STEP gymnasium ``VectorEnv`` (``model.env``,
  ``get_env()``, ``self.training_env`` in SB3 callbacks). A vector env that was built from a user's SB3
  ``VecEnv`` gives that very object back, wrappers and all.
- ``as_vector_env(venv)``: a gymnasium ``VectorEnv`` over an SB3 ``VecEnv`` (lit-sb3's own or a real
  ``stable_baselines3`` one), so a user's ``VecEnvWrapper`` trains, evaluates and predicts like any env.
  When ``venv`` is a plain view (``DummyVecEnv``, ``SubprocVecEnv``, ``make_vec_env``), steps go straight to
  the gymnasium env underneath, at no cost.
- ``sb3_infos``: gymnasium's dict of info arrays as SB3's list of info dicts.

Both views are cached on the object they view, so each call returns the same view. Gymnasium and numpy
only: async env workers never import this module, and importing it loads no torch.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array

from lit_sb3_core.envs.guards import CheckedEnv
from lit_sb3_core.envs.vector_envs import LitAsyncVectorEnv
from lit_sb3_core.errors import ConfigurationError, EnvError
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvIndices, VecEnvObs, VecEnvStepReturn

__all__ = [
    "GymnasiumVecEnv",
    "VecEnvAsVectorEnv",
    "as_sb3_vec_env",
    "as_vector_env",
    "batch_actions",
    "drop_pending_seeds",
    "find_vec_wrapper",
    "is_sb3_vec_env",
    "is_wrapped",
    "reset_vector_env",
    "sb3_infos",
]

_VIEW_ATTRIBUTE = "_lit_sb3_sb3_view"
_ADAPTER_ATTRIBUTE = "_lit_sb3_vector_env"
_FINAL_KEYS = ("final_obs", "_final_obs", "final_info", "_final_info")


# infos -----------------------------------------------------------------------------------------------
def _entry(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _info_of(vector_infos: dict[str, Any], index: int) -> dict[str, Any]:
    """The info dict of env ``index`` inside gymnasium's dict of arrays (with its ``_key`` masks)."""
    info: dict[str, Any] = {}
    for key, value in vector_infos.items():
        if key in _FINAL_KEYS or (key.startswith("_") and key[1:] in vector_infos):
            continue
        mask = vector_infos.get(f"_{key}")
        if mask is not None and not mask[index]:
            continue
        info[key] = _info_of(value, index) if isinstance(value, dict) else _entry(value[index])
    return info


def sb3_infos(infos: dict[str, Any], terminated: np.ndarray, truncated: np.ndarray) -> list[dict[str, Any]]:
    """SB3's per-env infos for one SAME_STEP vector step.

    An env whose episode ended gets the info of its last step (gymnasium moves it to ``final_info``; the
    top-level entry is the reset info of the next episode), ``"terminal_observation"`` and the episode
    statistics (``"episode": {"r", "l", "t"}``) from a recorder inside the env or, failing that, from a
    vector-level one. Every env gets ``"TimeLimit.truncated"`` (truncated and not terminated).
    """
    final_info = infos.get("final_info")
    final_obs = infos.get("final_obs")
    result = []
    for i in range(len(terminated)):
        done = bool(terminated[i] or truncated[i])
        if done:
            info = _info_of(final_info, i) if final_info is not None else {}
            recorded = infos.get("_episode")
            if "episode" not in info and "episode" in infos and (recorded is None or recorded[i]):
                info["episode"] = _info_of(infos["episode"], i)
            if final_obs is not None:
                info["terminal_observation"] = final_obs[i]
        else:
            info = _info_of(infos, i)
        info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        result.append(info)
    return result


def _reset_infos(infos: dict[str, Any], num_envs: int) -> list[dict[str, Any]]:
    return [_info_of(infos, i) for i in range(num_envs)]


# sub-env access (SB3 reaches single envs by index; gymnasium only all at once) -----------------------
def is_wrapped(env: gym.Env, wrapper_class: type[gym.Wrapper]) -> bool:
    """Whether ``wrapper_class`` is somewhere in ``env``'s wrapper chain."""
    current: Any = env
    while isinstance(current, gym.Wrapper):
        if isinstance(current, wrapper_class):
            return True
        current = current.env
    return False


def _async_call(base: AsyncVectorEnv, indices: list[int], messages: list[tuple[str, Any]]) -> list[Any]:
    """Send one worker command to each selected worker and collect the answers (gymnasium's protocol)."""
    base._assert_is_running()
    stopped = [i for i in indices if base.parent_pipes[i] is None]
    if stopped:
        raise EnvError(
            f"The SubprocVecEnv/AsyncVectorEnv worker of env {stopped[0]} has stopped: an earlier call raised in "
            "it, and gymnasium's workers end on an error. Close this vector env and create a new one."
        )
    for i, message in zip(indices, messages):
        base.parent_pipes[i].send(message)
    answers = [base.parent_pipes[i].recv() for i in indices]
    successes = [True] * base.num_envs
    for i, (_, success) in zip(indices, answers):
        successes[i] = success
    base._raise_if_errors(successes)
    return [result for result, _ in answers]


class _SubEnvs:
    """Per-index access to the sub-envs of a gymnasium vector env (sync, async, or a view of an SB3 one)."""

    def __init__(self, vector_env: VectorEnv) -> None:
        # Any: besides the gymnasium classes matched below, any vector env with call/get_attr/set_attr
        self.base: Any = vector_env.unwrapped

    def call(self, indices: list[int], name: str, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        base = self.base
        if isinstance(base, SyncVectorEnv):
            return [base.envs[i].get_wrapper_attr(name)(*args, **kwargs) for i in indices]
        if isinstance(base, AsyncVectorEnv):
            return _async_call(base, indices, [("_call", (name, tuple(args), kwargs))] * len(indices))
        if isinstance(base, VecEnvAsVectorEnv):
            return base.venv.env_method(name, *args, indices=indices, **kwargs)
        return self._select(base.call(name, *args, **kwargs), indices, name)

    def get(self, indices: list[int], name: str) -> list[Any]:
        base = self.base
        if isinstance(base, SyncVectorEnv):
            return [base.envs[i].get_wrapper_attr(name) for i in indices]
        if isinstance(base, AsyncVectorEnv):
            return _async_call(base, indices, [("_call", ("get_wrapper_attr", (name,), {}))] * len(indices))
        if isinstance(base, VecEnvAsVectorEnv):
            return base.venv.get_attr(name, indices)
        return self._select(base.get_attr(name), indices, name)

    def set(self, indices: list[int], name: str, value: Any) -> None:
        """SB3's ``set_attr``: a plain ``setattr`` on each env as its factory made it (SB3 sets the attribute
        on the outermost wrapper); gymnasium's ``set_wrapper_attr`` for envs lit-sb3 did not build."""
        base = self.base
        if isinstance(base, SyncVectorEnv):
            for i in indices:
                env = base.envs[i]
                if isinstance(env, CheckedEnv):
                    setattr(env.env, name, value)
                else:
                    env.set_wrapper_attr(name, value)
        elif isinstance(base, LitAsyncVectorEnv):  # every sub-env is a CheckedEnv
            self.call(indices, "sb3_set_attr", (name, value), {})
        elif isinstance(base, AsyncVectorEnv):
            _async_call(base, indices, [("_setattr", (name, value))] * len(indices))
        elif isinstance(base, VecEnvAsVectorEnv):
            base.venv.set_attr(name, value, indices)
        elif indices == list(range(base.num_envs)):
            base.set_attr(name, value)
        else:
            raise NotImplementedError(f"{type(base).__name__} cannot set attributes of single sub-envs.")

    def has(self, name: str) -> bool:
        """Whether every sub-env has ``name``, asked where the env lives: an async worker ends on an error, so
        a missing attribute must not be looked up there."""
        base = self.base
        if isinstance(base, VecEnvAsVectorEnv):
            return bool(base.venv.has_attr(name))
        if isinstance(base, (SyncVectorEnv, AsyncVectorEnv)):
            return all(self.call(list(range(base.num_envs)), "has_wrapper_attr", (name,), {}))
        try:
            base.get_attr(name)
        except AttributeError:
            return False
        return True

    def wrapped(self, indices: list[int], wrapper_class: type[gym.Wrapper]) -> list[bool]:
        base = self.base
        if isinstance(base, SyncVectorEnv):
            return [is_wrapped(base.envs[i], wrapper_class) for i in indices]
        if isinstance(base, VecEnvAsVectorEnv):
            return base.venv.env_is_wrapped(wrapper_class, indices)
        # Each sub-env that lit-sb3 builds answers for itself (lit_sb3_core.envs.guards.CheckedEnv).
        return self.call(indices, "env_is_wrapped", (wrapper_class,), {})

    def _select(self, values: Sequence[Any], indices: list[int], name: str) -> list[Any]:
        return [values[i] for i in indices]


def reset_vector_env(
    vector_env: VectorEnv, seeds: Any, options: Sequence[dict[str, Any]]
) -> tuple[Any, dict]:
    """Reset ``vector_env`` with reset options ``options[i]`` for env ``i`` (SB3's ``set_options`` list).

    Gymnasium's vector envs take one options dict for all envs; envs that share options are reset together
    (gymnasium's ``reset_mask``), one group after the other, and their infos merged. When every env has the
    same options they are passed once (None when empty, as SB3 passes none); in a mixed list an env without
    options gets an empty dict.
    """
    # Sync/AsyncVectorEnv take one seed per sub-env; the VectorEnv base class declares one int
    seed = cast(Any, seeds)
    first = options[0] if options else {}
    if all(option == first for option in options):
        return vector_env.reset(seed=seed, options=dict(first) or None)
    if not isinstance(vector_env.unwrapped, (SyncVectorEnv, AsyncVectorEnv)):
        raise ConfigurationError(
            f"{type(vector_env.unwrapped).__name__} takes one reset options dict for all its envs: pass one "
            "dict to set_options() (different options per env need gymnasium's SyncVectorEnv/AsyncVectorEnv)."
        )
    groups: list[tuple[dict[str, Any], list[int]]] = []
    for index, option in enumerate(options):
        group = next((members for shared, members in groups if shared == option), None)
        if group is None:
            groups.append((option, [index]))
        else:
            group.append(index)
    observations: Any = None
    infos: dict[str, Any] = {}
    for shared, members in groups:
        mask = np.zeros(vector_env.num_envs, dtype=np.bool_)
        mask[members] = True
        observations, group_infos = vector_env.reset(seed=seed, options={**shared, "reset_mask": mask})
        for index in members:
            infos = vector_env._add_info(infos, _info_of(group_infos, index), index)
    return observations, infos


def batch_actions(space: gym.Space, num_envs: int, actions: Any) -> Any:
    """``actions`` as gymnasium's batch for ``num_envs`` envs of action space ``space``.

    SB3's VecEnvs index the actions by env (``actions[i]`` goes to env ``i``), so a list of one Dict or
    Tuple action per env is valid there; gymnasium wants a dict (tuple) of batched arrays instead.
    Anything else is passed on as it is (a batch array indexes the same either way).
    """
    if isinstance(space, spaces.Dict) and not isinstance(actions, Mapping):
        per_env = list(actions)
    elif isinstance(space, spaces.Tuple) and (
        isinstance(actions, list)
        or (len(actions) == num_envs and all(space.contains(action) for action in actions))
    ):
        per_env = list(actions)
    else:
        return actions
    if len(per_env) != num_envs:
        raise ConfigurationError(
            f"step() got {len(per_env)} actions for {num_envs} envs: pass one action per env."
        )
    return concatenate(space, per_env, cast(Any, create_empty_array(space, num_envs)))


# gymnasium -> SB3 --------------------------------------------------------------------------------------
class GymnasiumVecEnv(VecEnv):
    """SB3's ``VecEnv`` API over a gymnasium ``VectorEnv`` that resets with ``AutoresetMode.SAME_STEP``.

    SAME_STEP is SB3's own convention: the step that ends an episode returns the first observation of the
    next one, so the view only reshapes the results (``dones = terminated | truncated``, one info dict per
    env). ``vector_env`` is the gymnasium env it steps.
    """

    def __init__(self, vector_env: VectorEnv) -> None:
        mode = vector_env.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3's VecEnv API needs a vector env with autoreset_mode=SAME_STEP, this one uses {mode}: "
                "create it with gymnasium.vector.SyncVectorEnv(fns, autoreset_mode=AutoresetMode.SAME_STEP)."
            )
        self.vector_env = vector_env
        self._sub_envs = _SubEnvs(vector_env)
        self._actions: Any = None
        self._warned_extra_actions = False
        super().__init__(
            vector_env.num_envs, vector_env.single_observation_space, vector_env.single_action_space
        )
        # SB3 exposes the sub-envs' metadata; keep render_modes as SB3 computes them.
        self.metadata = {**getattr(vector_env, "metadata", {}), "render_modes": self.metadata["render_modes"]}

    def _reset_arguments(self) -> tuple[list[int | None] | None, list[dict[str, Any]]]:
        seeds = self._seeds if any(seed is not None for seed in self._seeds) else None
        return seeds, list(self._options)

    def reset(self) -> VecEnvObs:
        seeds, options = self._reset_arguments()
        observations, infos = reset_vector_env(self.vector_env, seeds, options)
        self.reset_infos = _reset_infos(infos, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        rows = isinstance(actions, list) or (isinstance(actions, np.ndarray) and actions.ndim > 0)
        if rows and len(actions) > self.num_envs:
            # SB3's VecEnvs step env i with actions[i] and ignore the rows beyond; so does this view.
            if not self._warned_extra_actions:
                self._warned_extra_actions = True
                warnings.warn(
                    f"{type(self).__name__} was given {len(actions)} actions for {self.num_envs} env(s): each env "
                    "takes its own row and the rest are ignored, as in SB3. Pass one action per env.",
                    UserWarning,
                    stacklevel=3,
                )
            actions = actions[: self.num_envs]
        self._actions = batch_actions(self.action_space, self.num_envs, actions)

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, terminated, truncated, infos = self.vector_env.step(self._actions)
        dones = np.logical_or(terminated, truncated)
        step_infos = sb3_infos(infos, terminated, truncated)
        for i in np.flatnonzero(dones):
            reset_info = _info_of(infos, int(i))
            reset_info.pop("episode", None)  # a vector recorder's statistics of the episode that ended
            self.reset_infos[i] = reset_info
        return observations, np.asarray(rewards, dtype=np.float32), dones, step_infos

    def close(self) -> None:
        self.vector_env.close()

    def get_images(self) -> Sequence[np.ndarray | None]:
        if self.render_mode != "rgb_array":
            return [None] * self.num_envs
        return list(cast(Any, self.vector_env.render()) or [])

    def has_attr(self, attr_name: str) -> bool:
        return self._sub_envs.has(attr_name)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        return self._sub_envs.get(self._get_indices(indices), attr_name)

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        self._sub_envs.set(self._get_indices(indices), attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any
    ) -> list[Any]:
        return self._sub_envs.call(self._get_indices(indices), method_name, method_args, method_kwargs)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None) -> list[bool]:
        return self._sub_envs.wrapped(self._get_indices(indices), wrapper_class)

    @property
    def envs(self) -> list[gym.Env]:
        """The sub-envs, when they live in this process (``DummyVecEnv.envs`` in SB3): each as its factory
        made it (``make_vec_env``'s ``Monitor`` or wrapper outermost), without lit-sb3's first-step check."""
        base = self.vector_env.unwrapped
        if not isinstance(base, SyncVectorEnv):
            raise AttributeError(f"The sub-envs of {type(base).__name__} live in other processes.")
        return [env.env if isinstance(env, CheckedEnv) else env for env in base.envs]


def as_sb3_vec_env(vector_env: VectorEnv) -> VecEnv:
    """SB3's view of ``vector_env``: the user's own ``VecEnv`` when it was built from one, else a
    ``GymnasiumVecEnv`` (made once and kept on ``vector_env``)."""
    current: Any = vector_env
    while current is not None:
        if isinstance(current, VecEnvAsVectorEnv):
            return current.venv
        current = getattr(current, "env", None) if isinstance(current, gym.vector.VectorWrapper) else None
    view = vars(vector_env).get(_VIEW_ATTRIBUTE)
    if view is None:
        view = GymnasiumVecEnv(vector_env)
        setattr(vector_env, _VIEW_ATTRIBUTE, view)
    return view


def drop_pending_seeds(vector_env: VectorEnv) -> None:
    """Forget the seeds ``seed()`` left for the next reset of ``vector_env``'s SB3 view: the env was just
    reset underneath it (a ``learn``), which consumes them as SB3's ``reset`` does."""
    view = vars(vector_env).get(_VIEW_ATTRIBUTE)
    if view is not None:
        view._reset_seeds()


# SB3 -> gymnasium ---------------------------------------------------------------------------------------
def is_sb3_vec_env(value: Any) -> bool:
    """True for SB3-API vector envs: lit-sb3's ``VecEnv`` or anything shaped like one (a real SB3 VecEnv)."""
    if isinstance(value, VecEnv):
        return True
    if isinstance(value, (VectorEnv, gym.Env)) or isinstance(value, type):
        return False
    return all(hasattr(value, name) for name in ("step_async", "step_wait", "env_method", "num_envs"))


def _is_plain_view(venv: Any) -> bool:
    """A ``GymnasiumVecEnv`` whose reset and step nobody overrode: its gymnasium env can be stepped directly."""
    cls = type(venv)
    return isinstance(venv, GymnasiumVecEnv) and all(
        getattr(cls, name) is getattr(GymnasiumVecEnv, name) for name in ("reset", "step_async", "step_wait")
    )


class VecEnvAsVectorEnv(VectorEnv):
    """A gymnasium ``VectorEnv`` (SAME_STEP) that steps an SB3 ``VecEnv``.

    ``dones`` split into ``terminated``/``truncated`` by ``info["TimeLimit.truncated"]``; each finished
    env's ``info["terminal_observation"]`` becomes gymnasium's ``final_obs`` and its info ``final_info``.
    ``close()`` leaves ``venv`` open: it belongs to the caller, as in SB3.
    """

    def __init__(self, venv: Any) -> None:
        self.venv = venv
        self.num_envs = int(venv.num_envs)
        self.single_observation_space = venv.observation_space
        self.single_action_space = venv.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = getattr(venv, "render_mode", None)
        self.metadata = {
            **dict(getattr(venv, "metadata", None) or {}),
            "autoreset_mode": AutoresetMode.SAME_STEP,
        }
        self.spec = None
        self.closed = False
        self._direct: VectorEnv | None = venv.vector_env if _is_plain_view(venv) else None

    @property
    def stepped_env(self) -> VectorEnv | None:
        """The gymnasium env a plain view (``model.get_env()``) is of, stepped directly; None otherwise."""
        return self._direct

    @property
    def unwrapped(self) -> VectorEnv:  # type: ignore[override]  # another env, not Self, for a plain view
        """The gymnasium env underneath a plain view (so its sub-envs are reached directly), else this."""
        return self._direct.unwrapped if self._direct is not None else self

    def reset(self, *, seed: Any = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if self._direct is not None:
            pending, pending_options = self.venv._reset_arguments()
            self.venv._reset_seeds()
            self.venv._reset_options()
            seed = pending if seed is None else seed
            if options:
                return self._direct.reset(seed=seed, options=options)
            return reset_vector_env(self._direct, seed, pending_options)
        if seed is not None:
            if isinstance(seed, (int, np.integer)):
                self.venv.seed(int(seed))
            else:
                self.venv._seeds = list(seed)
        if options:
            self.venv.set_options(options)
        observations = self.venv.reset()
        infos: dict[str, Any] = {}
        for i, info in enumerate(getattr(self.venv, "reset_infos", None) or []):
            infos = self._add_info(infos, info, i)
        return observations, infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if self._direct is not None:
            return self._direct.step(actions)
        observations, rewards, dones, step_infos = self.venv.step(actions)
        dones = np.asarray(dones, dtype=bool)
        # SB3 reads infos[i] only where it needs them: a VecEnv may return fewer (even none) on plain steps.
        step_infos = list(step_infos) + [{} for _ in range(self.num_envs - len(step_infos))]
        truncated = np.array([bool(info.get("TimeLimit.truncated", False)) for info in step_infos]) & dones
        terminated = dones & ~truncated
        infos: dict[str, Any] = {}
        for i, info in enumerate(step_infos):
            if not dones[i]:
                infos = self._add_info(infos, info, i)
                continue
            final_info = dict(info)
            final_obs = final_info.pop("terminal_observation", None)
            if final_obs is None:
                if truncated[i]:
                    raise ValueError(
                        f"{type(self.venv).__name__} reported a truncated episode in env {i} without "
                        "info['terminal_observation']: a VecEnvWrapper must pass the infos of the env it wraps "
                        "on (SB3's VecEnvs put the final observation there)."
                    )
                final_obs = _observation_of(observations, i)
            infos = self._add_info(infos, {"final_obs": final_obs, "final_info": final_info}, i)
        return observations, np.asarray(rewards), terminated, truncated, infos

    def render(self) -> tuple[Any, ...] | None:
        if self._direct is not None:
            return self._direct.render()
        if self.render_mode == "rgb_array":
            return tuple(self.venv.get_images())
        self.venv.render()
        return None

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(self.venv.env_method(name, *args, **kwargs))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return tuple(self.venv.get_attr(name))

    def set_attr(self, name: str, values: Any) -> None:
        if isinstance(values, (list, tuple)):
            for i, value in enumerate(values):
                self.venv.set_attr(name, value, indices=[i])
        else:
            self.venv.set_attr(name, values)

    def close(self, **kwargs: Any) -> None:
        self.closed = True  # the SB3 env stays open: its owner closes it

    def __repr__(self) -> str:
        return f"VecEnvAsVectorEnv({self.venv!r})"


def _observation_of(observations: Any, index: int) -> Any:
    if isinstance(observations, dict):
        return {key: value[index] for key, value in observations.items()}
    return observations[index]


def as_vector_env(venv: Any) -> VectorEnv:
    """The gymnasium vector env that steps the SB3 ``VecEnv`` ``venv`` (made once, kept on ``venv``)."""
    if not is_sb3_vec_env(venv):
        raise TypeError(
            f"{type(venv).__name__} is not an SB3 VecEnv (it has no step_async/step_wait/env_method)."
        )
    adapter = vars(venv).get(_ADAPTER_ATTRIBUTE)
    if adapter is None:
        adapter = VecEnvAsVectorEnv(venv)
        venv.__dict__[_ADAPTER_ATTRIBUTE] = adapter
    return adapter


def find_vec_wrapper(venv: Any, wrapper: type | str) -> Any:
    """The first wrapper in ``venv``'s chain (following ``.venv``) that is ``wrapper`` (a class, or a class
    name for callers that cannot import it); None when there is none."""
    current = venv
    while current is not None:
        if isinstance(wrapper, str):
            if any(cls.__name__ == wrapper for cls in type(current).__mro__):
                return current
        elif isinstance(current, wrapper):
            return current
        current = vars(current).get("venv") if hasattr(current, "__dict__") else None
    return None
