"""``RLTrainer``: a ``lightning.Trainer`` whose ``max_steps`` is a budget of environment steps.

Only Lightning's public API is used: the budget is enforced by the algorithm setting
``trainer.should_stop``, evaluation runs through Lightning's own validate/test loops, and everything else
is passed through to ``lightning.Trainer`` unchanged.
"""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import lightning as L
import numpy as np
from lightning.pytorch.accelerators import Accelerator
from lightning.pytorch.callbacks import Callback, ProgressBar
from lightning.pytorch.loggers import Logger, TensorBoardLogger
from lightning.pytorch.profilers import Profiler
from lightning.pytorch.strategies import Strategy

from lit_sb3_core.engine.checkpoint_io import AtomicCheckpointIO, read_checkpoint
from lit_sb3_core.engine.datamodule import RLEnvDataModule, Stage, probe_spaces
from lit_sb3_core.engine.faults import BudgetSpentAtStart, InterruptCheckpoint, diagnose_non_finite
from lit_sb3_core.engine.lightning_internals import set_validation_interval
from lit_sb3_core.engine.progress import RLProgressBar
from lit_sb3_core.engine.protocol import RLModel
from lit_sb3_core.errors import ConfigurationError, LitSb3Error, ModelFileError
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.foundation.files import next_run_id

__all__ = ["RLTrainer"]

EvalResult = list[Mapping[str, Any]]


class _HideAdvertisingTips(logging.Filter):
    """Lightning prints '💡 Tip: try litlogger/litmodels' on every run; RL users need neither."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("💡 Tip")


logging.getLogger("lightning.pytorch.utilities.rank_zero").addFilter(_HideAdvertisingTips())

# Warnings Lightning raises for a datamodule without validation data (normal here: the val env is
# optional) and for a Lightning/torch API deprecation that users cannot act on.
_EXPECTED_WARNINGS = (
    r"Total length of .* across ranks is zero",
    r".*isinstance\(treespec, LeafSpec\)",
    # ModelCheckpoint(every_n_train_steps) with manual optimization: a checkpoint taken after the
    # iteration's updates is exactly the state a resumed run continues from.
    r"Using ModelCheckpoint with manual optimization and every_n_train_steps",
    # Derivative-free algorithms (ARS) write their weights directly and configure no optimizer.
    r"`LightningModule.configure_optimizers` returned `None`",
)


@contextmanager
def _sigint_handler_kept() -> Iterator[None]:
    """Give Ctrl+C its handler back after a Lightning run.

    On Ctrl+C Lightning shuts down gracefully and sets SIGINT to be ignored "for shutdown", never undoing
    it: in a notebook or REPL the next Ctrl+C would do nothing, and every process started afterwards
    inherits the ignored signal.
    """
    import signal
    import threading

    main_thread = threading.current_thread() is threading.main_thread()
    handler = signal.getsignal(signal.SIGINT) if main_thread else None
    try:
        yield
    finally:
        if handler is not None and signal.getsignal(signal.SIGINT) is not handler:
            signal.signal(signal.SIGINT, handler)


@contextmanager
def _expected_warnings_hidden() -> Iterator[None]:
    with warnings.catch_warnings():
        for message in _EXPECTED_WARNINGS:
            warnings.filterwarnings("ignore", message=message)
        yield


def _build_for(model: RLModel, datamodule: RLEnvDataModule) -> None:
    """Build the policy (and normalizers) from a datamodule's training env spaces, if not built yet."""
    if model.policy is None and datamodule.source("fit") is not None:
        model.build_policy(*probe_spaces(datamodule))
    if model.policy is not None:
        model.configure_normalization(datamodule.normalize)


class RLTrainer(L.Trainer):
    """A Lightning Trainer for reinforcement learning.

    Every ``lightning.Trainer`` argument is accepted and passed through (precision, DDP strategies,
    loggers, callbacks, profilers, ...). What differs:

    Args:
        max_steps: the budget in *environment steps*, summed over environments and ranks. Required.
        rl_callback: a Lightning callback (or list) added to ``callbacks``: the place SB3-style callbacks go.
        run_name: name of the default TensorBoard run, ``<default_root_dir>/lightning_logs/<run_name>_<N>``.
        eval_every_n_steps: with a ``val_env`` in the datamodule, evaluate every this many environment
            steps during ``fit`` (rounded to whole iterations) through Lightning's validation loop, logging
            ``val/mean_reward`` & co. Ignored when ``val_check_interval`` is given (Lightning's own
            interval, in iterations). A last evaluation runs when the budget is reached.
        n_eval_episodes: episodes per evaluation during ``fit``.
        log_every_n_steps: iterations between two metric records (SB3's ``log_interval``); default: the
            algorithm's own (1 for PPO, 100 for A2C, as in SB3).
        logger: ``None``/``True`` gives that TensorBoard logger; ``False`` disables logging. Checkpointing
            stays on (Lightning's default ``ModelCheckpoint``): without a logger it writes
            ``<default_root_dir or the current folder>/checkpoints/``; pass ``enable_checkpointing=False``
            (or ``default_root_dir``) too in tests and scripts that should leave no files behind.
        max_epochs, min_epochs, min_steps: rejected; the step budget decides when training ends.
        num_sanity_val_steps: defaults to 0 (a sanity evaluation would cost whole episodes).
        enable_model_summary: defaults to False.
        checkpoint_on_interrupt: on Ctrl+C or SIGTERM during ``fit``, save ``interrupted.ckpt`` beside the
            other checkpoints (``<log_dir>/checkpoints``) to resume from with ``ckpt_path=`` (or ``"last"``).
            ``None`` (default): whenever checkpointing is enabled. Lightning then finalizes the loggers and
            exits with its status; the datamodule closes the envs it built.
        plugins: passed to Lightning. Unless one of them is a ``CheckpointIO`` (or ``strategy`` brings its
            own), :class:`~lit_sb3_core.engine.checkpoint_io.AtomicCheckpointIO` is added: every checkpoint
            is written atomically (a full disk never destroys the previous one) and read with
            ``weights_only=True``, local or remote.
    """

    def __init__(
        self,
        max_steps: int,
        rl_callback: Callback | list[Callback] | None = None,
        run_name: str = "run",
        *,
        eval_every_n_steps: int = 10_000,
        n_eval_episodes: int = 10,
        accelerator: str | Accelerator = "auto",
        strategy: str | Strategy = "auto",
        devices: list[int] | str | int = "auto",
        num_nodes: int = 1,
        precision: Any = None,
        logger: Logger | Iterable[Logger] | bool | None = None,
        callbacks: list[Callback] | Callback | None = None,
        fast_dev_run: int | bool = False,
        max_epochs: int | None = None,
        min_epochs: int | None = None,
        min_steps: int | None = None,
        max_time: str | timedelta | dict[str, int] | None = None,
        limit_train_batches: int | float | None = None,
        limit_val_batches: int | float | None = None,
        limit_test_batches: int | float | None = None,
        limit_predict_batches: int | float | None = None,
        overfit_batches: int | float = 0.0,
        val_check_interval: int | float | str | timedelta | dict[str, int] | None = None,
        check_val_every_n_epoch: int | None = 1,
        num_sanity_val_steps: int | None = 0,
        log_every_n_steps: int | None = None,
        enable_checkpointing: bool | None = None,
        enable_progress_bar: bool | None = None,
        enable_model_summary: bool | None = False,
        accumulate_grad_batches: int = 1,
        gradient_clip_val: int | float | None = None,
        gradient_clip_algorithm: str | None = None,
        deterministic: bool | str | None = None,
        benchmark: bool | None = None,
        inference_mode: bool = True,
        use_distributed_sampler: bool = True,
        profiler: Profiler | str | None = None,
        detect_anomaly: bool = False,
        barebones: bool = False,
        plugins: Any = None,
        sync_batchnorm: bool = False,
        reload_dataloaders_every_n_epochs: int = 0,
        default_root_dir: str | Path | None = None,
        enable_autolog_hparams: bool = True,
        model_registry: str | None = None,
        checkpoint_on_interrupt: bool | None = None,
    ) -> None:
        self._check_budget_args(max_steps, max_epochs, min_epochs, min_steps)
        self._rl_total_timesteps = int(max_steps)
        # The run name becomes a folder name: env ids such as 'module:Env-v0' or 'ns/Env-v0' are not portable.
        run_name = re.sub(r"[^\w.-]+", "-", run_name)
        self._rl_run_name = run_name
        self._rl_last_num_timesteps = 0
        check_positive_int("eval_every_n_steps", eval_every_n_steps)
        check_positive_int("n_eval_episodes", n_eval_episodes)
        self._rl_log_interval = log_every_n_steps
        self._rl_eval_every_n_steps = eval_every_n_steps
        self._rl_n_eval_episodes = n_eval_episodes
        self._rl_val_interval_given = val_check_interval is not None
        self._rl_hparams_logged = False
        root = Path(default_root_dir) if default_root_dir is not None else Path.cwd()
        if logger is None or logger is True:
            log_root = root / "lightning_logs"
            logger = TensorBoardLogger(
                save_dir=str(root),
                name="lightning_logs",
                version=f"{run_name}_{next_run_id(log_root, run_name)}",
                default_hp_metric=False,
            )
        callback_list = _callback_list(callbacks) + _callback_list(rl_callback)
        if enable_progress_bar is not False and not barebones:
            if not any(isinstance(cb, ProgressBar) for cb in callback_list):
                callback_list.append(RLProgressBar())
        if checkpoint_on_interrupt is None:
            checkpoint_on_interrupt = enable_checkpointing is not False and not barebones and not fast_dev_run
        if checkpoint_on_interrupt and not any(isinstance(cb, InterruptCheckpoint) for cb in callback_list):
            callback_list.append(InterruptCheckpoint())
        callback_list.append(BudgetSpentAtStart())
        plugins = _with_atomic_checkpoints(plugins, strategy)
        super().__init__(
            accelerator=accelerator,
            strategy=strategy,
            devices=devices,
            num_nodes=num_nodes,
            precision=precision,
            logger=logger,
            callbacks=callback_list,
            fast_dev_run=fast_dev_run,
            max_epochs=-1,  # epochs are unbounded: the step budget (should_stop) ends the run
            min_epochs=None,
            max_steps=-1,
            min_steps=None,
            max_time=max_time,
            limit_train_batches=limit_train_batches,
            limit_val_batches=limit_val_batches,
            limit_test_batches=limit_test_batches,
            limit_predict_batches=limit_predict_batches,
            overfit_batches=overfit_batches,
            val_check_interval=val_check_interval,
            check_val_every_n_epoch=check_val_every_n_epoch,
            num_sanity_val_steps=num_sanity_val_steps,
            log_every_n_steps=log_every_n_steps,
            enable_checkpointing=enable_checkpointing,
            enable_progress_bar=enable_progress_bar,
            enable_model_summary=enable_model_summary,
            accumulate_grad_batches=accumulate_grad_batches,
            gradient_clip_val=gradient_clip_val,
            gradient_clip_algorithm=gradient_clip_algorithm,
            deterministic=deterministic,  # type: ignore[arg-type]
            benchmark=benchmark,
            inference_mode=inference_mode,
            use_distributed_sampler=use_distributed_sampler,
            profiler=profiler,
            detect_anomaly=detect_anomaly,
            barebones=barebones,
            plugins=plugins,
            sync_batchnorm=sync_batchnorm,
            reload_dataloaders_every_n_epochs=reload_dataloaders_every_n_epochs,
            default_root_dir=default_root_dir,
            enable_autolog_hparams=enable_autolog_hparams,
            model_registry=model_registry,
        )
        _warn_if_cpu_oversubscribed(self)

    @staticmethod
    def _check_budget_args(max_steps: Any, max_epochs: Any, min_epochs: Any, min_steps: Any) -> None:
        check_positive_int(
            "RLTrainer(max_steps=...)", max_steps, hint="It is the number of environment steps to train for."
        )
        rejected = [
            name
            for name, value in (
                ("max_epochs", max_epochs),
                ("min_epochs", min_epochs),
                ("min_steps", min_steps),
            )
            if value is not None
        ]
        if rejected:
            raise ConfigurationError(
                f"RLTrainer does not take {', '.join(rejected)}: in reinforcement learning the run length is "
                "a budget of environment steps, so set max_steps (environment steps) only."
            )

    # budget -------------------------------------------------------------------------------------------
    @property
    def rl_total_timesteps(self) -> int:
        """The environment-step budget (``max_steps``)."""
        return self._rl_total_timesteps

    @property
    def rl_num_timesteps(self) -> int:
        """Environment steps taken so far by the attached algorithm (all ranks)."""
        module = self.lightning_module
        if module is not None and hasattr(module, "num_timesteps"):
            self._rl_last_num_timesteps = int(cast(RLModel, module).num_timesteps)
        return self._rl_last_num_timesteps

    @property
    def rl_progress(self) -> float:
        """Fraction of the budget used, in [0, 1]."""
        return min(1.0, self.rl_num_timesteps / self._rl_total_timesteps)

    def rl_budget_reached_at(self, num_timesteps: int) -> bool:
        """Whether ``num_timesteps`` environment steps (all ranks) spend the budget.

        The one place that decides: the algorithms' loops, their logging and the resume check ask it, so a
        change of rule (say, a budget counted per rank) is made here once.
        """
        return num_timesteps >= self._rl_total_timesteps

    @property
    def rl_budget_reached(self) -> bool:
        """Whether the attached algorithm has spent the budget."""
        return self.rl_budget_reached_at(self.rl_num_timesteps)

    @property
    def rl_log_interval(self) -> int | None:
        """Iterations between metric records, when given as ``log_every_n_steps``."""
        return self._rl_log_interval

    @property
    def run_name(self) -> str:
        return self._rl_run_name

    # stages -------------------------------------------------------------------------------------------
    def fit(  # type: ignore[override]
        self,
        model: L.LightningModule,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        datamodule: RLEnvDataModule | None = None,
        ckpt_path: str | Path | None = None,
        weights_only: bool | None = None,
    ) -> L.LightningModule:
        """Train ``model`` on ``datamodule``'s environments until ``max_steps`` environment steps.

        Returns the model, for chaining.
        """
        _reject_dataloaders("fit", train_dataloaders=train_dataloaders, val_dataloaders=val_dataloaders)
        datamodule = self._resolve_datamodule(model, datamodule, "fit")
        self._schedule_validation(model, datamodule)
        if hasattr(model, "build_policy"):
            # Build in this process, before any launcher starts workers: ddp_spawn hands the trained
            # state dict back to this very model, which must then have the same modules.
            _build_for(cast(RLModel, model), datamodule)
        if ckpt_path == "last":
            ckpt_path = self._find_last_checkpoint() or ckpt_path
        try:
            with (
                _expected_warnings_hidden(),
                _sigint_handler_kept(),
                self._hyperparameters_logged_once(),
                _naming_the_checkpoint(ckpt_path),
            ):
                super().fit(model, datamodule=datamodule, ckpt_path=ckpt_path, weights_only=weights_only)
        except (RuntimeError, ValueError) as exc:
            # Lightning has already run its failure handling (callbacks' on_exception, loggers finalized);
            # only the message changes, for causes that torch reports from deep inside.
            if isinstance(exc, LitSb3Error):
                raise
            explained = diagnose_non_finite(model, exc)
            if explained is not None:
                raise explained from None
            raise
        if hasattr(model, "sync_counters_from_state"):
            cast(
                RLModel, model
            ).sync_counters_from_state()  # ddp_spawn trained copies of the model in other processes
        _destroy_process_group_at_exit()
        _ = self.rl_num_timesteps
        return model

    def validate(  # type: ignore[override]
        self,
        model: L.LightningModule | None = None,
        dataloaders: Any = None,
        ckpt_path: str | Path | None = None,
        verbose: bool = True,
        datamodule: RLEnvDataModule | None = None,
        weights_only: bool | None = None,
        *,
        env: Any = None,
        n_eval_episodes: int = 10,
        deterministic: bool = True,
        render: bool = False,
        reward_threshold: float | None = None,
        return_episode_rewards: bool = False,
        use_masking: bool = False,
    ) -> EvalResult:
        """Evaluate for ``n_eval_episodes`` on the val env; returns ``[{"val/mean_reward": ..., ...}]``."""
        return self._evaluate(
            "validate", model, dataloaders, ckpt_path, verbose, datamodule, weights_only, env,
            n_eval_episodes, deterministic, render, reward_threshold, return_episode_rewards, use_masking,
        )  # fmt: skip

    def test(  # type: ignore[override]
        self,
        model: L.LightningModule | None = None,
        dataloaders: Any = None,
        ckpt_path: str | Path | None = None,
        verbose: bool = True,
        datamodule: RLEnvDataModule | None = None,
        weights_only: bool | None = None,
        *,
        env: Any = None,
        n_eval_episodes: int = 10,
        deterministic: bool = True,
        render: bool = False,
        reward_threshold: float | None = None,
        return_episode_rewards: bool = False,
        use_masking: bool = False,
    ) -> EvalResult:
        """Evaluate for ``n_eval_episodes`` on the test env; returns ``[{"test/mean_reward": ..., ...}]``."""
        return self._evaluate(
            "test", model, dataloaders, ckpt_path, verbose, datamodule, weights_only, env,
            n_eval_episodes, deterministic, render, reward_threshold, return_episode_rewards, use_masking,
        )  # fmt: skip

    def predict(  # type: ignore[override]
        self,
        model: L.LightningModule | None = None,
        dataloaders: Any = None,
        datamodule: RLEnvDataModule | None = None,
        return_predictions: bool | None = None,
        ckpt_path: str | Path | None = None,
        weights_only: bool | None = None,
        *,
        observation: Any = None,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
        env: Any = None,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, Any]:
        """The policy's ``(actions, states)`` for ``observation`` (or for a reset of the predict env)."""
        _reject_dataloaders("predict", dataloaders=dataloaders)
        if return_predictions is False:
            raise ValueError(
                "RLTrainer.predict always returns the predictions; drop return_predictions=False."
            )
        algorithm = self._model_for(model, "predict")
        if ckpt_path is not None:
            checkpoint = read_checkpoint(ckpt_path, weights_only=weights_only)
            with _naming_the_checkpoint(ckpt_path):
                cast(L.LightningModule, algorithm).on_load_checkpoint(
                    checkpoint
                )  # as fit/validate/test check
            algorithm.load_state_dict(checkpoint["state_dict"])
        if observation is None:
            source = env if env is not None else (datamodule.get_env("predict") if datamodule else None)
            if source is None:
                raise ValueError("RLTrainer.predict needs observation=..., or env=/datamodule= to reset one.")
            from lit_sb3_core.envs.make import make_vector_env

            vec_env = make_vector_env(source, 1) if not hasattr(source, "num_envs") else source
            observation, _ = vec_env.reset()
        kwargs = {"action_masks": action_masks} if action_masks is not None else {}
        return algorithm.predict(
            observation, state=state, episode_start=episode_start, deterministic=deterministic, **kwargs
        )

    # helpers ------------------------------------------------------------------------------------------
    @contextmanager
    def _hyperparameters_logged_once(self) -> Iterator[None]:
        """Lightning logs the hyperparameters at the start of every fit/validate/test; a run that trains and
        then evaluates with the same trainer (and loggers) records them once."""
        enabled = self.enable_autolog_hparams
        if self._rl_hparams_logged:
            self.enable_autolog_hparams = False
        try:
            yield
        finally:
            self._rl_hparams_logged = self._rl_hparams_logged or enabled
            self.enable_autolog_hparams = enabled

    def _find_last_checkpoint(self) -> str | None:
        """The newest checkpoint of this run name: ``ckpt_path="last"`` resumes across trainer instances.

        Each RLTrainer logs to a new ``<run_name>_<N>`` folder, where Lightning's own ``"last"`` lookup
        would find nothing; this also searches the run's earlier folders and every ModelCheckpoint dirpath.
        """
        from lightning.pytorch.callbacks import ModelCheckpoint

        folders = [
            Path(cb.dirpath)
            for cb in self.callbacks  # type: ignore[attr-defined]  # set by Lightning's callback connector
            if isinstance(cb, ModelCheckpoint) and cb.dirpath
        ]
        root = Path(self.default_root_dir) / "lightning_logs"
        folders += [run / "checkpoints" for run in root.glob(f"{self._rl_run_name}_*")]
        found = [path for folder in folders if folder.is_dir() for path in folder.glob("*.ckpt")]
        return str(max(found, key=lambda path: path.stat().st_mtime)) if found else None

    def _schedule_validation(self, model: L.LightningModule, datamodule: RLEnvDataModule) -> None:
        """Turn ``eval_every_n_steps`` into Lightning's ``val_check_interval`` (in iterations)."""
        cast(RLModel, model).evaluation_options = {
            "n_eval_episodes": self._rl_n_eval_episodes,
            "deterministic": True,
        }
        if self._rl_val_interval_given or datamodule.sources["validate"] is None:
            return
        steps_per_iteration = getattr(model, "env_steps_per_iteration", lambda n: None)(
            datamodule.n_envs * self.world_size
        )
        set_validation_interval(self, max(1, round(self._rl_eval_every_n_steps / (steps_per_iteration or 1))))

    def _model_for(self, model: L.LightningModule | None, stage: str) -> RLModel:
        resolved = model if model is not None else self.lightning_module
        if resolved is None:
            raise ValueError(f"RLTrainer.{stage}() needs a model: trainer.{stage}(model, ...).")
        if not hasattr(resolved, "predict"):
            raise TypeError(
                f"RLTrainer.{stage}() expects a lit-sb3 algorithm, got {type(resolved).__name__}."
            )
        return cast(RLModel, resolved)

    @staticmethod
    def _resolve_datamodule(model: Any, datamodule: Any, stage: str) -> RLEnvDataModule:
        if datamodule is None:
            source = getattr(model, "env_source", None)
            if source is None:
                raise TypeError(
                    f"RLTrainer.{stage}() needs the environment: pass datamodule=RLEnvDataModule(train_env=...)."
                )
            return source if isinstance(source, RLEnvDataModule) else RLEnvDataModule(train_env=source)
        if not isinstance(datamodule, RLEnvDataModule):
            raise TypeError(
                f"RLTrainer.{stage}() expects an RLEnvDataModule, got {type(datamodule).__name__}: "
                "environments replace datasets in reinforcement learning."
            )
        return datamodule

    def _evaluate(
        self,
        stage: Stage,
        model: L.LightningModule | None,
        dataloaders: Any,
        ckpt_path: str | Path | None,
        verbose: bool,
        datamodule: RLEnvDataModule | None,
        weights_only: bool | None,
        env: Any,
        n_eval_episodes: int,
        deterministic: bool,
        render: bool,
        reward_threshold: float | None,
        return_episode_rewards: bool,
        use_masking: bool,
    ) -> EvalResult:
        _reject_dataloaders(stage, dataloaders=dataloaders)
        check_positive_int("n_eval_episodes", n_eval_episodes)
        algorithm = self._model_for(model, stage)
        if env is not None:
            key = "val_env" if stage == "validate" else "test_env"
            datamodule = RLEnvDataModule(**{key: env}, seed=getattr(datamodule, "seed", None))
        elif datamodule is None:
            datamodule = self._resolve_datamodule(algorithm, getattr(self, "datamodule", None), stage)
        elif not isinstance(datamodule, RLEnvDataModule):
            self._resolve_datamodule(algorithm, datamodule, stage)
        if datamodule.get_env(stage) is None:
            raise ValueError(
                f"RLTrainer.{stage}() found no environment: pass env=... or a datamodule with "
                f"{'val_env' if stage == 'validate' else 'test_env'} (or an env id as train_env)."
            )
        algorithm.evaluation_options = {
            "n_eval_episodes": n_eval_episodes,
            "deterministic": deterministic,
            "render": render,
            "use_masking": use_masking,
        }
        run = super().validate if stage == "validate" else super().test
        with (
            _expected_warnings_hidden(),
            _sigint_handler_kept(),
            self._hyperparameters_logged_once(),
            _naming_the_checkpoint(ckpt_path),
        ):
            # Results are logged against environment steps by the model, so Lightning's own return value
            # (metrics it logged itself) is empty; the model keeps what it measured.
            module = cast(L.LightningModule, algorithm)
            run(module, ckpt_path=ckpt_path, verbose=False, datamodule=datamodule, weights_only=weights_only)
        prefix = "val" if stage == "validate" else "test"
        result = _clean_result(algorithm.last_evaluation, prefix)
        if verbose:
            _print_results(result, "Validation" if stage == "validate" else "Test")
        mean_key = f"{prefix}/mean_reward"
        if reward_threshold is not None and result[mean_key] < reward_threshold:
            raise AssertionError(
                f"Mean reward {result[mean_key]:.2f} is below reward_threshold={reward_threshold:.2f}."
            )
        if return_episode_rewards:
            rewards, lengths = algorithm.last_evaluation_episodes
            result[f"{prefix}/episode_rewards"] = [float(r) for r in rewards]
            result[f"{prefix}/episode_lengths"] = [int(n) for n in lengths]
        return [result]


def _print_results(result: Mapping[str, Any], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{title} results")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in result.items():
        table.add_row(key, f"{value:.2f}" if isinstance(value, float) else str(value))
    Console().print(table)


def _destroy_process_group_at_exit() -> None:
    """Tear the process group down when the interpreter exits, once per process.

    Left alive, gloo's worker threads are destroyed with the interpreter and abort the process
    ("terminate called without an active exception", exit status -6) after a successful DDP run.
    """
    import atexit
    import multiprocessing
    import multiprocessing.util

    import torch.distributed as dist

    if (
        dist.is_available()
        and dist.is_initialized()
        and not getattr(_destroy_process_group_at_exit, "done", False)
    ):
        _destroy_process_group_at_exit.done = True  # type: ignore[attr-defined]

        def destroy() -> None:
            if dist.is_initialized():
                dist.destroy_process_group()

        if multiprocessing.parent_process() is not None:
            # A ddp_spawn rank: multiprocessing children leave through os._exit, which skips atexit, but
            # they run multiprocessing's finalizers first.
            multiprocessing.util.Finalize(None, destroy, exitpriority=100)
        else:
            atexit.register(destroy)


def _clean_result(result: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    cleaned = {key: float(value) for key, value in result.items()}
    count_key = f"{prefix}/n_eval_episodes"
    if count_key in cleaned:
        cleaned[count_key] = int(cleaned[count_key])
    return cleaned


def _callback_list(callbacks: Any) -> list[Callback]:
    if callbacks is None:
        return []
    items = list(callbacks) if isinstance(callbacks, (list, tuple)) else [callbacks]
    for item in items:
        if not isinstance(item, Callback):
            raise TypeError(
                f"Callbacks must be lightning.pytorch.callbacks.Callback instances, got {type(item).__name__}."
            )
    return items


def _reject_dataloaders(stage: str, **given: Any) -> None:
    passed = [name for name, value in given.items() if value is not None]
    if passed:
        raise TypeError(
            f"RLTrainer.{stage}() does not take {', '.join(passed)}: reinforcement learning data comes from "
            "environments. Pass datamodule=RLEnvDataModule(...) (or env=... for evaluation)."
        )


@contextmanager
def _naming_the_checkpoint(ckpt_path: Any) -> Iterator[None]:
    """A ``ModelFileError`` raised while restoring ``ckpt_path`` (by the model's on_load_checkpoint, which
    does not know the file) starts with the file, as every other refusal of a checkpoint does."""
    try:
        yield
    except ModelFileError as exc:
        if exc.path is not None or ckpt_path is None:
            raise
        raise ModelFileError(f"{str(ckpt_path)!r}: {exc}", path=ckpt_path, field=exc.field) from None


def _with_atomic_checkpoints(plugins: Any, strategy: Any) -> Any:
    """``plugins`` plus :class:`AtomicCheckpointIO`, unless a CheckpointIO is chosen already."""
    from lightning.fabric.plugins import CheckpointIO

    given = [] if plugins is None else list(plugins) if isinstance(plugins, (list, tuple)) else [plugins]
    if any(isinstance(plugin, CheckpointIO) for plugin in given):
        return plugins
    if isinstance(strategy, Strategy) and getattr(strategy, "_checkpoint_io", None) is not None:
        return plugins
    return [*given, AtomicCheckpointIO()]


def _warn_if_cpu_oversubscribed(trainer: L.Trainer) -> None:
    """``devices=8`` on a 2-core machine starts 8 processes that share 2 cores: say so."""
    import os

    from lightning.pytorch.accelerators import CPUAccelerator

    if not isinstance(trainer.accelerator, CPUAccelerator):
        return
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    processes = trainer.num_devices
    if processes > cores:
        warnings.warn(
            f"RLTrainer(devices={processes}) on CPU starts {processes} training processes, but this machine "
            f"has {cores} CPU core(s) for them: they will share the cores and run slower than "
            f"devices={cores}. Pass devices={cores} (or fewer), or run on a machine with more cores.",
            UserWarning,
            stacklevel=3,
        )
