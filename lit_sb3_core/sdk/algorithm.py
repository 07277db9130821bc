"""Base classes for algorithm plugins: ``RLAlgorithm`` and ``OnPolicyAlgorithm``.

How a run maps onto Lightning (read this before writing an algorithm):

* One Lightning *batch* is one algorithm *iteration*. The datamodule's training "dataloader" just counts;
  ``training_step`` collects experience from the environment itself and performs all of the iteration's
  gradient updates with manual optimization (``manual_backward``, ``self.optimizers()``,
  ``clip_gradients``), so precision plugins and DDP work and Lightning's loop never runs per env step.
* ``RLTrainer(max_steps=N)`` is a budget of *environment* steps. ``num_timesteps`` counts steps over all
  ranks; when it reaches the budget the algorithm sets ``trainer.should_stop``.
* The policy is built from the environment's spaces: in ``__init__`` when an ``env`` is given (as SB3
  does), otherwise in ``setup`` from the datamodule's environment, before ``configure_optimizers``.
* Metrics are aggregated over an iteration and written once, straight to the loggers, with the number of
  environment steps on the x-axis and SB3's names (``rollout/ep_rew_mean``, ``train/loss``, ...).

A subclass sets ``algo_name`` (its registry name), ``policy_aliases`` and the supported spaces, and
implements ``training_step`` (or, for on-policy methods, ``train_on_rollout``).
"""

from __future__ import annotations

import functools
import inspect
import logging
import random
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import lightning as L
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import VectorEnv

from lit_sb3_core.data.normalization import ObservationNormalizer, RewardNormalizer
from lit_sb3_core.engine.progress import print_metrics
from lit_sb3_core.errors import ConfigurationError, ModelFileError, UnknownNameError
from lit_sb3_core.foundation.rng import capture_rng_state, restore_rng_state
from lit_sb3_core.foundation.schedules import Schedule, checked_schedule, make_schedule
from lit_sb3_core.foundation.spaces import (
    describe_space,
    is_image_space,
    obs_to_tensor,
    space_from_json,
    space_to_json,
    to_numpy,
)
from lit_sb3_core.nets.actor_critic import class_to_string, resolve_subclass

if TYPE_CHECKING:
    from lit_sb3_core.engine.datamodule import RLEnvDataModule

__all__ = ["RLAlgorithm", "make_optimizer", "set_random_seed"]

_log = logging.getLogger(__name__)


def _jsonable_policy_kwargs(policy_kwargs: dict[str, Any] | None) -> dict[str, Any] | None:
    """Classes in policy_kwargs become import strings so hyperparameters stay plain JSON values."""
    if policy_kwargs is None:
        return None
    return {key: class_to_string(value) for key, value in policy_kwargs.items()}


def _env_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
    if isinstance(env, VectorEnv):
        return env.single_observation_space, env.single_action_space
    return env.observation_space, env.action_space


class RLAlgorithm(L.LightningModule):
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
    """

    algo_name: ClassVar[str] = ""
    policy_aliases: ClassVar[dict[str, Any]] = {}
    # env id -> hyperparameters tuned for it (rl-zoo3's where available); "n_envs", "n_timesteps" and
    # "normalize" are run settings (datamodule/trainer), the rest constructor arguments. Used by the CLI.
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = {}
    # Iterations between two metric records (SB3's log_interval: 1 for PPO, 100 for A2C). RLTrainer's
    # log_every_n_steps, counted in iterations, overrides it.
    default_log_interval: ClassVar[int] = 1
    # Under DDP, whether optimizer_step averages the gradients itself (backward under ``no_sync``, then
    # one all-reduce of the stepped optimizer's gradients) instead of DDP's reducer. DDP's reducer expects
    # one backward over every parameter per forward; algorithms that run several backward passes per
    # batch, each over part of the module (SAC: the temperature, the critics, the actor through the
    # critics), set this.
    average_gradients_itself: ClassVar[bool] = False
    # Attributes that only ever hold plain values and change every environment step (or every Lightning
    # hook call, ``_current_fx_name``). ``nn.Module.__setattr__`` spends ~3 us checking whether a value is a
    # Parameter, Module or buffer; these skip that check. Subclasses add theirs.
    plain_attributes: ClassVar[frozenset[str]] = frozenset(
        {
            "num_timesteps",
            "_last_obs",
            "_last_episode_starts",
            "_progress_remaining",
            "_n_updates",
            "iterations",
            "_current_fx_name",
        }
    )
    # Whether RLEnvDataModule(normalize=...) is honoured (the algorithm calls normalize_obs/normalize_rewards).
    supports_normalization: ClassVar[bool] = False
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
        self.save_hyperparameters(ignore=["env"])
        _keep_own_arguments(self.hparams, type(self))
        self.hparams["policy_kwargs"] = _jsonable_policy_kwargs(self.hparams.get("policy_kwargs"))
        if isinstance(self.hparams.get("policy"), type):
            self.hparams["policy"] = class_to_string(self.hparams["policy"])
        self.automatic_optimization = False
        self.lr_schedule = checked_schedule(make_schedule(learning_rate, "learning_rate"), "learning_rate")
        self.seed = seed
        self.verbose = verbose
        self.policy: torch.nn.Module | None = None
        self.observation_space: spaces.Space | None = None
        self.action_space: spaces.Space | None = None
        self.num_timesteps = 0
        self.iterations = 0
        self._n_updates = 0
        # The counters as a buffer too, written at the end of fit: a buffer travels with the state dict,
        # which is how ddp_spawn hands the trained model back to the launching process.
        self.register_buffer("run_counters", torch.zeros(3, dtype=torch.int64))
        self._progress_remaining = 1.0
        self._env_source = env
        self._env: VectorEnv | None = None
        self._learn_datamodule: RLEnvDataModule | None = None
        self._last_metrics: dict[str, float] = {}
        self._fit_start_time = 0.0
        self._fit_start_timesteps = 0
        self._ep_info_window: Any = None
        self._ep_rew_monitored = False
        self._seeded_eval_envs: list[VectorEnv] = []
        self._last_obs: Any = None
        self._last_episode_starts: np.ndarray | None = None
        self._restored_episode_stats: tuple[list[float], list[int]] = ([], [])
        self.normalization: dict[str, Any] | None = None
        self.obs_normalizer: ObservationNormalizer | None = None
        self.reward_normalizer: RewardNormalizer | None = None
        self._pending_optimizer_states: list[dict[str, Any]] = []  # from a model file, applied at fit start
        self._mode_flags: dict[bool, list[tuple[torch.nn.Module, bool]]] = {}  # see on_train_start
        self._plain_steps = False  # see _lightning_steps_are_plain
        if env is not None:
            self._build(*self._probe_spaces(env))
        elif isinstance(policy, str) and policy not in self.policy_aliases and not set(policy) & {":", "."}:
            self.policy_class()  # an unknown alias fails here, as in SB3, not when training starts

    # construction ---------------------------------------------------------------------------------
    @staticmethod
    def _probe_spaces(env: Any) -> tuple[spaces.Space, spaces.Space]:
        from lit_sb3_core.engine.datamodule import RLEnvDataModule
        from lit_sb3_core.engine.envs import EnvFactory

        env_kwargs: dict[str, Any] = {}
        wrappers: list[Any] = []
        if isinstance(env, RLEnvDataModule):
            # The probe is built as the datamodule builds its envs: wrappers may change the spaces.
            env_kwargs, wrappers = env.env_kwargs, env.wrappers
            env = env.source("fit")
        if isinstance(env, str) or (callable(env) and not hasattr(env, "observation_space")):
            probe = EnvFactory(env, env_kwargs, wrappers)()
            try:
                return _env_spaces(probe)
            finally:
                probe.close()
        return _env_spaces(env)

    def _check_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        name = type(self).__name__
        if not isinstance(action_space, self.supported_action_spaces):
            supported = ", ".join(cls.__name__ for cls in self.supported_action_spaces)
            raise ConfigurationError(
                f"{name} does not support {describe_space(action_space)} actions; it supports {supported}."
            )
        if not isinstance(observation_space, self.supported_observation_spaces):
            supported = ", ".join(cls.__name__ for cls in self.supported_observation_spaces)
            raise ConfigurationError(
                f"{name} does not support {describe_space(observation_space)} observations; "
                f"it supports {supported}."
            )
        if isinstance(observation_space, spaces.Dict):
            nested = [key for key, sub in observation_space.spaces.items() if isinstance(sub, spaces.Dict)]
            if nested:
                raise ConfigurationError(
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

    def policy_class(self) -> type[torch.nn.Module]:
        """Resolve the ``policy`` hyperparameter: an alias of this algorithm, a registered alias, or a path."""
        policy = self.hparams.get("policy", "MlpPolicy")
        if not isinstance(policy, str):
            return policy
        if policy in self.policy_aliases:
            return resolve_subclass(self.policy_aliases[policy], torch.nn.Module, "policy", "'MlpPolicy'")
        from lit_sb3_core.registry import registry as _registry

        registered = _registry.get_policy_class(self.algo_name, policy) if self.algo_name else None
        if registered is not None:
            return registered
        if ":" in policy or "." in policy:
            example = "'MlpPolicy' or 'my_package.policies:MyPolicy'"
            return resolve_subclass(policy, torch.nn.Module, "policy", example)
        known = sorted(set(self.policy_aliases) | set(_registry.list_policies(self.algo_name)))
        raise UnknownNameError(
            f"{type(self).__name__} policy",
            policy,
            known,  # an import path 'pkg.module:Class' works too
        )

    def _build(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        """Create the policy (and whatever else depends on the spaces) once the spaces are known."""
        self._check_spaces(observation_space, action_space)
        if self.seed is not None:
            set_random_seed(self.seed)
        self.observation_space, self.action_space = observation_space, action_space
        kwargs = {k: v for k, v in (self.hparams.get("policy_kwargs") or {}).items()}
        self.policy = self.make_policy(self.policy_class(), kwargs)
        self._setup_model()

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """Instantiate the policy; override to pass algorithm-specific arguments."""
        return policy_cls(self.observation_space, self.action_space, **policy_kwargs)

    def _setup_model(self) -> None:
        """Hook called after the policy is built (target networks, extra modules...)."""

    @property
    def is_built(self) -> bool:
        return self.policy is not None

    def _require_policy(self) -> torch.nn.Module:
        if self.policy is None:
            raise RuntimeError(
                f"{type(self).__name__} has no policy yet: its spaces come from an environment. Pass env= to "
                "the constructor, call learn(..., env=...), or fit it with an RLEnvDataModule first."
            )
        return self.policy

    # Lightning hooks ------------------------------------------------------------------------------
    @property
    def datamodule(self) -> RLEnvDataModule:
        from lit_sb3_core.engine.datamodule import RLEnvDataModule

        datamodule = getattr(self.trainer, "datamodule", None)
        if not isinstance(datamodule, RLEnvDataModule):
            raise TypeError(
                f"{type(self).__name__} gets its environments from an RLEnvDataModule: "
                "trainer.fit(model, datamodule=RLEnvDataModule(train_env=...))."
            )
        return datamodule

    def setup(self, stage: str) -> None:
        env = self.datamodule.get_env(_STAGES.get(stage, stage))  # type: ignore[arg-type]
        if env is None:
            if self.policy is None:
                raise ValueError(f"No environment for stage {stage!r} and the model has no policy yet.")
            return
        observation_space, action_space = _env_spaces(env)
        if self.policy is None:
            self._build(observation_space, action_space)
        else:
            self._check_same_spaces(observation_space, action_space)
        if stage == "fit":
            self.configure_normalization(self.datamodule.normalize)

    def build_for(self, datamodule: RLEnvDataModule) -> None:
        """Build the policy (and normalizers) from a datamodule's training env spaces, if not built yet."""
        if self.policy is None and datamodule.source("fit") is not None:
            self._build(*self._probe_spaces(datamodule))
        if self.policy is not None:
            self.configure_normalization(datamodule.normalize)

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

    def normalize_obs(self, obs: Any, update: bool = False) -> Any:
        """Normalized observations (raw ones without observation normalization); ``update`` learns stats."""
        return obs if self.obs_normalizer is None else self.obs_normalizer(obs, update)

    def normalize_rewards(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        """Rewards scaled by the running return std (unchanged without reward normalization)."""
        return rewards if self.reward_normalizer is None else self.reward_normalizer(rewards, dones)

    def _check_same_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        if observation_space != self.observation_space or action_space != self.action_space:
            raise ValueError(
                f"The environment's spaces do not match the model's: the model was built for observations "
                f"{describe_space(self.observation_space)} and actions {describe_space(self.action_space)}, "
                f"the environment has {describe_space(observation_space)} and {describe_space(action_space)}."
            )

    def configure_optimizers(self) -> torch.optim.Optimizer:
        policy = self._require_policy()
        optimizer_class = getattr(policy, "optimizer_class", torch.optim.Adam)
        optimizer_kwargs = getattr(policy, "optimizer_kwargs", {})
        return make_optimizer(optimizer_class, policy.parameters(), self.lr_schedule(1.0), optimizer_kwargs)

    def on_fit_start(self) -> None:
        from lit_sb3_core.engine.trainer import RLTrainer, _destroy_process_group_at_exit

        _destroy_process_group_at_exit()  # in every rank, ddp_spawn's included (RLTrainer.fit runs in none)

        if not isinstance(self.trainer, RLTrainer):
            raise TypeError(
                f"{type(self).__name__} must be trained with lit_sb3.RLTrainer (max_steps counts environment "
                f"steps there), not {type(self.trainer).__name__}."
            )
        datamodule = self.datamodule
        env = datamodule.get_env("fit")
        if env is not self._env or self._last_obs is None:
            # A new environment (or a resumed run) starts fresh episodes; learn(reset_num_timesteps=False)
            # on the same environment continues the episodes in flight, as SB3 does.
            self._env = env
            seed = datamodule.env_seed("fit", self.seed)
            if seed is not None and self.num_timesteps > 0:
                seed += self.num_timesteps  # a resumed run does not replay the first episodes
            self._reset_env(seed)
        self._ep_info_window = getattr(self._env, "return_queue", None)
        returns, lengths = self._restored_episode_stats
        if returns and self._ep_info_window is not None:
            self._env.return_queue.extend(returns)  # type: ignore[union-attr]
            self._env.length_queue.extend(lengths)  # type: ignore[union-attr]
        self._restored_episode_stats = ([], [])
        self._fit_start_time = time.perf_counter()
        self._fit_start_timesteps = self.num_timesteps
        self._ep_rew_monitored = any(
            getattr(callback, "monitor", None) == "rollout/ep_rew_mean" for callback in self.trainer.callbacks
        )
        if self._pending_optimizer_states:
            for optimizer, state in zip(self.trainer.optimizers, self._pending_optimizer_states):
                optimizer.load_state_dict(state)
            self._pending_optimizer_states = []

    def on_train_end(self) -> None:
        self.run_counters.copy_(torch.tensor([self.num_timesteps, self.iterations, self._n_updates]))

    def sync_counters_from_state(self) -> None:
        """Take the counters from ``run_counters`` when a process that trained wrote them there."""
        num_timesteps, iterations, n_updates = (int(v) for v in self.run_counters.tolist())
        if num_timesteps > self.num_timesteps:
            self.num_timesteps, self.iterations, self._n_updates = num_timesteps, iterations, n_updates

    def _reset_env(self, seed: int | None) -> None:
        """Start fresh episodes in every training env (also after resuming from a checkpoint)."""
        assert self._env is not None
        self._last_obs, _ = self._env.reset(seed=seed)
        if seed is not None:
            self._env.action_space.seed(seed)
        self._last_episode_starts = np.ones((self._env.num_envs,), dtype=bool)

    @property
    def n_envs(self) -> int:
        return self._env.num_envs if self._env is not None else 1

    @property
    def world_size(self) -> int:
        trainer = self._trainer
        return int(trainer.world_size) if trainer is not None else 1

    @property
    def total_timesteps(self) -> int:
        return int(self.trainer.rl_total_timesteps)

    def env_steps_per_iteration(self, n_envs: int) -> int | None:
        """Environment steps one iteration takes with ``n_envs`` envs in total (None: it varies).

        RLTrainer uses it to turn ``eval_every_n_steps`` into Lightning's ``val_check_interval``.
        """
        return None

    def update_progress(self) -> None:
        """``progress_remaining`` goes from 1 to 0 over the step budget; schedules read it."""
        total = max(1, self.total_timesteps)
        self._progress_remaining = max(0.0, 1.0 - self.num_timesteps / total)

    def stop_if_budget_reached(self) -> None:
        if self.num_timesteps >= self.total_timesteps:
            self.trainer.should_stop = True

    def update_learning_rate(self, optimizers: Any) -> float:
        """Set every optimizer's learning rate from the schedule; returns the value (logged by SB3)."""
        lr = self.lr_schedule(self._progress_remaining)
        for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
            for group in optimizer.param_groups:
                group["lr"] = lr
        return lr

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.plain_attributes:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def on_train_start(self) -> None:
        # ``nn.Module.train`` walks every submodule through ``__setattr__`` (~10 us for a small policy);
        # collection and updates alternate every iteration (off-policy: every chunk), so record both
        # settings once and replay them. Modules whose forward ignores the mode are left alone.
        policy = self._require_policy()
        mode_free = _mode_free_modules()
        policy.train(False)
        eval_flags = [(m, m.training) for m in policy.modules() if type(m) not in mode_free]
        policy.train(True)
        train_flags = [(m, m.training) for m in policy.modules() if type(m) not in mode_free]
        self._mode_flags = {False: eval_flags, True: train_flags}
        self._plain_steps = self._lightning_steps_are_plain()

    def set_policy_mode(self, training: bool) -> None:
        """``policy.train(training)``, replayed from flags recorded at the start of training."""
        flags = self._mode_flags.get(training)
        if flags is None:  # outside fit (nothing recorded yet)
            self._require_policy().train(training)
            return
        for module, flag in flags:
            object.__setattr__(module, "training", flag)

    # optimization ---------------------------------------------------------------------------------
    def _lightning_steps_are_plain(self) -> bool:
        """True when Lightning's backward/step wrappers would only call default (no-op) hooks.

        That is one device, full 32-bit precision or bf16 autocast (no gradient scaler), no profiler, and no
        callback or module hook around backward and the optimizer step. Then ``optimizer_step`` calls torch
        directly (saving ~100 us per update: a tenth of a DQN step on CartPole, a fifth of a PPO minibatch)
        while keeping Lightning's step counters.
        """
        from lightning.pytorch.callbacks import Callback
        from lightning.pytorch.profilers import PassThroughProfiler
        from lightning.pytorch.strategies import SingleDeviceStrategy
        from lightning.pytorch.utilities.model_helpers import is_overridden

        optimizers = self.optimizers(use_pl_optimizer=True) if self.trainer.optimizers else []
        for optimizer in optimizers if isinstance(optimizers, list) else [optimizers]:
            if not (hasattr(optimizer, "_on_before_step") and hasattr(optimizer, "_on_after_step")):
                return False  # a Lightning release without these step-counter hooks: take the public path
        trainer = self.trainer
        if type(trainer.strategy) is not SingleDeviceStrategy or not _precision_is_plain(
            trainer.precision_plugin
        ):
            return False
        if not isinstance(trainer.profiler, PassThroughProfiler):
            return False
        hooks = ("on_before_backward", "on_after_backward", "on_before_optimizer_step")
        if any(is_overridden(hook, self, L.LightningModule) for hook in (*hooks, "backward")):
            return False
        return not any(
            is_overridden(hook, callback, Callback) for callback in trainer.callbacks for hook in hooks
        )

    def optimizer_step(
        self,
        optimizer: Any,
        loss: torch.Tensor,
        max_grad_norm: float | None = None,
        inputs: list[torch.Tensor] | None = None,
    ) -> None:
        """Zero, backward (only into ``inputs`` when given), clip by global norm, step.

        Algorithms call this for every gradient step instead of Lightning's optimizer calls. With full
        32-bit precision (or bf16 autocast) the clipping runs as three foreach kernels instead of
        Lightning's ``clip_gradients`` (several times slower on small networks); other precision plugins (AMP, which
        must unscale first) go through Lightning. Where Lightning's wrappers would only call no-op hooks
        (see ``_lightning_steps_are_plain``), backward and step call torch directly.
        """
        if self._plain_steps:
            raw = optimizer.optimizer
            for group in raw.param_groups:  # zero_grad(set_to_none=True) without its profiler record
                for param in group["params"]:
                    param.grad = None
            loss.backward(inputs=inputs)
            if max_grad_norm is not None:
                clip_grad_norm(raw.param_groups, max_grad_norm)
            optimizer._on_before_step()  # Lightning's step counters (trainer.global_step)
            raw.step()
            optimizer._on_after_step()
            return
        optimizer.zero_grad(set_to_none=True)
        ddp_model = self.trainer.strategy.model if self.world_size > 1 else None
        if self.average_gradients_itself and ddp_model is not None and hasattr(ddp_model, "no_sync"):
            with ddp_model.no_sync():
                self.manual_backward(loss, **({} if inputs is None else {"inputs": inputs}))
            self._average_gradients_over_ranks(optimizer)
        elif inputs is None:
            self.manual_backward(loss)
        else:
            self.manual_backward(loss, inputs=inputs)
        if max_grad_norm is not None:
            if _precision_is_plain(self.trainer.precision_plugin):
                clip_grad_norm(optimizer.param_groups, max_grad_norm)
            else:
                self.clip_gradients(
                    optimizer, gradient_clip_val=max_grad_norm, gradient_clip_algorithm="norm"
                )
        optimizer.step()

    def _average_gradients_over_ranks(self, optimizer: Any) -> None:
        """Replace the gradients ``optimizer`` steps with their mean over all ranks (one all-reduce).

        Which parameters have a gradient depends only on the code path, so it is the same on every rank.
        """
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if not grads:
            return
        flat = torch.cat([grad.reshape(-1) for grad in grads])
        torch.distributed.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for grad in grads:
            grad.copy_(flat[offset : offset + grad.numel()].view_as(grad))
            offset += grad.numel()

    # logging --------------------------------------------------------------------------------------
    @property
    def log_interval(self) -> int:
        """Iterations between metric records: RLTrainer(log_every_n_steps=...) or the algorithm's default."""
        chosen = getattr(self._trainer, "rl_log_interval", None)
        return max(1, int(chosen if chosen is not None else self.default_log_interval))

    def should_log(self) -> bool:
        """Whether this iteration writes metrics: every ``log_interval`` iterations and at the budget."""
        return self.iterations % self.log_interval == 0 or self.num_timesteps >= self.total_timesteps

    def log_iteration(self, metrics: dict[str, float] | None = None) -> None:
        """Write one iteration's metrics to the loggers, the progress bar and (if verbose) the console.

        Call it every iteration; it records only on ``should_log()`` iterations, so pass metrics that are
        cheap to build or build them only when ``should_log()`` is true.
        """
        if not self.should_log():
            return
        elapsed = max(time.perf_counter() - self._fit_start_time, 1e-9)
        fps = int((self.num_timesteps - self._fit_start_timesteps) / elapsed)
        record: dict[str, float] = {}
        episodes = self._recent_episode_means()
        if episodes is not None:
            record["rollout/ep_rew_mean"], record["rollout/ep_len_mean"] = episodes
        record.update(
            {
                "time/fps": fps,
                "time/iterations": self.iterations,
                "time/time_elapsed": int(elapsed),
                "time/total_timesteps": self.num_timesteps,
            }
        )
        record.update(metrics or {})
        self._last_metrics = record
        for logger in self.loggers:
            logger.log_metrics(record, step=self.num_timesteps)
        if "rollout/ep_rew_mean" in record and self._ep_rew_monitored:
            # Through Lightning too, for ModelCheckpoint/EarlyStopping(monitor="rollout/ep_rew_mean"); only
            # when one watches it, since self.log costs about a millisecond.
            self.log("rollout/ep_rew_mean", record["rollout/ep_rew_mean"], logger=False, batch_size=1)
        if self.verbose >= 1:
            print_metrics(record)

    def _recent_episode_means(self) -> tuple[float, float] | None:
        """Mean return and length of the recent training episodes, over every rank's episodes."""
        window = self._ep_info_window
        returns = list(window) if window is not None else []
        lengths = list(self._env.length_queue) if returns else []  # type: ignore[union-attr]
        totals = torch.tensor([sum(returns), sum(lengths), len(returns)], dtype=torch.float64)
        totals = self.all_reduce(totals, "sum")
        if totals[2] == 0:
            return None
        return float(totals[0] / totals[2]), float(totals[1] / totals[2])

    def all_reduce(self, value: torch.Tensor, reduce_op: str = "mean") -> torch.Tensor:
        """``value`` reduced over all ranks (itself with one process). Every rank must call it."""
        if self.world_size <= 1:
            return value
        return self.trainer.strategy.reduce(value.to(self.device), reduce_op=reduce_op).cpu()

    @property
    def last_metrics(self) -> dict[str, float]:
        """The most recent metric record (``rollout/ep_rew_mean``, ``train/loss``, ...), as logged."""
        return dict(self._last_metrics)

    def progress_bar_metrics(self) -> dict[str, Any]:
        """What RLProgressBar shows beside the step count."""
        shown: dict[str, Any] = {}
        if "time/fps" in self._last_metrics:
            shown["fps"] = int(self._last_metrics["time/fps"])
        if "rollout/ep_rew_mean" in self._last_metrics:
            shown["ep_rew_mean"] = f"{self._last_metrics['rollout/ep_rew_mean']:.1f}"
        return shown

    # evaluation through Lightning's loops ---------------------------------------------------------
    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation_step("val", "validate")

    def test_step(self, batch: Any, batch_idx: int) -> None:
        self._evaluation_step("test", "test")

    def _evaluation_step(self, prefix: str, stage: str) -> None:
        from lit_sb3_core.engine.evaluation import evaluate_policy

        env = self.datamodule.get_env(stage)  # type: ignore[arg-type]
        if env is None:
            raise ValueError(
                f"The datamodule has no environment for {stage}: pass {stage[:4]}_env=... to it."
            )
        options = dict(getattr(self, "_eval_options", None) or {})
        if env not in self._seeded_eval_envs:
            # Seed each evaluation env once; later evaluations continue its random stream.
            env.reset(seed=self.datamodule.env_seed(stage, self.seed))  # type: ignore[arg-type]
            self._seeded_eval_envs.append(env)
        rewards, lengths = evaluate_policy(
            self,
            env,
            n_eval_episodes=options.get("n_eval_episodes", 10),
            deterministic=options.get("deterministic", True),
            render=options.get("render", False),
            return_episode_rewards=True,
            use_masking=options.get("use_masking", False),
        )
        self._last_episode_results = (rewards, lengths)
        stats = torch.tensor(
            [np.mean(rewards), np.std(rewards), np.mean(lengths), np.std(lengths)], dtype=torch.float64
        )
        # Under DDP each rank evaluates its own episodes; the ranks agree on the averaged result, so that
        # ModelCheckpoint and EarlyStopping take the same decision everywhere.
        mean_reward, std_reward, mean_length, std_length = self.all_reduce(stats, "mean").tolist()
        self._last_eval_results = results = {
            f"{prefix}/mean_reward": mean_reward,
            f"{prefix}/std_reward": std_reward,
            f"{prefix}/mean_episode_length": mean_length,
            f"{prefix}/std_episode_length": std_length,
            f"{prefix}/n_eval_episodes": float(len(rewards) * self.world_size),
        }
        # Through Lightning (callback metrics for ModelCheckpoint/EarlyStopping and the returned results),
        # but written to the loggers here, against environment steps rather than optimizer steps.
        self.log_dict(results, batch_size=1, logger=False)
        for logger in self.loggers:
            logger.log_metrics(results, step=self.num_timesteps)

    # SB3 surface ----------------------------------------------------------------------------------
    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch, as numpy; returns ``(actions, state)`` like SB3."""
        policy = self._require_policy()
        obs, single = self._batch_observation(observation)
        was_training = policy.training
        policy.train(False)
        try:
            with torch.no_grad():
                obs_tensor = self.normalize_obs(obs_to_tensor(obs, self.device))
                actions = policy.predict_actions(obs_tensor, deterministic)  # type: ignore[operator]
        finally:
            policy.train(was_training)
        return self._postprocess_actions(actions, single), state

    def _batch_observation(self, observation: Any) -> tuple[Any, bool]:
        """Add a batch axis to a single observation; reject shapes that fit neither form."""
        space = self.observation_space
        assert space is not None
        if isinstance(space, spaces.Dict):
            if not isinstance(observation, dict):
                raise ValueError(f"Expected a dict observation with keys {list(space.spaces)}.")
            first = next(iter(space.spaces))
            single = np.asarray(observation[first]).shape == space.spaces[first].shape
            batched = {k: np.asarray(v)[None] if single else np.asarray(v) for k, v in observation.items()}
            return batched, single
        obs = np.asarray(observation)
        expected = space.shape
        if obs.shape == expected:
            return obs[None], True
        if obs.shape[1:] == expected:
            return obs, False
        raise ValueError(
            f"Unexpected observation shape {obs.shape} for {describe_space(space)}: expected {expected} for "
            f"one observation or (n_envs, {', '.join(map(str, expected))}) for a batch."
            if expected
            else f"Unexpected observation shape {obs.shape} for {describe_space(space)}: expected () or (n_envs,)."
        )

    def _postprocess_actions(self, actions: torch.Tensor, single: bool) -> np.ndarray:
        array = self.to_env_actions(to_numpy(actions))
        return array[0] if single else array

    def to_env_actions(self, array: np.ndarray) -> np.ndarray:
        """Policy outputs (a batch) as the env takes them: shaped, bounded, offset by the space's start."""
        space = self.action_space
        if isinstance(space, spaces.Discrete):
            array = array.reshape(-1).astype(np.int64)
            return array + int(space.start) if space.start else array
        if isinstance(space, spaces.Box):
            array = array.reshape((-1, *space.shape))
            if getattr(self.policy, "squash_output", False):  # gSDE's tanh-squashed actions are in [-1, 1]
                array = self.policy.unscale_action(array)  # type: ignore[union-attr,operator]
            array = np.clip(array, space.low, space.high)
        elif isinstance(space, spaces.MultiDiscrete):
            array = array.reshape((-1, *space.shape)).astype(space.dtype) + space.start
        elif isinstance(space, spaces.MultiBinary):
            array = array.reshape((-1, *space.shape)).astype(space.dtype)
        return array

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
    ) -> RLAlgorithm:
        """SB3's ``learn``: build an RLEnvDataModule and an RLTrainer and ``fit``. Returns ``self``.

        ``n_envs`` (lit-sb3 only) trains on that many copies of ``env`` when it is an id or factory.
        """
        from lit_sb3_core.engine.datamodule import RLEnvDataModule
        from lit_sb3_core.engine.trainer import RLTrainer

        if isinstance(total_timesteps, bool) or not isinstance(total_timesteps, (int, np.integer)):
            raise ConfigurationError(f"total_timesteps must be a positive integer, got {total_timesteps!r}.")
        if total_timesteps <= 0:
            raise ConfigurationError(f"total_timesteps must be a positive integer, got {total_timesteps}.")
        if env is not None:
            self._env_source = env
            self._learn_datamodule = None
        if self._env_source is None:
            raise ValueError(
                f"{type(self).__name__}.learn() needs an environment: learn(10_000, env='CartPole-v1'), or "
                "pass env= to the constructor."
            )
        datamodule = self._learn_datamodule
        if datamodule is None or reset_num_timesteps:
            if datamodule is not None and datamodule is not self._env_source:
                datamodule.close()
            source = self._env_source
            datamodule = (
                source
                if isinstance(source, RLEnvDataModule)
                else RLEnvDataModule(train_env=source, n_envs=n_envs or 1, seed=self.seed)
            )
            self._learn_datamodule = datamodule
        if reset_num_timesteps:
            self.num_timesteps = 0
            self.iterations = 0
            self._last_obs = None
        log_dir = self.hparams.get("tensorboard_log")
        callbacks = _as_lightning_callbacks(callback)
        with _quiet_lightning(self.verbose):
            trainer = RLTrainer(
                max_steps=int(self.num_timesteps + total_timesteps),
                run_name=tb_log_name or type(self).__name__,
                accelerator=_accelerator(self.hparams.get("device", "auto")),
                devices=1,
                logger=None if log_dir else False,
                default_root_dir=log_dir,
                callbacks=callbacks,
                enable_checkpointing=False,
                enable_progress_bar=progress_bar,
                enable_model_summary=False,
                log_every_n_steps=log_interval,
            )
            with _keyboard_interrupt_reraised(trainer):
                trainer.fit(self, datamodule=datamodule)
        return self

    def get_env(self) -> VectorEnv | None:
        """The training vector env of the last run (or the one given at construction, once built)."""
        if self._env is None and self._learn_datamodule is not None:
            return self._learn_datamodule.get_env("fit")
        return self._env

    def set_env(self, env: Any) -> None:
        """Train on ``env`` from the next ``learn``; its spaces must match the model's."""
        if self.policy is not None:
            self._check_same_spaces(*self._probe_spaces(env))
        self._env_source = env
        self._learn_datamodule = None
        self._env = None

    def get_parameters(self) -> dict[str, dict[str, torch.Tensor]]:
        """State dicts by name: ``policy`` and each optimizer (``optimizer``, ``optimizer_1``...)."""
        params = {"policy": self._require_policy().state_dict()}
        trainer = self._trainer
        if trainer is not None:
            for i, optimizer in enumerate(trainer.optimizers):
                params["optimizer" if i == 0 else f"optimizer_{i}"] = optimizer.state_dict()
        return params

    def set_parameters(self, params: dict[str, dict[str, Any]], exact_match: bool = True) -> None:
        """Load ``policy`` weights from ``get_parameters()`` output (or a model file's path)."""
        if isinstance(params, (str, Path)):
            from lit_sb3_core.engine.model_file import read_model_file

            state = read_model_file(params).state
            params = {"policy": {k[len("policy.") :]: v for k, v in state.items() if k.startswith("policy.")}}
        if exact_match and "policy" not in params:
            raise ValueError(f"set_parameters expected a 'policy' entry, got {sorted(params)}.")
        self._require_policy().load_state_dict(params["policy"], strict=exact_match)

    def save(self, path: str | Path) -> None:
        """Write a model file: JSON metadata + safetensors weights, atomically (see ``lit_sb3.load``)."""
        from lit_sb3_core.engine.model_file import save_model

        save_model(self, path)

    @classmethod
    def load(cls, path: str | Path, env: Any = None, **kwargs: Any) -> RLAlgorithm:
        """Load a model file written by ``save``; never unpickles. ``kwargs`` override hyperparameters."""
        from lit_sb3_core.engine.model_file import load_model

        return load_model(path, env=env, expected_cls=cls, **kwargs)

    # checkpoints ----------------------------------------------------------------------------------
    @classmethod
    def load_from_checkpoint(  # type: ignore[override]
        cls,
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        strict: bool | None = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """Lightning's ``load_from_checkpoint``; a file that ``weights_only`` loading refuses (it holds pickled
        code) raises ``ModelFileError`` saying so, instead of torch's ``UnpicklingError``."""
        import pickle

        from lit_sb3_core.engine.faults import unsafe_checkpoint_error

        try:
            return super().load_from_checkpoint(
                checkpoint_path, map_location, hparams_file, strict, weights_only=weights_only, **kwargs
            )
        except pickle.UnpicklingError as exc:
            raise unsafe_checkpoint_error(checkpoint_path, exc) from None  # type: ignore[misc]

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        assert self.observation_space is not None and self.action_space is not None
        checkpoint["lit_sb3"] = {
            "algo": self.algo_name,
            "num_timesteps": self.num_timesteps,
            "iterations": self.iterations,
            "n_updates": self._n_updates,
            "observation_space": space_to_json(self.observation_space),
            "action_space": space_to_json(self.action_space),
            "normalization": self.normalization,
            "rng": capture_rng_state(),
            "episode_returns": [float(r) for r in getattr(self._env, "return_queue", [])],
            "episode_lengths": [int(n) for n in getattr(self._env, "length_queue", [])],
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        state = checkpoint.get("lit_sb3")
        if state is None:
            raise ModelFileError(
                "This checkpoint was not written by a lit-sb3 algorithm (no 'lit_sb3' entry): load plain "
                "Lightning checkpoints with their own LightningModule class."
            )
        if self.algo_name and state.get("algo") not in (None, self.algo_name):
            raise ModelFileError(
                f"This checkpoint holds a {state['algo']!r} model, not {self.algo_name!r}: load it with that "
                "algorithm's class (lit_sb3.get_algo_class(name).load_from_checkpoint(path))."
            )
        observation_space = space_from_json(state["observation_space"])
        action_space = space_from_json(state["action_space"])
        if self.policy is None:
            self._build(observation_space, action_space)
        else:
            self._check_same_spaces(observation_space, action_space)
        self.configure_normalization(state.get("normalization"))
        self.num_timesteps = int(state["num_timesteps"])
        self.iterations = int(state["iterations"])
        self._n_updates = int(state["n_updates"])
        if "rng" in state:
            restore_rng_state(state["rng"])
        self._restored_episode_stats = (state.get("episode_returns", []), state.get("episode_lengths", []))


_STAGES = {"fit": "fit", "validate": "validate", "test": "test", "predict": "predict"}


def set_random_seed(seed: int) -> None:
    """Seed python, numpy and torch (what SB3's ``set_random_seed`` does)."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


@functools.cache
def _mode_free_modules() -> frozenset[type]:
    """Module types whose forward ignores ``training`` (no dropout, no batch statistics)."""
    from torch import nn

    from lit_sb3_core.nets import off_policy as networks
    from lit_sb3_core.nets.torch_layers import CombinedExtractor, FlattenExtractor, NatureCNN

    return frozenset(
        {
            nn.Linear,
            nn.Conv2d,
            nn.Sequential,
            nn.ModuleDict,
            nn.ModuleList,
            nn.Flatten,
            nn.Identity,
            nn.ReLU,
            nn.Tanh,
            nn.ELU,
            nn.LeakyReLU,
            nn.GELU,
            nn.SiLU,
            nn.SELU,
            nn.Sigmoid,
            nn.Softplus,
            nn.LayerNorm,
            FlattenExtractor,
            NatureCNN,
            CombinedExtractor,
            networks.QNetwork,
            networks.ContinuousCritic,
            networks.SquashedGaussianActor,
            networks.DeterministicActor,
        }
    )


def _precision_is_plain(plugin: Any) -> bool:
    """Whether backward and step need nothing from the precision plugin: 32-bit, or autocast without a
    gradient scaler (bf16-mixed); the forward pass's autocast is Lightning's, around ``training_step``."""
    from lightning.pytorch.plugins.precision import MixedPrecision, Precision

    return type(plugin) is Precision or (type(plugin) is MixedPrecision and plugin.scaler is None)


@torch.no_grad()
def clip_grad_norm(param_groups: list[dict[str, Any]], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` over an optimizer's parameters, in three foreach kernels."""
    grads = [p.grad for group in param_groups for p in group["params"] if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    torch._foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp_(max=1.0))


def make_optimizer(
    optimizer_class: type[torch.optim.Optimizer], params: Any, lr: float, kwargs: dict[str, Any]
) -> torch.optim.Optimizer:
    """Build an optimizer, choosing torch's fused (Adam, AdamW) or foreach (RMSprop, SGD) implementation
    unless the caller chose one.

    Both update all parameters in a few kernel calls; with the small networks of RL that makes an optimizer
    step markedly cheaper than torch's CPU default, a Python loop over the parameters (RMSprop for A2C's
    policy: 150 -> 100 us). The numerics are the same algorithm.
    """
    params = list(params)
    kwargs = dict(kwargs)
    chosen = {"fused", "foreach"} & set(kwargs)
    plain = params and all(p.device.type in ("cpu", "cuda") and p.dtype.is_floating_point for p in params)
    if not chosen and plain:
        if optimizer_class in (torch.optim.Adam, torch.optim.AdamW):
            kwargs["fused"] = True
        elif optimizer_class in (torch.optim.RMSprop, torch.optim.SGD):
            kwargs["foreach"] = True
    return optimizer_class(params, lr=lr, **kwargs)


def _keep_own_arguments(hparams: Any, cls: type) -> None:
    """Drop saved arguments of base classes that ``cls.__init__`` does not take (they would break loading).

    ``save_hyperparameters`` records the arguments of every ``__init__`` in the chain; an algorithm that
    fixes a base-class argument (TRPO has no ``ent_coef``) must not get it back as a keyword on ``load``.
    """
    parameters = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    for name in [key for key in hparams if key not in parameters]:
        del hparams[name]


def _accelerator(device: str) -> str:
    mapping = {"auto": "auto", "cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "mps": "mps"}
    key = str(device).split(":")[0].lower()
    if key not in mapping:
        raise ValueError(f"Unknown device {device!r}: use 'auto', 'cpu', 'cuda' or 'mps'.")
    return mapping[key]


def _as_lightning_callbacks(callback: Any) -> list[Any]:
    """SB3's ``callback=`` argument: a callback, a list of them, or a function ``fn(locals, globals)``."""
    from lightning.pytorch.callbacks import Callback

    from lit_sb3_core.sdk.callbacks import FunctionCallback

    if callback is None:
        return []
    items = list(callback) if isinstance(callback, (list, tuple)) else [callback]
    converted = []
    for item in items:
        if isinstance(item, Callback):
            converted.append(item)
        elif callable(item):
            converted.append(FunctionCallback(item))
        else:
            raise TypeError(
                f"callback must be a Lightning/lit-sb3 callback, a list of them, or a function "
                f"fn(locals, globals) -> bool; got {type(item).__name__}."
            )
    return converted


@contextmanager
def _quiet_lightning(verbose: int):
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
        if isinstance(exc.__context__, KeyboardInterrupt) and trainer.interrupted:
            raise KeyboardInterrupt from None
        raise
