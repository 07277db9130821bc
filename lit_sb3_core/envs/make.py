"""Building gymnasium vector environments from what users pass: an id, an Env, a factory or a VectorEnv.

This module imports gymnasium only (no torch, no lightning): ``AsyncVectorEnv`` workers started with the
spawn method unpickle the env factories defined here, and must start fast.

All vector envs use ``AutoresetMode.SAME_STEP``: the step that ends an episode returns the first
observation of the next one, and the true final observation travels in ``info["final_obs"]``. That is
the convention SB3 users know, and it lets truncated episodes bootstrap from their real last state.

An SB3-API ``VecEnv`` (``DummyVecEnv``, ``VecNormalize``, a user's ``VecEnvWrapper``) is accepted wherever an
env is: ``make_vector_env`` views it as a gymnasium vector env (``vec_env_views.as_vector_env``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
from gymnasium.vector import AutoresetMode, VectorEnv

from lit_sb3_core.envs.atari import require_atari
from lit_sb3_core.envs.guards import CheckedEnv
from lit_sb3_core.envs.vector_envs import (
    LitAsyncVectorEnv,
    LitSyncVectorEnv,
    apply_step_timeout,
    with_step_timeout,
)
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.sb3.vec_env_views import as_vector_env, is_sb3_vec_env

EnvSource = str | gym.Env | Callable[[], gym.Env] | VectorEnv
WrapperLike = Callable[[gym.Env], gym.Env]

__all__ = ["EnvFactory", "EnvSource", "make_vector_env", "make_vector_env_from_fns", "renders_rgb_arrays"]


class EnvFactory:
    """A picklable ``() -> Env`` that builds one environment and applies the user's wrappers."""

    def __init__(
        self,
        source: str | Callable[[], gym.Env],
        env_kwargs: dict[str, Any] | None = None,
        wrappers: Sequence[WrapperLike] = (),
        render_mode: str | None = None,
    ) -> None:
        self.source = source
        self.env_kwargs = dict(env_kwargs or {})
        self.wrappers = tuple(wrappers)
        self.render_mode = render_mode

    def __call__(self) -> gym.Env:
        if isinstance(self.source, str):
            kwargs = dict(self.env_kwargs)
            if self.render_mode is not None:
                kwargs["render_mode"] = self.render_mode
            env = make_env_by_id(self.source, kwargs)
        else:
            env = self.source(**self.env_kwargs)
            if not isinstance(env, gym.Env):
                raise TypeError(
                    f"The environment factory {self.source!r} returned {type(env).__name__}, "
                    "not a gymnasium.Env."
                )
        for wrapper in self.wrappers:
            env = wrapper(env)
        return env


class _CheckedFactory:
    """``factory()`` wrapped in ``CheckedEnv`` for vector position ``index`` (picklable, for async workers)."""

    def __init__(self, factory: EnvFactory, index: int, role: str, in_worker: bool = False) -> None:
        self.factory = factory
        self.index = index
        self.role = role
        self.in_worker = in_worker

    def __call__(self) -> gym.Env:
        return CheckedEnv(self.factory(), self.index, self.role, in_worker=self.in_worker)


def make_env_by_id(env_id: str, kwargs: dict[str, Any]) -> gym.Env:
    """``gym.make`` with an error that lists close matches when the id is unknown.

    Atari ids register themselves on first use (ale-py, the ``atari`` extra, is imported for them).
    """
    if env_id not in gym.registry and _looks_atari(env_id):
        require_atari()
    try:
        return gym.make(env_id, **kwargs)
    except gym.error.DeprecatedEnv:
        raise  # its message names the version to use, and code catches it to fall back to that version
    except gym.error.Error as exc:
        if env_id not in gym.registry:
            import difflib

            close = difflib.get_close_matches(env_id, list(gym.registry), n=3)
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            # the same class as gymnasium's (VersionNotFound, NamespaceNotFound, ...), with a clearer message
            unregistered = type(exc) if isinstance(exc, gym.error.UnregisteredEnv) else gym.error.NameNotFound
            raise unregistered(
                f"Unknown environment id {env_id!r}.{hint} Registered ids are listed by "
                "`gymnasium.pprint_registry()`; environments from other packages need that package "
                "imported (or a 'module:EnvId' id) first."
            ) from None
        raise exc


def _looks_atari(env_id: str) -> bool:
    return env_id.startswith("ALE/") or "NoFrameskip" in env_id


def renders_rgb_arrays(source: object) -> bool:
    """Whether ``source`` is a registered env id whose env declares ``render_mode="rgb_array"``.

    SB3 makes the env of ``Algo("MlpPolicy", "CartPole-v1")`` with that render mode, so ``model.env.render()``
    returns frames; an env that declares no such mode (a user's, say) is made as it is.
    """
    if not isinstance(source, str):
        return False
    try:
        if source not in gym.registry and _looks_atari(source):
            require_atari()
        entry_point = gym.spec(source).entry_point
        creator = (
            gym.envs.registration.load_env_creator(entry_point)
            if isinstance(entry_point, str)
            else entry_point
        )
    except (gym.error.Error, ImportError, AttributeError):
        return False  # gym.make reports an unknown or broken id with its own message
    return "rgb_array" in (getattr(creator, "metadata", None) or {}).get("render_modes", ())


def make_vector_env(
    source: EnvSource,
    n_envs: int = 1,
    vectorization: str = "sync",
    env_kwargs: dict[str, Any] | None = None,
    wrappers: Sequence[WrapperLike] = (),
    render_mode: str | None = None,
    role: str = "",
    step_timeout: float | None = None,
) -> VectorEnv:
    """A SAME_STEP-autoreset vector env of ``n_envs`` copies of ``source``.

    Each single env is wrapped in ``CheckedEnv`` (its first reset and step are checked against the
    Gymnasium API and its observation space; ``role`` names the envs in those messages). The vector env is
    a ``LitSyncVectorEnv`` or ``LitAsyncVectorEnv``: errors name the env and the step, a dead async worker
    its exit code, and ``step_timeout`` (seconds, None: no limit) stops an env that hangs. A ``VectorEnv``
    passed in is used as it is, with the limit too (a gymnasium ``SyncVectorEnv``/``AsyncVectorEnv`` under
    ``StepTimeout``); an SB3 ``VecEnv`` is viewed as a gymnasium vector env and used as it is.
    """
    limited = False
    if is_sb3_vec_env(source) or isinstance(source, VectorEnv):
        limited = apply_step_timeout(source, step_timeout, role)  # an env built elsewhere gets the limit too
    if is_sb3_vec_env(source):
        source = as_vector_env(source)
    if isinstance(source, VectorEnv):
        mode = source.metadata.get("autoreset_mode")
        if mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"lit-sb3 needs vector envs with autoreset_mode=SAME_STEP, this one uses {mode}. Create it "
                "with gymnasium.vector.SyncVectorEnv(fns, autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP), "
                "or pass an env id or factory and let RLEnvDataModule build it."
            )
        return source if limited else with_step_timeout(source, step_timeout, role)
    check_positive_int("n_envs", n_envs)
    if isinstance(source, gym.Env):
        if n_envs != 1:
            raise ValueError(
                f"An Env instance cannot be copied into n_envs={n_envs} environments: pass an env id or a "
                "factory (a callable returning a new Env) instead."
            )
        env = source
        for wrapper in wrappers:
            env = wrapper(env)
        checked = CheckedEnv(env, 0, role)
        return LitSyncVectorEnv([lambda: checked], step_timeout, role, autoreset_mode=AutoresetMode.SAME_STEP)
    if not (isinstance(source, str) or callable(source)):
        raise TypeError(
            f"Cannot build an environment from {type(source).__name__}: pass an env id (str), a gymnasium.Env, "
            "a factory returning an Env, or a gymnasium VectorEnv."
        )
    factory = EnvFactory(source, env_kwargs, wrappers, render_mode)
    fns = [_CheckedFactory(factory, i, role, in_worker=vectorization == "async") for i in range(n_envs)]
    if vectorization == "sync":
        return LitSyncVectorEnv(fns, step_timeout, role, autoreset_mode=AutoresetMode.SAME_STEP)
    if vectorization == "async":
        return LitAsyncVectorEnv(fns, step_timeout, role, autoreset_mode=AutoresetMode.SAME_STEP)
    raise ValueError(f"vectorization must be 'sync' or 'async', got {vectorization!r}.")


def make_vector_env_from_fns(
    env_fns: Sequence[Callable[[], gym.Env]],
    vectorization: str = "sync",
    role: str = "",
    context: str | None = None,
) -> VectorEnv:
    """A SAME_STEP vector env with one env per factory in ``env_fns`` (SB3's ``DummyVecEnv``/``SubprocVecEnv``
    take such a list), each checked like those ``make_vector_env`` builds. ``context`` is the
    multiprocessing start method of async workers (None: the platform's default)."""
    if not env_fns:
        raise ValueError("env_fns is empty: pass a list of functions that each return a new gymnasium.Env.")
    in_worker = vectorization == "async"
    fns = [_CheckedFactory(EnvFactory(fn), i, role, in_worker=in_worker) for i, fn in enumerate(env_fns)]
    if vectorization == "sync":
        # No step_timeout: SB3's DummyVecEnv/SubprocVecEnv have none; errors still name the env and step.
        env = LitSyncVectorEnv(fns, None, role, autoreset_mode=AutoresetMode.SAME_STEP)
        if len({id(sub.unwrapped) for sub in env.envs}) != len(env.envs):
            env.close()
            raise ValueError(
                "The environment functions returned the same env instance more than once: each must create a "
                "new env (use `lambda: gym.make(env_id)`, not `lambda: env`)."
            )
        return env
    if vectorization == "async":
        return LitAsyncVectorEnv(fns, None, role, autoreset_mode=AutoresetMode.SAME_STEP, context=context)
    raise ValueError(f"vectorization must be 'sync' or 'async', got {vectorization!r}.")
