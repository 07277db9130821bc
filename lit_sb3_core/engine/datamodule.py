"""``RLEnvDataModule``: the LightningDataModule that serves environments instead of datasets."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator, Sequence
from typing import Any, Literal

import lightning as L
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from lit_sb3_core.data.normalization import parse_normalize
from lit_sb3_core.envs.atari import AtariPreset, atari_env_kwargs, parse_atari, require_atari
from lit_sb3_core.envs.episodes import (
    RecordInnerEpisodeStatistics,
    RecordSameStepEpisodeStatistics,
    has_episode_recorder,
    records_episodes,
)
from lit_sb3_core.envs.guards import CheckFinite
from lit_sb3_core.envs.make import EnvFactory, EnvSource, WrapperLike, make_vector_env
from lit_sb3_core.envs.vector_envs import DEFAULT_STEP_TIMEOUT_S, check_step_timeout
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.sb3.vec_env_views import find_vec_wrapper

Stage = Literal["fit", "validate", "test", "predict"]

__all__ = ["RLEnvDataModule", "env_spaces", "probe_spaces"]

_log = logging.getLogger(__name__)

# How many finished training episodes the rollout statistics average over (SB3's ep_info_buffer).
EPISODE_STATS_WINDOW = 100
# Eval envs are seeded apart from training envs, so evaluation episodes differ from training ones.
EVAL_SEED_OFFSET = 10_000
# Seconds async workers get to finish a pending step when a failed or interrupted run closes them.
_CLOSE_TIMEOUT_S = 5.0


class _IterationStream:
    """The training "dataloader": one item per algorithm iteration, without end.

    The algorithm collects its own data from the environment inside ``training_step``; Lightning only needs
    something to iterate. The run ends when the algorithm sets ``trainer.should_stop`` at the step budget.
    """

    def __iter__(self) -> Iterator[int]:
        return itertools.count()


class RLEnvDataModule(L.LightningDataModule):
    """Environments for each stage of a run, built on gymnasium's vector API.

    Args:
        train_env: environment to train on: an env id (``"CartPole-v1"``), a ``gymnasium.Env``, a factory
            returning a new Env, or a ``VectorEnv`` built with ``autoreset_mode=SAME_STEP``.
        val_env: environment for periodic evaluation during ``fit`` and ``trainer.validate``.
            Defaults to a fresh copy of ``train_env`` when that is an id or a factory.
        test_env: environment for ``trainer.test`` (same default).
        predict_env: environment ``trainer.predict`` takes an observation from when none is given.
        n_envs: parallel training environments per process.
        vectorization: ``"sync"`` (in-process, best for fast envs), ``"async"`` (one process per env) or
            ``"envpool"`` (envpool's C++ pool, for the ids envpool has: classic control, MuJoCo, Atari with
            ``atari=True``; the ``envpool`` extra). envpool keeps the SAME_STEP semantics of the others
            (``lit_sb3_core.envs.envpool_env``); ``env_kwargs`` are then envpool's config keys and
            ``wrappers`` are refused. Evaluation envs are always gymnasium's.
        env_kwargs: keyword arguments for ``gymnasium.make`` or the factory.
        wrappers: callables applied to each single env (``gymnasium.Wrapper`` classes work).
        seed: base seed; training env ``i`` on rank ``r`` is seeded ``seed + r * n_envs + i``. ``None``
            uses the algorithm's ``seed``.
        n_eval_envs: parallel environments for evaluation stages.
        normalize: normalize observations and/or rewards as SB3's VecNormalize does: ``True`` (both),
            ``"observation"``, ``"reward"`` or a dict of options (see ``lit_sb3_core.data.normalization``). The
            statistics belong to the algorithm: they are saved with it and applied, frozen, in ``predict``
            and evaluation.
        check_finite: check every step's observations, rewards and actions for NaN and infinity, and stop
            with a ``NonFiniteError`` naming the env index and the action (SB3's ``VecCheckNan``). Off by
            default: it costs an ``np.isfinite`` per array per step. Every env's first ``reset`` and
            ``step`` are always checked against the Gymnasium API and its observation space.
        atari: preprocess Atari games as SB3's ``make_atari_env`` + ``VecFrameStack(4)`` do: ``True`` for
            SB3's defaults (no-op reset, frame skip 4 with max-pooling, a lost life ends the training
            episode, FIRE on reset, 84×84 grayscale, rewards clipped to their sign, the last 4 frames
            stacked channel-first as ``4×84×84`` uint8), or a dict of ``AtariWrapper`` options plus
            ``frame_stack`` (``{"terminal_on_life_loss": False}``). Every stage gets the same wrappers, as
            in SB3; returns and evaluations count whole games with their unclipped scores (the recorder
            sits on the raw game, where SB3 puts ``Monitor``). ``ALE/*-v5`` ids are made with
            ``frameskip=1`` (the wrapper skips and max-pools) and keep their sticky actions. Applied
            before ``wrappers``. Needs the ``atari`` extra.
        step_timeout: seconds one vector ``step`` or ``reset`` may take before the env counts as hung and
            the run stops with an ``EnvTimeoutError`` naming the env, the call and the step (async:
            gymnasium's own timeout, the workers are terminated; sync: a watchdog thread interrupts the
            main thread with ``SIGALRM``); a gymnasium ``SyncVectorEnv``/``AsyncVectorEnv`` you built gets it
            too (``StepTimeout``), SB3 VecEnvs over lit-sb3's vector envs as well. Default ten minutes
            (``DEFAULT_STEP_TIMEOUT_S``): far beyond a healthy step, even a slow simulator's; ``None`` waits
            forever. Not applied to
            ``vectorization="envpool"``'s training env: its envs are envpool's own C++ simulators, which
            run none of your Python code and step in envpool's threads (nothing a watchdog could
            interrupt, and no worker process to lose); its evaluation envs (gymnasium sync) get it.
    """

    def __init__(
        self,
        train_env: EnvSource | None = None,
        val_env: EnvSource | None = None,
        test_env: EnvSource | None = None,
        predict_env: EnvSource | None = None,
        n_envs: int = 1,
        vectorization: Literal["sync", "async", "envpool"] = "sync",
        env_kwargs: dict[str, Any] | None = None,
        wrappers: Sequence[WrapperLike] | None = None,
        seed: int | None = None,
        n_eval_envs: int = 1,
        normalize: bool | str | dict[str, Any] = False,
        check_finite: bool = False,
        atari: bool | dict[str, Any] = False,
        step_timeout: float | None = DEFAULT_STEP_TIMEOUT_S,
    ) -> None:
        super().__init__()
        check_positive_int("n_envs", n_envs)
        check_positive_int("n_eval_envs", n_eval_envs)
        if vectorization not in ("sync", "async", "envpool"):
            raise ConfigurationError(
                f"vectorization must be 'sync', 'async' or 'envpool', got {vectorization!r}."
            )
        self.sources: dict[str, EnvSource | None] = {
            "fit": train_env,
            "validate": val_env,
            "test": test_env,
            "predict": predict_env,
        }
        self.n_envs = n_envs
        self.n_eval_envs = n_eval_envs
        self.vectorization = vectorization
        self.env_kwargs = dict(env_kwargs or {})
        self.wrappers = list(wrappers or [])
        self.seed = seed
        self.normalize = parse_normalize(normalize)
        if self.normalize is not None and find_vec_wrapper(train_env, "VecNormalize") is not None:
            raise ConfigurationError(
                "train_env is wrapped in SB3's VecNormalize, which already normalizes what the env returns; "
                "normalize= would normalize it a second time. Drop one of the two."
            )
        self.check_finite = bool(check_finite)
        self.atari = parse_atari(atari)
        self.step_timeout = check_step_timeout(step_timeout)
        self._envs: dict[Stage, VectorEnv] = {}

    def __repr__(self) -> str:
        """The env sources and vectorization (Lightning's default lists dataloaders, which this has none of)."""
        names = {"fit": "train", "validate": "val", "test": "test", "predict": "predict"}
        envs = "".join(f"{names[stage]}_env={source!r}, " for stage, source in self.sources.items() if source)
        return f"{type(self).__name__}({envs}n_envs={self.n_envs}, vectorization={self.vectorization!r})"

    __str__ = __repr__

    # environments ---------------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        trainer = self.trainer
        return int(trainer.global_rank) if trainer is not None else 0

    def source(self, stage: Stage) -> EnvSource | None:
        """What the env of ``stage`` is built from; evaluation stages fall back to a copy of train_env."""
        explicit = self.sources[stage]
        if explicit is not None or stage == "fit":
            return explicit
        fallback = self.sources["validate"] if stage in ("test", "predict") else None
        if fallback is not None:
            return fallback
        train = self.sources["fit"]
        return (
            train
            if isinstance(train, str) or (callable(train) and not isinstance(train, VectorEnv))
            else None
        )

    def get_env(self, stage: Stage) -> VectorEnv | None:
        """The vector env for ``stage``, built on first use; None when the stage has no environment."""
        if stage not in self.sources:
            raise ValueError(f"Unknown stage {stage!r}: use one of {sorted(self.sources)}.")
        if stage in self._envs:
            return self._envs[stage]
        source = self.source(stage)
        if source is None:
            return None
        env_kwargs, wrappers = self.env_recipe(source)
        if stage == "fit" and self.vectorization == "envpool":
            env = self._envpool_env(source)
        elif stage == "fit":
            env = make_vector_env(
                source,
                self.n_envs,
                self.vectorization,
                env_kwargs,
                wrappers,
                role="training",
                step_timeout=self.step_timeout,
            )
        if stage == "fit":
            if self.check_finite:
                env = CheckFinite(env, role="training")
            # Episode statistics come from recorders inside the sub-envs when there are any (Atari's sit
            # below the life-loss wrapper); otherwise the vector env's episodes are counted.
            # An env that records already (another model's get_env(), a VectorEnv wrapped by the user) keeps
            # its recorder: a second one would clash over info["episode"]. SAME_STEP envs (every env built
            # here) get a recorder with fewer numpy calls per step.
            if not has_episode_recorder(env):
                stats: type[RecordEpisodeStatistics] = RecordEpisodeStatistics
                if records_episodes(env):
                    stats = RecordInnerEpisodeStatistics
                elif env.metadata.get("autoreset_mode") == AutoresetMode.SAME_STEP:
                    stats = RecordSameStepEpisodeStatistics
                env = stats(env, buffer_length=EPISODE_STATS_WINDOW)
        else:
            n_envs = self.n_eval_envs if not isinstance(source, VectorEnv) else source.num_envs
            env = make_vector_env(
                source,
                n_envs,
                "sync",
                env_kwargs,
                wrappers,
                role="evaluation",
                step_timeout=self.step_timeout,
            )
            if self.check_finite:
                env = CheckFinite(env, role="evaluation")
        self._envs[stage] = env
        return env

    def _envpool_env(self, source: EnvSource) -> VectorEnv:
        from lit_sb3_core.envs.envpool_env import EnvpoolVectorEnv

        if not isinstance(source, str):
            raise ConfigurationError(
                f"vectorization='envpool' builds envs from an env id, got {type(source).__name__}: pass "
                "train_env='CartPole-v1' (an id envpool has) or use vectorization='sync'."
            )
        if self.wrappers:
            raise ConfigurationError(
                "vectorization='envpool' cannot apply single-env wrappers (its envs live in C++): drop wrappers= "
                "or use vectorization='sync'/'async'."
            )
        seed = self.env_seed("fit", None) or 0
        return EnvpoolVectorEnv(source, self.n_envs, seed=seed, atari=self.atari, env_kwargs=self.env_kwargs)

    def env_recipe(self, source: EnvSource) -> tuple[dict[str, Any], list[WrapperLike]]:
        """The ``gym.make`` kwargs and single-env wrappers for ``source`` (Atari preprocessing first).

        With ``vectorization="envpool"`` the ``env_kwargs`` are envpool's config keys: the gymnasium envs
        beside the pool (the spaces probe, evaluation) get only the one both understand, ``max_episode_steps``.
        """
        base = self.env_kwargs
        if self.vectorization == "envpool":
            base = {k: v for k, v in self.env_kwargs.items() if k == "max_episode_steps"}
        if self.atari is None:
            return base, self.wrappers
        if isinstance(source, VectorEnv):
            raise ConfigurationError(
                "atari=True wraps the single envs RLEnvDataModule builds; it cannot wrap a VectorEnv you built. "
                "Pass the env id (or a factory) instead, or apply lit_sb3_core.envs.atari.AtariPreset yourself."
            )
        env_kwargs = base
        if isinstance(source, str):
            require_atari()
            env_kwargs = atari_env_kwargs(source, base, self.atari["frame_skip"])
        return env_kwargs, [AtariPreset(**self.atari), *self.wrappers]

    def env_seed(self, stage: Stage, default: int | None) -> int | None:
        """Seed for the first reset of ``stage``'s env on this rank (``None``: unseeded)."""
        base = self.seed if self.seed is not None else default
        if base is None:
            return None
        offset = 0 if stage == "fit" else EVAL_SEED_OFFSET
        n_envs = self.n_envs if stage == "fit" else self.n_eval_envs
        return int(base) + offset + self.rank * n_envs

    def close(self) -> None:
        """Close every environment this datamodule built."""
        for env in self._envs.values():
            env.close()
        self._envs.clear()

    def on_exception(self, exception: BaseException) -> None:
        """A run failed or was interrupted: close the envs built from ids and factories (async workers
        included) so no process or window outlives it. Env and VectorEnv instances the caller passed in
        stay open: the caller owns them (and may want to inspect them). The next run builds fresh envs."""
        for stage, env in list(self._envs.items()):
            if not _is_factory(self.source(stage)):
                continue
            del self._envs[stage]
            try:
                # Async workers get a few seconds to finish a pending step and close their env; then they
                # are terminated (a hung env must not hang the shutdown).
                env.close(timeout=_CLOSE_TIMEOUT_S)
            except BaseException:
                try:
                    env.close(terminate=True)
                except BaseException as exc:
                    _log.debug("Could not close the %s env after a failed run: %s", stage, exc)

    # LightningDataModule hooks --------------------------------------------------------------------
    def setup(self, stage: str) -> None:
        if stage == "fit" and self.get_env("fit") is None:
            raise ValueError(
                "RLEnvDataModule has no train_env: pass train_env='CartPole-v1' (an env id, Env, factory or "
                "VectorEnv) to train."
            )

    def train_dataloader(self) -> _IterationStream:
        return _IterationStream()

    def val_dataloader(self) -> list[int]:
        # Validation during fit runs only when a val_env was given explicitly.
        return [0] if self.sources["validate"] is not None or self._stage_requested("validate") else []

    def test_dataloader(self) -> list[int]:
        return [0]

    def predict_dataloader(self) -> list[int]:
        return [0]

    def _stage_requested(self, stage: str) -> bool:
        trainer = self.trainer
        return trainer is not None and trainer.state.fn == stage


def _is_factory(source: Any) -> bool:
    """An env id or a callable that builds new envs (not an Env or VectorEnv instance)."""
    import gymnasium as gym

    return isinstance(source, str) or (callable(source) and not isinstance(source, (gym.Env, VectorEnv)))


def probe_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
    """The (single-env) observation and action spaces of an env source: an id or factory is built once,
    with a datamodule's kwargs and wrappers (they may change the spaces), read and closed."""
    env_kwargs: dict[str, Any] = {}
    wrappers: list[Any] = []
    if isinstance(env, RLEnvDataModule):
        source = env.source("fit")
        if isinstance(source, str) or callable(source):
            env_kwargs, wrappers = env.env_recipe(source)
        env = source
    if isinstance(env, str) or (callable(env) and not hasattr(env, "observation_space")):
        probe = EnvFactory(env, env_kwargs, wrappers)()
        try:
            return env_spaces(probe)
        finally:
            probe.close()
    return env_spaces(env)


def env_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
    """The single-env observation and action spaces of an Env or VectorEnv."""
    if isinstance(env, VectorEnv):
        return env.single_observation_space, env.single_action_space
    return env.observation_space, env.action_space
