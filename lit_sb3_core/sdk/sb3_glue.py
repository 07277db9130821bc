"""SB3's ``learn``/``save``/``load`` surface over Lightning: ``learn`` builds an RLEnvDataModule and an
RLTrainer and calls ``fit``; ``save``/``load`` write and read model files (``engine/model_file.py``)."""

from __future__ import annotations

import copy
import logging
import re
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

import gymnasium as gym
import numpy as np
import torch

from lit_sb3_core.engine.lightning_internals import attached_trainer, ended_by_ctrl_c
from lit_sb3_core.envs.make import renders_rgb_arrays
from lit_sb3_core.errors import EnvCountError
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.sb3.monitor import monitored
from lit_sb3_core.sdk.kept_optimizers import kept_optimizers
from lit_sb3_core.sdk.part import AlgorithmPart

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Self

    from lit_sb3_core.engine.datamodule import RLEnvDataModule
    from lit_sb3_core.engine.protocol import RLModel

__all__ = ["SB3Glue", "quiet_lightning", "swapped_env"]


class SB3Glue(AlgorithmPart):
    """RLAlgorithm's ``learn``, ``get_env``/``set_env``, parameters, ``save`` and ``load``."""

    def learn(
        self,
        total_timesteps: int,
        env: Any = None,
        callback: Any = None,
        log_interval: int | None = None,
        tb_log_name: str | None = None,
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
        n_envs: int | None = None,
    ) -> Self:
        """SB3's ``learn``: build an RLEnvDataModule and an RLTrainer and ``fit``. Returns ``self``.

        ``n_envs`` (lit-sb3 only) trains on that many copies of ``env`` when it is an id or factory.
        """
        from lit_sb3_core.engine.trainer import RLTrainer

        total_timesteps = check_positive_int("total_timesteps", total_timesteps)
        datamodule = self._learn_run(env, reset_num_timesteps, n_envs)
        run_name = tb_log_name or type(self).__name__
        log_dir = self.hparams.get("tensorboard_log")
        custom_logger = self._sb3_logger.custom
        if custom_logger is not None:  # set_logger replaces tensorboard_log, as in SB3
            loggers: Any = custom_logger.lightning_loggers() or False
            log_dir = custom_logger.get_dir()
        elif log_dir:
            loggers = [_tensorboard_run(log_dir, run_name, reset_num_timesteps)]
        else:
            loggers = False
        callbacks = _as_lightning_callbacks(callback)
        with quiet_lightning(self.verbose):
            trainer = RLTrainer(
                max_steps=int(self.num_timesteps + total_timesteps),
                run_name=run_name,
                accelerator=_accelerator(self.hparams.get("device", "auto")),
                devices=1,
                logger=loggers,
                default_root_dir=log_dir,
                callbacks=callbacks,
                enable_checkpointing=False,
                enable_progress_bar=progress_bar,
                enable_model_summary=False,
                log_every_n_steps=log_interval,
            )
            with _keyboard_interrupt_reraised(trainer):
                trainer.fit(self, datamodule=datamodule)
        self._keep_train_record()
        return self

    def _learn_run(self, env: Any, reset_num_timesteps: bool, n_envs: int | None) -> RLEnvDataModule:
        """What ``learn`` trains on (its datamodule), and the counters reset unless the run continues."""
        if env is not None:
            if self.vector_env is not None and self._is_training_env(env):
                # get_env() may be the training env in VecTransposeImage: train on the env itself.
                from lit_sb3_core.sb3.vec_env_views import as_sb3_vec_env

                env = as_sb3_vec_env(self.vector_env) if env is not self.vector_env else env
            self.env_source = env
            self._learn_datamodule = None
        if self.env_source is None:
            raise ValueError(
                f"{type(self).__name__}.learn() needs an environment: learn(10_000, env='CartPole-v1'), or "
                "pass env= to the constructor."
            )
        datamodule = self._learn_datamodule
        # The env get_env() handed out (SB3's model.env) is trained on again unless another is asked for.
        reusable = datamodule is not None and n_envs in (None, datamodule.n_envs)
        if datamodule is None or (reset_num_timesteps and not reusable):
            if datamodule is not None and datamodule is not self.env_source:
                datamodule.close()
            datamodule = self._datamodule_for(self.env_source, n_envs or 1)
            self._learn_datamodule = datamodule
        elif reset_num_timesteps:  # a fresh run on the same env: SB3 forgets the episode statistics
            from lit_sb3_core.envs.episodes import EpisodeStatistics

            EpisodeStatistics(datamodule.get_env("fit")).clear()
        if reset_num_timesteps:
            self.num_timesteps = 0
            self.iterations = 0
            self.last_obs = None
            self._clear_success_window()
        return datamodule

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: Any = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> tuple[int, Any]:
        """SB3's ``_setup_learn``, for code that runs SB3's loop itself (``collect_rollouts``).

        Prepares the run ``learn`` would start, without Lightning's trainer: the training env (reset unless
        ``reset_num_timesteps=False`` continues its episodes), the counters, the rollout or replay buffer.
        Returns ``total_timesteps`` (plus the steps done when the run continues) and ``callback`` as one
        ``BaseCallback`` attached to the model (a list becomes a ``CallbackList``, a function a
        ``ConvertCallback``). ``tb_log_name`` is accepted for SB3's signature: ``learn`` opens the loggers.
        """
        from lit_sb3_core.engine.lightning_internals import detached_from_trainer

        total_timesteps = check_positive_int("total_timesteps", total_timesteps)
        sb3_callback = _as_sb3_callback(callback, progress_bar)  # refused before anything changes
        datamodule = self._learn_run(None, reset_num_timesteps, None)
        if not reset_num_timesteps:
            total_timesteps += self.num_timesteps
        self._setup_total_timesteps = total_timesteps
        with detached_from_trainer(self):  # the hooks prepare this run, not the last learn's trainer
            self.setup("fit")
            self.on_fit_start()
        assert self.vector_env is datamodule.get_env("fit")
        sb3_callback.init_callback(self)
        return total_timesteps, sb3_callback

    def _keep_train_record(self) -> None:
        """Leave the last ``train/`` values in ``model.logger.name_to_value`` after ``learn``, as SB3's logger
        holds them (SB3 dumps before training, so what the last update recorded is still there; code reads
        ``train/n_updates`` or ``train/loss`` from it). lit-sb3 writes them out with the final record."""
        algorithm = cast(Any, self)  # a mixin of RLAlgorithm: its logger and metrics
        values = algorithm.logger.name_to_value
        for key, value in algorithm.last_metrics.items():
            if key.startswith("train/") and key not in values:
                values[key] = value

    def _datamodule_for(self, source: Any, n_envs: int) -> RLEnvDataModule:
        from lit_sb3_core.engine.datamodule import RLEnvDataModule

        if isinstance(source, RLEnvDataModule):
            return source
        # As SB3: envs made from an id render RGB arrays when they can (model.env.render() gives frames), and
        # each env made here, or handed over alone, is wrapped in a Monitor (model.env.envs[0] is one).
        env_kwargs = {"render_mode": "rgb_array"} if renders_rgb_arrays(source) else None
        single = isinstance(source, (str, gym.Env)) or callable(source)  # not a VectorEnv or VecEnv
        wrappers = [monitored] if single else None
        return RLEnvDataModule(
            train_env=source, n_envs=n_envs, seed=self.seed, env_kwargs=env_kwargs, wrappers=wrappers
        )

    def get_env(self) -> Any:
        """The training env as SB3's ``VecEnv``: the one passed in (an SB3 VecEnv comes back as itself,
        wrappers included) or a view of the vector env built from an id, Env or factory; ``None`` without
        one. It exists as soon as the model has an env (constructor, ``set_env``, ``load(env=...)``) and is
        the env the next ``learn`` trains on. Algorithms step the gymnasium env underneath (``vector_env``)."""
        from lit_sb3_core.sb3.vec_transpose import sb3_training_env

        env = self.vector_env
        if env is None:
            built = self._learn_datamodule is None and self.env_source is not None
            if built:
                self._learn_datamodule = self._datamodule_for(self.env_source, 1)
            if self._learn_datamodule is not None:
                env = self._learn_datamodule.get_env("fit")
            if built and env is not None:
                # As SB3's constructor seeds model.env: its first reset (before any learn) is the seed's.
                seed = cast("RLEnvDataModule", self._learn_datamodule).env_seed("fit", self.seed)
                if seed is not None:
                    sb3_training_env(env).seed(seed)
        return None if env is None else sb3_training_env(env)

    @property
    def env(self) -> Any:
        """SB3's ``model.env``: ``get_env()``."""
        return self.get_env()

    def set_env(
        self, env: Any, force_reset: bool = True, *, episodes: tuple[Any, np.ndarray] | None = None
    ) -> None:
        """Train on ``env`` from the next ``learn``; its spaces and number of envs must match the model's.

        SB3's semantics: ``force_reset=True`` starts fresh episodes at the next ``learn`` (``_last_obs`` is
        ``None``); ``set_env(model.get_env(), force_reset=False)`` keeps the episodes in flight, and
        ``learn(..., reset_num_timesteps=False)`` continues them. Another env always starts fresh episodes,
        unless ``episodes`` (its last observations and episode starts, what ``load(path, env,
        force_reset=False)`` restores from the file) say where its episodes are.
        """
        if self.policy is not None:
            from lit_sb3_core.engine.datamodule import probe_spaces

            self._check_same_spaces(*probe_spaces(env))
        if self.vector_env is not None:
            count = _num_envs(env)
            if count is not None and count != self.vector_env.num_envs:
                raise EnvCountError(
                    f"set_env got {count} environments, but {type(self).__name__} trains on "
                    f"{self.vector_env.num_envs}: pass as many, or load(path, env=...) to change the count."
                )
        if not self._is_training_env(env):
            self.env_source = env
            self._learn_datamodule = None
            self.vector_env = None
        if force_reset:
            self.last_obs = None
        if episodes is not None:  # what load(path, env, force_reset=False) restores
            self._continue_episodes(*episodes)

    def _continue_episodes(self, last_obs: Any, episode_starts: np.ndarray) -> None:
        """Let the next ``learn`` go on with the env's episodes in flight instead of resetting it: SB3's
        ``load(path, env, force_reset=False)``, where ``last_obs`` is what that env returned last."""
        self.get_env()  # builds the vector env of an env just handed over (load's env=)
        env = self.vector_env
        if env is None and self._learn_datamodule is not None:
            env = self._learn_datamodule.get_env("fit")
        if env is None:
            raise ValueError(
                f"{type(self).__name__} has no env to continue: pass env= with force_reset=False."
            )
        if env.num_envs != len(episode_starts):
            raise EnvCountError(
                f"The saved episodes ran in {len(episode_starts)} environments, but the env has "
                f"{env.num_envs}: load with force_reset=True (the default) to start fresh episodes."
            )
        self.vector_env = env
        self.last_obs = last_obs
        self.last_episode_starts = np.asarray(episode_starts, dtype=bool)

    def _is_training_env(self, env: Any) -> bool:
        """Whether ``env`` is the env training steps (or the SB3 view ``get_env()`` gave of it)."""
        from lit_sb3_core.sb3.vec_env_views import as_sb3_vec_env
        from lit_sb3_core.sb3.vec_transpose import sb3_training_env

        current = self.vector_env
        return current is not None and (
            env is current or env is as_sb3_vec_env(current) or env is sb3_training_env(current)
        )

    def get_parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """State dicts by name: ``policy`` and each optimizer (``optimizer``, ``optimizer_1``...)."""
        params = {"policy": self.require_policy().state_dict()}
        kept = kept_optimizers(self)
        trainer = attached_trainer(self)
        if kept is not None:
            kept.read_names(self)  # an optimizer assigned under its SB3 name is the one saved
            optimizers = kept.optimizers
        else:
            optimizers = list(trainer.optimizers) if trainer is not None else []
        for i, optimizer in enumerate(optimizers):
            params["optimizer" if i == 0 else f"optimizer_{i}"] = optimizer.state_dict()
        return params

    def set_parameters(
        self, params: dict[str, dict[str, Any]] | str | Path, exact_match: bool = True, device: Any = "auto"
    ) -> None:
        """Load ``get_parameters()`` output (or a model file's path): ``policy`` weights and optimizer states.

        As SB3: a name that is not one of ``get_parameters()``'s raises ``ValueError``; with ``exact_match``
        every object must be given and every weight of the policy (``RuntimeError`` from torch otherwise).
        Optimizer states load into the model's optimizers (``model.policy.optimizer`` & co.).
        """
        if isinstance(params, (str, Path)):
            from lit_sb3_core.engine.model_file import read_model_file

            state = read_model_file(params).state
            params = {"policy": {k[len("policy.") :]: v for k, v in state.items() if k.startswith("policy.")}}
        if not isinstance(params, dict):
            raise TypeError(
                f"set_parameters expects a dict of state dicts or a path, got {type(params).__name__}."
            )
        known = list(self.get_parameters())
        unknown = sorted(str(name) for name in params if name != "policy" and not _is_optimizer_key(name))
        if unknown:
            raise ValueError(
                f"set_parameters got invalid object names {unknown}: {type(self).__name__} has {known}."
            )
        missing = [name for name in known if name not in params]
        if exact_match and missing:
            raise ValueError(
                f"set_parameters(exact_match=True) misses {missing}: pass every object of get_parameters() "
                "or exact_match=False."
            )
        if "policy" in params:
            self.require_policy().load_state_dict(params["policy"], strict=exact_match)
        optimizer_states = [params[name] for name in sorted(params, key=_optimizer_index) if name != "policy"]
        if optimizer_states:
            kept = kept_optimizers(
                self
            )  # the model's optimizers (SB3's policy.optimizer): every run steps them
            trainer = attached_trainer(self)
            optimizers = (
                kept.optimizers if kept is not None else trainer.optimizers if trainer is not None else None
            )
            if optimizers is None:
                self.pending_optimizer_states = [copy.deepcopy(s) for s in optimizer_states]
            for optimizer, optimizer_state in zip(optimizers or [], optimizer_states):
                optimizer.load_state_dict(optimizer_state)

    def save(
        self,
        path: str | Path | IO[bytes],
        exclude: Iterable[str] | None = None,
        include: Iterable[str] | None = None,
    ) -> None:
        """Write a model file: JSON metadata + safetensors weights, atomically (see ``lit_sb3.load``).

        ``exclude``/``include`` are SB3's: hyperparameters to leave out (a load gives them their defaults)
        and ones to write with the model's current attribute value (``model.verbose = 2``), even if excluded.
        """
        from lit_sb3_core.engine.model_file import save_model

        save_model(cast("RLModel", self), path, exclude=exclude, include=include)

    @classmethod
    def load(
        cls,
        path: str | Path | IO[bytes],
        env: Any = None,
        device: str = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs: Any,
    ) -> Self:
        """Load a model file written by ``save``, or by Stable-Baselines3 / sb3-contrib; never unpickles.

        SB3's signature and semantics: ``custom_objects`` replace stored values, ``kwargs`` change
        hyperparameters, ``env`` is checked against the stored spaces and becomes the training env.
        """
        from lit_sb3_core.engine.model_file import load_model

        return cast(
            "Self",
            load_model(
                path,
                env=env,
                expected_cls=cast("type[RLModel]", cls),
                device=device,
                custom_objects=custom_objects,
                print_system_info=print_system_info,
                force_reset=force_reset,
                **kwargs,
            ),
        )


def _tensorboard_run(tensorboard_log: str, run_name: str, reset_num_timesteps: bool) -> Any:
    """Lightning's TensorBoardLogger writing where SB3 does: ``<tensorboard_log>/<tb_log_name>_<N>``, a new
    ``N`` per run; ``reset_num_timesteps=False`` goes on writing in the latest run's folder."""
    from lightning.pytorch.loggers import TensorBoardLogger

    from lit_sb3_core.sb3.logger import tensorboard_run_name

    version = tensorboard_run_name(tensorboard_log, run_name, reset_num_timesteps)
    return TensorBoardLogger(save_dir=str(tensorboard_log), name="", version=version, default_hp_metric=False)


_OPTIMIZER_KEY = re.compile(r"optimizer(_[0-9]+)?")


def _is_optimizer_key(name: Any) -> bool:
    """``optimizer``, ``optimizer_1``, ...: the names ``get_parameters`` gives optimizer states."""
    return isinstance(name, str) and _OPTIMIZER_KEY.fullmatch(name) is not None


def _optimizer_index(name: str) -> int:
    return 0 if name in ("policy", "optimizer") else int(name.rsplit("_", 1)[1])


def _num_envs(env: Any) -> int | None:
    """How many envs ``env`` runs: a VecEnv's or VectorEnv's count, 1 for an Env, None for an id or factory
    (``learn(n_envs=...)`` decides)."""
    import gymnasium as gym

    if isinstance(env, gym.Env):
        return 1
    count = getattr(env, "num_envs", None)
    return int(count) if isinstance(count, (int, np.integer)) else None


def _accelerator(device: str) -> str:
    mapping = {"auto": "auto", "cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "mps": "mps"}
    key = str(device).split(":")[0].lower()
    if key not in mapping:
        raise ValueError(f"Unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'mps'.")
    if key == "cuda" and not torch.cuda.is_available():
        return "cpu"  # SB3's get_device: "cuda" without a GPU runs on the CPU
    return mapping[key]


def _as_lightning_callbacks(callback: Any) -> list[Any]:
    """SB3's ``callback=`` argument: a callback, a list of them, or a function ``fn(locals, globals)``."""
    from lightning.pytorch.callbacks import Callback

    from lit_sb3_core.sb3.callbacks import (
        FunctionCallback,
        StableBaselines3Callback,
        is_stable_baselines3_callback,
    )

    if callback is None:
        return []
    items = list(callback) if isinstance(callback, (list, tuple)) else [callback]
    converted = []
    for item in items:
        if isinstance(item, Callback):
            converted.append(item)
        elif is_stable_baselines3_callback(item):  # e.g. wandb's WandbCallback
            converted.append(StableBaselines3Callback(item))
        elif callable(item):
            converted.append(FunctionCallback(item))
        else:
            raise TypeError(
                "callback must be a Lightning/lit-sb3 callback, a stable_baselines3 callback, a list of them, or "
                f"a function fn(locals, globals) -> bool; got {type(item).__name__}."
            )
    return converted


def _as_sb3_callback(callback: Any, progress_bar: bool) -> Any:
    """SB3's ``_init_callback``'s conversion: ``callback`` (one, a list, a function or ``None``) as one
    ``BaseCallback``, with a ``ProgressBarCallback`` for ``progress_bar``. Lightning's own callbacks run only
    in a trainer's loop: they are refused with a pointer to ``learn``."""
    from lit_sb3_core.sb3.callbacks import CallbackList, ProgressBarCallback, RLCallback

    callbacks = _as_lightning_callbacks(callback)
    others = [type(item).__name__ for item in callbacks if not isinstance(item, RLCallback)]
    if others:
        raise TypeError(
            f"_setup_learn takes SB3's callbacks (BaseCallback, functions); {', '.join(others)} is a Lightning "
            "callback, which runs in the trainer's loop: pass it to learn(callback=...) instead."
        )
    if progress_bar:
        callbacks.append(ProgressBarCallback())
    if callback is None or isinstance(callback, (list, tuple)) or progress_bar:
        return CallbackList(callbacks)
    return callbacks[0]


@contextmanager
def swapped_env(model: Any, env: Any) -> Iterator[None]:
    """``model.learn`` inside the block trains on ``env``; afterwards the model's own env is back untouched.

    For a ``learn`` that steps other envs for one call (ARS with sb3-contrib's ``AsyncEval``, whose
    workers evaluate the candidates while ``model.env`` stays as it was): unlike ``set_env`` twice, the
    model's env is not rebuilt, keeps its episodes in flight and may have another number of envs.
    """
    saved = (
        model.env_source,
        model._learn_datamodule,
        model.vector_env,
        model.last_obs,
        model.last_episode_starts,
    )
    model.env_source, model._learn_datamodule, model.vector_env, model.last_obs = env, None, None, None
    try:
        yield
    finally:
        (
            model.env_source,
            model._learn_datamodule,
            model.vector_env,
            model.last_obs,
            model.last_episode_starts,
        ) = saved


@contextmanager
def quiet_lightning(verbose: int):
    """Hide Lightning's start-up info lines for ``learn`` unless ``verbose`` asks for them."""
    names = [
        "lightning.pytorch.utilities.rank_zero",
        "lightning.pytorch.accelerators.cuda",
        "lightning.fabric",
    ]
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    if verbose < 1:
        for logger in loggers:
            logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


@contextmanager
def _keyboard_interrupt_reraised(trainer: Any):
    """SB3's ``learn`` lets Ctrl+C through as ``KeyboardInterrupt``; Lightning shuts down gracefully, then
    calls ``sys.exit(1)``. Re-raise the interrupt, so ``except KeyboardInterrupt: model.save(...)`` works as
    with SB3 (RLTrainer gives Ctrl+C its handler back)."""
    try:
        yield
    except SystemExit as exc:
        if ended_by_ctrl_c(exc, trainer):
            raise KeyboardInterrupt from None
        raise
