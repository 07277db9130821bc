"""``RLAlgorithm``: the base class of every algorithm plugin.

How a run maps onto Lightning (read this before writing an algorithm):

* One Lightning *batch* is one algorithm *iteration*. The datamodule's training "dataloader" just counts;
  ``training_step`` collects experience from the environment itself and performs all of the iteration's
  gradient updates with manual optimization (``optimizer_step``, which uses ``manual_backward``,
  ``self.optimizers()`` and ``clip_gradients``), so precision plugins and DDP work and Lightning's loop
  never runs per env step.
* ``RLTrainer(max_steps=N)`` is a budget of *environment* steps. ``num_timesteps`` counts steps over all
  ranks; when it reaches the budget the algorithm sets ``trainer.should_stop``.
* The policy is built from the environment's spaces: in ``__init__`` when an ``env`` is given (as SB3
  does), otherwise in ``setup`` from the datamodule's environment, before ``configure_optimizers``.
* Metrics are aggregated over an iteration and written once, straight to the loggers, with the number of
  environment steps on the x-axis and SB3's names (``rollout/ep_rew_mean``, ``train/loss``, ...).

A subclass sets ``algo_name`` (its registry name), ``policy_aliases`` and the supported spaces, and
implements ``training_step`` (or, for on-policy methods, ``train_on_rollout``).

This module holds what makes an algorithm (its spaces, policy, environments and counters); the other
concerns have a module each, next to this one: helpers the algorithm holds (``self.metrics``,
``self.budget``, ...; with thin delegates where SB3's users call them), or bases of the class where
Lightning or SB3's users reach the methods on the model itself:

========================  =============================================================================
``prediction.py``         ``predict`` and the observation/action conversions around it (``self.prediction``)
``budget.py``             the step budget and progress (``self.budget``), reductions over ranks (``self.ranks``)
``normalizers.py``        observation/reward normalization as the loops apply it (``self.normalizers``)
``optimization.py``       optimizers and ``optimizer_step`` through Lightning's public API
``fast_path.py``          the speed-only shortcuts (plain attributes, recorded train/eval flags, direct steps)
``metric_logging.py``     the metric records: ``self.metrics.log_iteration``, ``should_log``, ``last_metrics``
``sb3/model_logger.py``   SB3's ``logger`` behind ``logger``, ``set_logger``, ``dump_logs`` (a helper)
``evaluation_step.py``    the evaluation episodes behind ``validation_step``/``test_step`` (a helper)
``sb3_glue.py``           SB3's ``learn``, ``get_env``/``set_env``, parameters, ``save``/``load``
``checkpoint_state.py``   what Lightning checkpoints carry besides the weights (functions the hooks call)
``moved_names.py``        the old spellings of the methods that moved onto the helpers (until 0.4)
========================  =============================================================================
"""

from __future__ import annotations

import copy
import inspect
import logging
import random
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

import lightning as L
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from lightning.pytorch.utilities.parsing import AttributeDict

from lit_sb3_core.data.normalization import ObservationNormalizer, RewardNormalizer
from lit_sb3_core.engine.datamodule import env_spaces, probe_spaces
from lit_sb3_core.engine.exporters import DeterministicPolicy, PolicyModule, export_policy
from lit_sb3_core.engine.lightning_internals import attached_trainer, trainer_callbacks
from lit_sb3_core.envs.episodes import EpisodeStatistics
from lit_sb3_core.errors import ConfigurationError, NestedSpaceError, UnknownNameError, UnsupportedSpaceError
from lit_sb3_core.foundation.schedules import Schedule, jsonable_schedules, make_schedule
from lit_sb3_core.foundation.spaces import describe_space, is_image_space
from lit_sb3_core.nets.actor_critic import class_to_string
from lit_sb3_core.registry import registry as _registry
from lit_sb3_core.registry.names import resolve_named_class
from lit_sb3_core.sb3.attributes import SB3Attributes
from lit_sb3_core.sb3.callbacks import RLCallback
from lit_sb3_core.sb3.file_hooks import SB3FileHooks
from lit_sb3_core.sb3.logger import Logger
from lit_sb3_core.sb3.model_logger import ModelLogger
from lit_sb3_core.sb3.vec_env_views import drop_pending_seeds
from lit_sb3_core.sdk.budget import Budget, Ranks
from lit_sb3_core.sdk.checkpoint_state import read_checkpoint_state, write_checkpoint_state
from lit_sb3_core.sdk.compile_choice import CompileChoice, resolve_compile
from lit_sb3_core.sdk.evaluation_step import Evaluation
from lit_sb3_core.sdk.fast_path import FastPath
from lit_sb3_core.sdk.kept_optimizers import keeps_optimizers, load_optimizer_states
from lit_sb3_core.sdk.metric_logging import MetricRecords
from lit_sb3_core.sdk.moved_names import MovedName, warn_on_moved_overrides
from lit_sb3_core.sdk.normalizers import Normalizers
from lit_sb3_core.sdk.optimization import Optimization, clip_grad_norm, make_optimizer
from lit_sb3_core.sdk.prediction import Prediction
from lit_sb3_core.sdk.sb3_glue import SB3Glue
from lit_sb3_core.sdk.step_callbacks import StepCallbacks

if TYPE_CHECKING:
    from lit_sb3_core.engine.datamodule import RLEnvDataModule, Stage
    from lit_sb3_core.engine.protocol import EvaluationOptions
    from lit_sb3_core.engine.trainer import RLTrainer
    from lit_sb3_core.sdk.part import HasPolicy, PolicyT

__all__ = ["RLAlgorithm", "clip_grad_norm", "make_optimizer", "set_random_seed"]

_log = logging.getLogger(__name__)

_STAGES = {"fit": "fit", "validate": "validate", "test": "test", "predict": "predict"}


def _jsonable_policy_kwargs(policy_kwargs: dict[str, Any] | None) -> dict[str, Any] | None:
    """Classes in policy_kwargs become import strings so hyperparameters stay plain JSON values."""
    if policy_kwargs is None:
        return None
    return {key: class_to_string(value) for key, value in policy_kwargs.items()}


class RLAlgorithm(
    FastPath,
    Optimization,
    SB3Glue,
    SB3FileHooks,
    SB3Attributes,
    L.LightningModule,
):
    """The base of every lit-sb3 algorithm: a LightningModule with Stable-Baselines3's surface.

    Args:
        policy: policy alias (``"MlpPolicy"``), import path or ``nn.Module`` class.
        env: optional environment (id, Env, factory or VectorEnv) to build the policy from and to train on
            with ``learn``; with ``RLTrainer.fit`` the datamodule provides it instead.
        learning_rate: number, ``"lin_<start>"`` or callable of ``progress_remaining``.
        policy_kwargs: keyword arguments for the policy class.
        seed: seeds python, numpy and torch before the policy is built, and the environments.
        verbose: 0 silent, 1 prints metrics each iteration and Lightning's info messages.
        device: ``"auto"``, ``"cpu"``, ``"cuda"`` or ``"mps"``: the accelerator ``learn`` uses
            (``RLTrainer(accelerator=...)`` decides for ``fit``).
        tensorboard_log: folder for TensorBoard logs written by ``learn`` (``None``: no logs).

    Attributes a subclass reads and writes (the SDK's names; see docs/sdk.md):
        policy: the policy module (``None`` until the spaces are known; ``require_policy()`` raises then).
        num_timesteps: environment steps so far, over all ranks. iterations: iterations done.
        n_updates: gradient updates so far (logged as ``train/n_updates``).
        progress_remaining: 1 at the start of the budget, 0 at its end; schedules read it.
        vector_env: the gymnasium ``VectorEnv`` being trained on (``None`` outside ``fit``).
        last_obs, last_episode_starts: the training envs' current observations and which of them start
            an episode.
        env_source: what ``learn`` trains on (an id, Env, factory, VectorEnv or RLEnvDataModule).
        evaluation_options, last_evaluation, last_evaluation_episodes: RLTrainer's evaluation settings
            and the last evaluation's metrics and episodes (``engine/protocol.py``).
    """

    algo_name: ClassVar[str] = ""
    policy_aliases: ClassVar[dict[str, Any]] = {}
    # env id -> hyperparameters tuned for it (rl-zoo3's where available); "n_envs", "n_timesteps" and
    # "normalize" are run settings (datamodule/trainer), the rest constructor arguments. Used by the CLI.
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = {}
    # Whether the collection loop calls ``step_callbacks`` after every env step (SB3's callback rhythm);
    # without it, SB3-style callbacks get one ``on_step`` per iteration (see lit_sb3_core.sb3.callbacks).
    dispatches_step_callbacks: ClassVar[bool] = False
    # Iterations between two metric records (SB3's log_interval: 1 for PPO, 100 for A2C). RLTrainer's
    # log_every_n_steps, counted in iterations, overrides it.
    default_log_interval: ClassVar[int] = 1
    # Whether RLEnvDataModule(normalize=...) is honoured (the algorithm calls self.normalizers.obs/.rewards).
    supports_normalization: ClassVar[bool] = False
    # The environment-step budget from which compile="auto" compiles the update (compile_choice.py): about
    # twice the budget where a cold compile has paid for itself, measured per algorithm; None: never.
    compile_pays_after: ClassVar[int | None] = None
    # compile=True / False / "auto" as given (init_compile), why this model's settings cannot compile (None:
    # they can), and whether the current run compiles (decided at each fit start).
    compile_choice: CompileChoice = False
    compile_refusal: str | None = None
    compile_update: bool = False
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (
        spaces.Box,
        spaces.Discrete,
        spaces.MultiDiscrete,
        spaces.MultiBinary,
    )
    supported_observation_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (
        spaces.Box,
        spaces.Discrete,
        spaces.MultiDiscrete,
        spaces.MultiBinary,
        spaces.Dict,
    )

    # The old spellings of the methods that moved onto the helpers (removed in 0.4; see moved_names.py).
    log_iteration = MovedName("metrics.log_iteration")
    should_log = MovedName("metrics.should_log")
    update_progress = MovedName("budget.update_progress")
    budget_reached = MovedName("budget.reached")
    stop_if_budget_reached = MovedName("budget.stop_if_reached")
    all_reduce = MovedName("ranks.all_reduce")
    normalize_obs = MovedName("normalizers.obs")
    normalize_rewards = MovedName("normalizers.rewards")
    batch_observation = MovedName("prediction.batch_observation")
    unbatch_actions = MovedName("prediction.unbatch_actions")
    to_env_actions = MovedName("prediction.to_env_actions")
    step_locals = MovedName("step_callbacks.locals", takes_algorithm=True)
    record_episode_ends = MovedName("_record_episode_ends")
    set_policy_mode = MovedName("_set_policy_mode")

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 3e-4,
        policy_kwargs: dict[str, Any] | None = None,
        seed: int | None = None,
        verbose: int = 0,
        device: str = "auto",
        tensorboard_log: str | None = None,
    ) -> None:
        super().__init__()
        self._sb3_logger = ModelLogger(self)  # helpers the algorithm holds (see the module's docstring)
        self.metrics = MetricRecords(self)
        self.prediction = Prediction(self)
        self.budget = Budget(self)
        self.ranks = Ranks(self)
        self.normalizers = Normalizers(self)
        self._evaluation = Evaluation(self)
        self.save_hyperparameters(ignore=["env"])
        _keep_own_arguments(self.hparams, type(self))
        jsonable_schedules(self.hparams)
        if "policy_kwargs" in self.hparams:  # only for a constructor that takes it (see OffPolicyAlgorithm)
            self.hparams["policy_kwargs"] = _jsonable_policy_kwargs(self.hparams["policy_kwargs"])
        if isinstance(self.hparams.get("policy"), type):
            self.hparams["policy"] = class_to_string(self.hparams["policy"])
        self.automatic_optimization = False
        self.lr_schedule = make_schedule(learning_rate, "learning_rate")
        self.seed = seed
        self.verbose = verbose
        self.policy: torch.nn.Module | None = None
        self.observation_space: spaces.Space | None = None
        self.action_space: spaces.Space | None = None
        self.num_timesteps = 0
        self.iterations = 0
        self.n_updates = 0
        # The counters as a buffer too, written at the end of fit: a buffer travels with the state dict,
        # which is how ddp_spawn hands the trained model back to the launching process.
        self.register_buffer("run_counters", torch.zeros(3, dtype=torch.int64))
        self.progress_remaining = 1.0
        self.env_source = env
        self.vector_env: VectorEnv | None = None
        self.last_obs: Any = None
        self.last_episode_starts: np.ndarray = np.ones(0, dtype=bool)  # set by reset_env
        self.normalization: dict[str, Any] | None = None
        self.obs_normalizer: ObservationNormalizer | None = None
        self.reward_normalizer: RewardNormalizer | None = None
        self.pending_optimizer_states: list[dict[str, Any]] = []  # from a model file, applied at fit start
        # set by RLTrainer before an evaluation loop, and its results (see evaluation_step.py)
        self.evaluation_options: EvaluationOptions | None = None
        self.last_evaluation: dict[str, float] = {}
        self.last_evaluation_episodes: tuple[list[float], list[int]] = ([], [])
        self.start_time = 0  # SB3's: time.time_ns() when the last run started
        self._setup_total_timesteps = 0  # the budget of a run SB3's _setup_learn prepared (sb3_glue.py)
        self.step_callbacks = StepCallbacks()  # the run's SB3-style callbacks, gathered at fit start
        self._learn_datamodule: RLEnvDataModule | None = None  # sb3_glue.py
        self._restored_episode_stats: tuple[list[float], list[int]] = ([], [])  # checkpoint_state.py
        if env is not None:
            self.build_policy(*probe_spaces(env))
        elif isinstance(policy, str) and policy not in self.policy_aliases and not set(policy) & {":", "."}:
            self.policy_class()  # an unknown alias fails here, as in SB3, not when training starts

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        warn_on_moved_overrides(cls)
        # made once per policy and stepped by every fit, as SB3's optimizers (a mixin's definition included)
        hook = "configure_optimizers"
        setattr(cls, hook, keeps_optimizers(getattr(cls, hook)))

    # construction ---------------------------------------------------------------------------------
    @property
    def hparams_initial(self) -> AttributeDict:
        """What Lightning's loggers write (``hparams.yaml``): the saved hyperparameters, as they rebuild the model.

        Lightning's own snapshot is taken inside ``save_hyperparameters``: before RLAlgorithm drops the
        base-class arguments a subclass fixes (TRPO has no ``ent_coef``) and turns classes and noise objects
        into plain values. Written as it was, ``Algo(**yaml.safe_load(hparams.yaml))`` would fail.
        """
        return AttributeDict(copy.deepcopy(dict(self.hparams)))

    def check_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        name = type(self).__name__
        if not isinstance(action_space, self.supported_action_spaces):
            supported = ", ".join(cls.__name__ for cls in self.supported_action_spaces)
            raise UnsupportedSpaceError(
                f"{name} does not support {describe_space(action_space)} actions; it supports {supported}."
            )
        if not isinstance(observation_space, self.supported_observation_spaces):
            supported = ", ".join(cls.__name__ for cls in self.supported_observation_spaces)
            raise UnsupportedSpaceError(
                f"{name} does not support {describe_space(observation_space)} observations; "
                f"it supports {supported}."
            )
        if isinstance(observation_space, spaces.Dict):
            nested = [key for key, sub in observation_space.spaces.items() if isinstance(sub, spaces.Dict)]
            if nested:
                raise NestedSpaceError(
                    f"{name} supports single-level Dict observations only; keys {nested} hold nested Dicts. "
                    "Flatten them with gymnasium.wrappers.FlattenObservation or a custom wrapper."
                )
            leaf_types = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)
            odd = {
                key: describe_space(sub)
                for key, sub in observation_space.spaces.items()
                if not isinstance(sub, leaf_types)
            }
            if odd:
                raise ConfigurationError(
                    f"{name} does not support Dict observations with {odd}; each key must hold a Box, Discrete, "
                    "MultiDiscrete or MultiBinary space. Flatten the others with a custom wrapper."
                )
        if isinstance(action_space, spaces.Box) and not (
            np.all(np.isfinite(action_space.low)) and np.all(np.isfinite(action_space.high))
        ):
            _log.warning("%s: the action space %s is unbounded; actions are not clipped.", name, action_space)

    def _check_same_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        """Spaces equal to the model's; images count in either layout (``get_env()`` of a model trained on
        channel-last images is that env in ``VecTransposeImage``, and policies take both layouts)."""
        from lit_sb3_core.foundation.spaces import channels_first_space

        same_obs = observation_space == self.observation_space or (
            self.observation_space is not None
            and channels_first_space(observation_space) == channels_first_space(self.observation_space)
        )
        if not same_obs or action_space != self.action_space:
            raise ValueError(
                f"The environment's spaces do not match the model's: the model was built for observations "
                f"{describe_space(self.observation_space)} and actions {describe_space(self.action_space)}, "
                f"the environment has {describe_space(observation_space)} and {describe_space(action_space)}."
            )

    def policy_class(self) -> type[torch.nn.Module]:
        """Resolve the ``policy`` hyperparameter: an alias of this algorithm, a registered alias, or the path
        of an allowed class (see :func:`~lit_sb3_core.registry.names.resolve_named_class`)."""
        policy = self.hparams.get("policy", "MlpPolicy")
        if isinstance(policy, str) and not set(policy) & {":", "."} and policy not in self.policy_aliases:
            if not self.algo_name or _registry.get_policy_class(self.algo_name, policy) is None:
                registered = _registry.list_policies(self.algo_name) if self.algo_name else []
                known = sorted({*self.policy_aliases, *registered})
                raise UnknownNameError(f"{type(self).__name__} policy", policy, known)
        return resolve_named_class(
            "policy",
            policy,
            field="policy",
            base=torch.nn.Module,
            algo=self.algo_name,
            extra=self.policy_aliases,
        )

    def build_policy(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        """Create the policy (and whatever else depends on the spaces) once the spaces are known."""
        self.check_spaces(observation_space, action_space)
        if self.seed is not None:
            set_random_seed(self.seed)
        self.observation_space, self.action_space = observation_space, action_space
        if self.seed is not None:
            action_space.seed(
                self.seed
            )  # as SB3: the model's own samples (DQN's predict) repeat with the seed
        kwargs = {k: v for k, v in (self.hparams.get("policy_kwargs") or {}).items()}
        policy_cls = self.policy_class()
        if "lr_schedule" in inspect.signature(policy_cls).parameters:
            kwargs.setdefault("lr_schedule", self.lr_schedule)  # a policy written SB3's way takes it
        self.policy = self.make_policy(policy_cls, kwargs)
        self.setup_model()
        self._make_optimizers()

    def _make_optimizers(self) -> None:
        """The optimizers, made with the policy as SB3 makes them (``model.policy.optimizer`` exists from now on).

        An override of ``configure_optimizers`` that needs what its constructor sets after ``super().__init__``
        cannot run yet: its optimizers are then made when training starts, as Lightning makes them.
        """
        try:
            self.configure_optimizers()
        except AttributeError:
            return

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """Instantiate the policy; override to pass algorithm-specific arguments."""
        return policy_cls(self.observation_space, self.action_space, **policy_kwargs)

    def setup_model(self) -> None:
        """Hook called after the policy is built (target networks, extra modules...)."""

    @property
    def is_built(self) -> bool:
        return self.policy is not None

    def require_policy(self: HasPolicy[PolicyT]) -> PolicyT:
        """The policy, typed as the algorithm declares it, or an error that says how to build it."""
        if self.policy is None:
            raise RuntimeError(
                f"{type(self).__name__} has no policy yet: its spaces come from an environment. Pass env= to "
                "the constructor, call learn(..., env=...), or fit it with an RLEnvDataModule first."
            )
        return self.policy

    # model files ----------------------------------------------------------------------------------
    def extra_state(self) -> dict[str, Any]:
        """State of the algorithm outside its tensors that ``save`` writes into the model file (as JSON).

        Override it with ``load_extra_state`` for what a loaded model must continue with that is neither a
        hyperparameter nor a tensor: a phase counter, a curriculum stage. Return plain JSON values (tensors
        belong in the module, ``register_buffer``, and are saved with the weights). Lightning checkpoints
        carry state through ``on_save_checkpoint``/``on_load_checkpoint`` instead.
        """
        return {}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        """Take back what ``extra_state`` returned; called by ``load`` after the weights and counters.

        ``state`` is empty for a file saved before the algorithm had extra state: keep your defaults then.
        """

    # evaluation through Lightning's loops (the helper self._evaluation) ------------------------------
    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation.run("val", "validate")

    def test_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation.run("test", "test")

    # predict (the helper self.prediction) and metrics and SB3's logger (self.metrics, self._sb3_logger)
    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch, as numpy; returns ``(actions, state)`` like SB3."""
        return self.prediction.predict(observation, state, episode_start, deterministic)

    @property
    def log_interval(self) -> int:
        """Iterations between metric records: RLTrainer(log_every_n_steps=...) or ``default_log_interval``."""
        return self.metrics.log_interval

    @property
    def last_metrics(self) -> dict[str, float]:
        """The most recent metric record (``rollout/ep_rew_mean``, ``train/loss``, ...), as logged."""
        return dict(self.metrics.last)

    @property
    def logger(self) -> Any:  # SB3's Logger (typed Any: it replaces LightningModule's logger property)
        """SB3's logger: ``record``, ``record_mean``, ``dump``; Lightning's logger attributes forwarded."""
        return self._sb3_logger.logger

    def set_logger(self, logger: Logger) -> None:
        """Log to ``logger`` (e.g. ``configure(folder, ["stdout", "csv", "tensorboard"])``) from now on; it
        replaces ``tensorboard_log`` and ``verbose``'s printing, as in SB3."""
        self._sb3_logger.set_logger(logger)

    def dump_logs(self, print_them: bool = False) -> bool:
        """Write the latest metrics again now (SB3's ``dump_logs``; ``LogEveryNTimesteps`` calls it).

        ``print_them`` also prints them as SB3's table when the logger does not print already.
        Returns whether there was anything to write.
        """
        return self._sb3_logger.dump_logs(dict(self.metrics.last), self.num_timesteps, print_them)

    # export (the engine writes the graph: lit_sb3_core.engine.exporters) ---------------------------
    def export(self, path: str | Path, format: str = "onnx", opset: int | None = None) -> Path:
        """Write the deterministic policy as a standalone graph: raw observations in, env actions out.

        ``format`` is ``"onnx"``, ``"torchscript"`` or ``"torch-export"``; observation normalization, image
        scaling, action rescaling/clipping and argmax are part of the graph, so its outputs equal
        ``predict(obs, deterministic=True)``. See ``lit_sb3_core.engine.exporters``. Returns the path.
        """
        self.require_policy()
        return export_policy(self, path, format, opset)

    def export_policy_module(self) -> PolicyModule:
        """The module ``export`` writes: override when the policy needs more than observations.

        The default is ``policy.predict_actions(obs, deterministic=True)`` on a copy of the policy in eval
        mode. An algorithm whose policy takes extra inputs (RecurrentPPO's LSTM state, MaskablePPO's masks)
        or whose ``prediction.to_env_actions`` differs returns its own ``PolicyModule``: a module
        ``forward(obs, *extra) -> actions | (actions, *extra_outputs)`` with example extra inputs.
        """
        policy = copy.deepcopy(self.require_policy()).cpu().eval()
        return PolicyModule(DeterministicPolicy(policy))

    # Lightning checkpoints (checkpoint_state.py) ----------------------------------------------------
    @classmethod
    def load_from_checkpoint(
        cls,
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        strict: bool | None = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """Lightning's ``load_from_checkpoint``, reading through lit-sb3's checkpoint reader: local or remote,
        always ``weights_only=True`` unless you pass ``False`` for a file you trust; an unsafe, damaged or
        tampered checkpoint raises ``ModelFileError`` naming the file and the field."""
        from lit_sb3_core.engine.checkpoint_io import load_algorithm_checkpoint

        return load_algorithm_checkpoint(
            cls, checkpoint_path, map_location, hparams_file, strict, weights_only=weights_only, **kwargs
        )

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        write_checkpoint_state(self, checkpoint)

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        read_checkpoint_state(self, checkpoint)

    def on_train_end(self) -> None:
        # The counters as a buffer too: a buffer travels with the state dict (ddp_spawn's way back).
        self.run_counters.copy_(torch.tensor([self.num_timesteps, self.iterations, self.n_updates]))
        super().on_train_end()

    def sync_counters_from_state(self) -> None:
        """Take the counters from ``run_counters`` when a process that trained wrote them there."""
        num_timesteps, iterations, n_updates = (int(v) for v in self.run_counters.tolist())
        if num_timesteps > self.num_timesteps:
            self.num_timesteps, self.iterations, self.n_updates = num_timesteps, iterations, n_updates

    # environments and normalization ---------------------------------------------------------------
    @property
    def datamodule(self) -> RLEnvDataModule:
        from lit_sb3_core.engine.datamodule import RLEnvDataModule

        trainer = attached_trainer(self)
        # Outside a Trainer, the run SB3's _setup_learn prepares: learn's datamodule.
        datamodule = getattr(trainer, "datamodule", None) if trainer is not None else self._learn_datamodule
        if not isinstance(datamodule, RLEnvDataModule):
            raise TypeError(
                f"{type(self).__name__} gets its environments from an RLEnvDataModule: "
                "trainer.fit(model, datamodule=RLEnvDataModule(train_env=...))."
            )
        return datamodule

    def setup(self, stage: str) -> None:
        env = self.datamodule.get_env(cast("Stage", _STAGES.get(stage, stage)))
        if env is None:
            if self.policy is None:
                raise ValueError(f"No environment for stage {stage!r} and the model has no policy yet.")
            return
        observation_space, action_space = env_spaces(env)
        if self.policy is None:
            self.build_policy(observation_space, action_space)
        else:
            self._check_same_spaces(observation_space, action_space)
        if stage == "fit":
            self.configure_normalization(self.datamodule.normalize)

    def configure_normalization(self, config: dict[str, Any] | None) -> None:
        """Attach observation/reward normalizers for ``config`` (see ``lit_sb3_core.data.normalization``)."""
        if config is None or self.normalization == config:
            return
        if self.normalization is not None:
            raise ConfigurationError(
                f"This model was trained with normalize={self.normalization}; it cannot switch to {config}."
            )
        if not self.supports_normalization:
            raise ConfigurationError(
                f"{type(self).__name__} does not support RLEnvDataModule(normalize=...) yet; drop normalize or "
                "normalize with a gymnasium wrapper in RLEnvDataModule(wrappers=[...])."
            )
        space = self.observation_space
        if config["observation"]:
            if not isinstance(space, spaces.Box) or is_image_space(space):
                raise ConfigurationError(
                    f"Observation normalization needs vector Box observations, not {describe_space(space)}; "
                    "use normalize='reward' or normalize images with normalize_images in policy_kwargs."
                )
            self.obs_normalizer = ObservationNormalizer(space.shape, config["clip_obs"], config["epsilon"])
        if config["reward"]:
            gamma = config["gamma"] if config["gamma"] is not None else getattr(self, "gamma", 0.99)
            self.reward_normalizer = RewardNormalizer(gamma, config["clip_reward"], config["epsilon"])
        self.normalization = dict(config)

    def on_fit_start(self) -> None:
        from lit_sb3_core.engine.trainer import RLTrainer, _destroy_process_group_at_exit

        _destroy_process_group_at_exit()  # in every rank, ddp_spawn's included (RLTrainer.fit runs in none)

        # No Trainer: SB3's _setup_learn prepares a run for its own loop (collect_rollouts), as learn would.
        trainer = attached_trainer(self)
        if trainer is not None and not isinstance(trainer, RLTrainer):
            raise TypeError(
                f"{type(self).__name__} must be trained with lit_sb3.RLTrainer (max_steps counts environment "
                f"steps there), not {type(trainer).__name__}."
            )
        self.compile_update = resolve_compile(self)  # compile="auto" decides from this run's budget
        datamodule = self.datamodule
        env = datamodule.get_env("fit")
        if env is not self.vector_env or self.last_obs is None:
            # A new environment (or a resumed run) starts fresh episodes; learn(reset_num_timesteps=False)
            # on the same environment continues the episodes in flight, as SB3 does.
            self.vector_env = env
            seed = datamodule.env_seed("fit", self.seed)
            if seed is not None and self.num_timesteps > 0:
                seed += self.num_timesteps  # a resumed run does not replay the first episodes
            self.reset_env(seed)
        returns, lengths = self._restored_episode_stats
        EpisodeStatistics(self.vector_env, self.stats_window_size).extend(returns, lengths)
        self._restored_episode_stats = ([], [])
        self.metrics.start_window()
        if self.pending_optimizer_states and trainer is not None:  # applied to the optimizers this run steps
            load_optimizer_states(self, trainer.optimizers, self.pending_optimizer_states)
            self.pending_optimizer_states = []
        callbacks = trainer_callbacks(trainer) if trainer is not None else []
        self.step_callbacks = StepCallbacks(cb for cb in callbacks if isinstance(cb, RLCallback))
        self._sb3_logger.refresh_outputs()
        self.start_time = time.time_ns()  # SB3's start_time (wall clock, ns)

    def reset_env(self, seed: int | None) -> None:
        """Start fresh episodes in every training env (also after resuming from a checkpoint)."""
        assert self.vector_env is not None
        self.last_obs, _ = self.vector_env.reset(seed=seed)
        drop_pending_seeds(self.vector_env)
        if seed is not None:
            self.vector_env.action_space.seed(seed)
        self.last_episode_starts = np.ones((self.vector_env.num_envs,), dtype=bool)

    # counters, budget and ranks -------------------------------------------------------------------
    @property
    def n_envs(self) -> int:
        return self.vector_env.num_envs if self.vector_env is not None else 1

    def _source_n_envs(self) -> int:
        """How many envs the env handed over (``env_source``) steps at once, before any is built: SB3 checks
        the settings that depend on it in the constructor. 1 for an id, Env or factory (``learn`` runs one
        copy unless given ``n_envs``)."""
        source = self.env_source
        count = getattr(source, "num_envs", None)  # a VectorEnv or SB3 VecEnv
        if count is None:
            count = getattr(source, "n_envs", None)  # an RLEnvDataModule
        return int(count) if isinstance(count, (int, np.integer)) and not isinstance(count, bool) else 1

    @property
    def world_size(self) -> int:
        trainer = attached_trainer(self)
        return int(trainer.world_size) if trainer is not None else 1

    @property
    def total_timesteps(self) -> int:
        """The run's step budget: the Trainer's, or outside one the total ``_setup_learn`` returned."""
        trainer = attached_trainer(self)
        if trainer is None:
            return self._setup_total_timesteps
        return int(cast("RLTrainer", trainer).rl_total_timesteps)

    def env_steps_per_iteration(self, n_envs: int) -> int | None:
        """Environment steps one iteration takes with ``n_envs`` envs in total (None: it varies).

        RLTrainer uses it to turn ``eval_every_n_steps`` into Lightning's ``val_check_interval``.
        """
        return None


def set_random_seed(seed: int) -> None:
    """Seed python, numpy and torch (what SB3's ``set_random_seed`` does)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _keep_own_arguments(hparams: Any, cls: type[Any]) -> None:
    """Drop saved arguments of base classes that ``cls.__init__`` does not take (they would break loading).

    ``save_hyperparameters`` records the arguments of every ``__init__`` in the chain; an algorithm that
    fixes a base-class argument (TRPO has no ``ent_coef``) must not get it back as a keyword on ``load``.
    """
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    for name in [key for key in hparams if key not in parameters]:
        del hparams[name]
