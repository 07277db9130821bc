"""``OnPolicyAlgorithm``: the shared loop of rollout-then-update methods (PPO, A2C, TRPO, ...).

Each iteration collects ``n_steps`` steps from every training env into a ``RolloutBuffer``, computes GAE
advantages, and hands the buffer to ``train_on_rollout``, which a subclass implements with its gradient
updates. See ``lit_sb3_core.sdk.algorithm`` for how a run maps onto Lightning.

One Lightning batch is one iteration, unless an algorithm sets ``min_steps_per_batch``: A2C (5 steps per
env per iteration by default) runs whole iterations back to back until a batch covers 256 env steps,
because Lightning spends a few hundred microseconds per batch, a tenth of an A2C iteration on CartPole.
The iterations themselves (rollout, update, logging every ``log_interval`` iterations, the budget check
before each rollout) are unchanged, as in SB3's ``learn`` loop; only per-batch hooks (callbacks,
``val_check_interval``) see fewer, larger batches.
"""

from __future__ import annotations

import inspect
import math
import warnings
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.data.rollout_buffer import RolloutBuffer
from lit_sb3_core.engine.lightning_internals import SIGTERMException, attached_trainer
from lit_sb3_core.errors import ConfigurationError, ConflictingOptionsError, PolicyKwargsError
from lit_sb3_core.foundation.checks import (
    check_bool,
    check_fraction,
    check_int,
    check_number,
    check_positive_int,
    check_positive_number,
)
from lit_sb3_core.foundation.schedules import Schedule
from lit_sb3_core.foundation.spaces import describe_space, obs_to_tensor, to_numpy
from lit_sb3_core.nets.actor_critic import ACTOR_CRITIC_ALIASES, ActorCriticPolicy, class_to_string
from lit_sb3_core.nets.direct_forward import NumpyActorCritic
from lit_sb3_core.registry.names import resolve_named_class
from lit_sb3_core.sb3.buffers import RolloutBuffer as SB3RolloutBuffer
from lit_sb3_core.sb3.own_loop import check_own_loop
from lit_sb3_core.sb3.rollout_view import check_rollout_buffer_class, rollout_view, sb3_buffer_extras
from lit_sb3_core.sdk.algorithm import RLAlgorithm
from lit_sb3_core.sdk.fast_path import plain_calls
from lit_sb3_core.sdk.step_callbacks import StepCallbacks

__all__ = ["OnPolicyAlgorithm", "explained_variance"]


def explained_variance(y_pred: torch.Tensor, y_true: torch.Tensor) -> float:
    """1 - Var[y_true - y_pred] / Var[y_true]: 1 is a perfect value function, <= 0 no better than a constant."""
    var_y = torch.var(y_true)
    if var_y == 0:
        return float("nan")
    return float(1 - torch.var(y_true - y_pred) / var_y)


class OnPolicyAlgorithm(RLAlgorithm):
    """Shared loop of on-policy methods: collect ``n_steps`` per env into a RolloutBuffer, then train.

    Subclasses implement ``train_on_rollout`` (the gradient updates; return metrics to log).

    Args:
        n_steps: steps per environment per rollout (rollout size is ``n_steps * n_envs``).
        gamma: discount factor.
        gae_lambda: GAE bias/variance trade-off (1 = Monte-Carlo returns, 0 = TD(0)).
        ent_coef: entropy bonus weight.
        vf_coef: value loss weight.
        max_grad_norm: gradient clipping by global norm.
        use_sde: generalized State-Dependent Exploration (gSDE) instead of independent Gaussian noise, for
            Box actions; the policy gets ``use_sde=True`` (gSDE settings go in ``policy_kwargs``).
        sde_sample_freq: resample gSDE's exploration matrices every this many steps (-1: only at the start
            of each rollout).
        rollout_buffer_class / rollout_buffer_kwargs: SB3's ``RolloutBuffer`` / ``DictRolloutBuffer`` (or a
            subclass that adds to them without overriding how the rollout is stored and sampled) and its extra
            arguments: ``rollout_buffer`` is then an instance of it (see ``lit_sb3_core.sb3.rollout_view``).
    """

    # Built from the env's spaces (see RLAlgorithm); typed as built, as SB3 types it.
    policy: ActorCriticPolicy
    # ``compile_update`` (RLAlgorithm; A2C, PPO and its variants set it): the updates run as compiled
    # programs, and the rollout's pass in numpy where ``NumpyActorCritic`` computes it
    # (``rollout_forward``; variants that override it act eagerly).

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 3e-4,
        n_steps: int = 2048,
        gamma: float = 0.99,
        gae_lambda: float = 0.95,
        ent_coef: float = 0.0,
        vf_coef: float = 0.5,
        max_grad_norm: float | None = 0.5,
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        rollout_buffer_class: type[SB3RolloutBuffer] | None = None,
        rollout_buffer_kwargs: dict[str, Any] | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        seed: int | None = None,
        verbose: int = 0,
        device: str = "auto",
        tensorboard_log: str | None = None,
    ) -> None:
        check_positive_int("n_steps", n_steps)
        check_fraction("gamma", gamma)
        check_fraction("gae_lambda", gae_lambda)
        self.use_sde = check_bool("use_sde", use_sde)
        self.sde_sample_freq = check_int(
            "sde_sample_freq", sde_sample_freq, minimum=-1
        )  # -1: once per rollout
        self.n_steps = n_steps
        self.gamma = gamma
        self.gae_lambda = gae_lambda
        self.ent_coef = check_number("ent_coef", ent_coef, minimum=0)
        self.vf_coef = check_number("vf_coef", vf_coef, minimum=0)
        self.max_grad_norm = check_positive_number("max_grad_norm", max_grad_norm, allow_none=True)
        # The rollout the updates train on (tensors); ``rollout_buffer`` is SB3's numpy view of it.
        self.rollout: RolloutBuffer | None = None
        self._rollout_view: tuple[RolloutBuffer, SB3RolloutBuffer] | None = None
        if isinstance(rollout_buffer_class, str):  # an import path, as model files store classes
            rollout_buffer_class = resolve_named_class(
                "buffer", rollout_buffer_class, field="rollout_buffer_class", base=SB3RolloutBuffer
            )
        self.rollout_buffer_class = check_rollout_buffer_class(rollout_buffer_class)
        if rollout_buffer_kwargs is not None and not isinstance(rollout_buffer_kwargs, dict):
            raise ConfigurationError(
                f"rollout_buffer_kwargs must be a dict, got {type(rollout_buffer_kwargs).__name__}."
            )
        self.rollout_buffer_kwargs = dict(rollout_buffer_kwargs or {})
        self._rollout_buffer_extras: dict[str, Any] = {}
        # compile=True: the rollout's numpy pass, for the policy it was built for (None: policy(obs)).
        self._numpy_rollout: tuple[Any, NumpyActorCritic | None] | None = None
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            policy_kwargs=policy_kwargs,
            seed=seed,
            verbose=verbose,
            device=device,
            tensorboard_log=tensorboard_log,
        )
        if "rollout_buffer_class" in self.hparams:  # hyperparameters stay plain JSON: classes import strings
            self.hparams["rollout_buffer_class"] = class_to_string(self.rollout_buffer_class)
        if self.env_source is not None:  # refused at construction as in SB3, not at the first learn()
            self.check_rollout_length(self._source_n_envs())
            if self.validate_rollout_at_construction:
                self.validate_rollout_size(self.n_steps * self._source_n_envs())
            if self.rollout_buffer_class is not None:
                self._build_sb3_rollout_buffer(self._source_n_envs())

    def _build_sb3_rollout_buffer(self, n_envs: int) -> None:
        """Construct ``rollout_buffer_class`` as SB3 does, so that its arguments are checked (an unknown or
        duplicated keyword is a ``TypeError``, a space it does not take an ``AssertionError``) and the
        attributes its ``__init__`` sets carry over to ``rollout_buffer``; the storage stays ``self.rollout``."""
        assert self.rollout_buffer_class is not None
        if self.observation_space is None or self.action_space is None:
            return
        probe = self.rollout_buffer_class(
            self.n_steps,
            self.observation_space,
            self.action_space,
            device="cpu",
            gamma=self.gamma,
            gae_lambda=self.gae_lambda,
            n_envs=n_envs,
            **self.rollout_buffer_kwargs,
        )
        self._rollout_buffer_extras = sb3_buffer_extras(probe)

    # True: ``validate_rollout_size`` also runs when the model is built with an env (the rollout size is known
    # then), for algorithms whose SB3 counterpart warns or asserts in its constructor (sb3-contrib's TRPO).
    validate_rollout_at_construction: ClassVar[bool] = False
    policy_aliases: ClassVar[dict[str, Any]] = ACTOR_CRITIC_ALIASES
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "ActorCriticPolicy": "MlpPolicy",
        "ActorCriticCnnPolicy": "CnnPolicy",
        "MultiInputActorCriticPolicy": "MultiInputPolicy",
    }
    supports_normalization: ClassVar[bool] = True
    # A Lightning batch runs whole iterations until it covers at least this many env steps (see above).
    min_steps_per_batch: ClassVar[int] = 0
    dispatches_step_callbacks: ClassVar[bool] = True

    def build_policy(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().build_policy(observation_space, action_space)
        self._maybe_recommend_cpu()

    def _maybe_recommend_cpu(self, mlp_class_name: str = "ActorCriticPolicy") -> None:
        """Warn, as SB3 does, when an MLP policy is to train on a GPU: small networks run faster on the CPU.

        The GPU is the model's device (``model.device``) or the one ``learn`` will take (``device="auto"``
        or ``"cuda"`` with a GPU present). ``mlp_class_name``: SB3's name of the MLP policy class.
        """
        requested = str(self.hparams.get("device", "auto")).split(":")[0].lower()
        on_gpu = torch.device(self.device).type == "cuda" or (
            requested in ("auto", "cuda", "gpu") and torch.cuda.is_available()
        )
        policy = self.hparams.get("policy", "MlpPolicy")
        if not on_gpu or (policy != "MlpPolicy" and self.policy_class().__name__ != mlp_class_name):
            return
        warnings.warn(
            f"You are trying to run {type(self).__name__} on the GPU, but with an MLP policy it trains faster "
            "on the CPU (its networks are too small to keep a GPU busy). Pass device='cpu', or set "
            "CUDA_VISIBLE_DEVICES= to hide the GPU. The model will train on the GPU, only more slowly.",
            UserWarning,
            stacklevel=3,
        )

    def check_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().check_spaces(observation_space, action_space)
        if self.use_sde and not isinstance(action_space, spaces.Box):
            raise ConfigurationError(
                f"{type(self).__name__}(use_sde=True): gSDE needs Box actions, the env has "
                f"{describe_space(action_space)}. Drop use_sde."
            )

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """The policy, given the algorithm's ``use_sde`` as SB3 does; policy_kwargs the policy cannot take
        are refused with a ``TypeError`` (``PolicyKwargsError``), as SB3's call of the policy class does."""
        name = type(self).__name__
        if "use_sde" in policy_kwargs:
            # SB3's on-policy algorithms call policy_class(..., use_sde=self.use_sde, **policy_kwargs):
            # "got multiple values for keyword argument 'use_sde'", whatever the values.
            fix = (
                f"pass it to {name}(use_sde=...) only"
                if "use_sde" in inspect.signature(type(self)).parameters
                else f"{name} does not explore with gSDE, drop it"
            )
            raise PolicyKwargsError(
                f"{name} gives the policy its own use_sde, so policy_kwargs cannot hold use_sde too (SB3 "
                f"raises the same TypeError): {fix}.",
                field="policy_kwargs.use_sde",
            )
        if self.use_sde:
            policy_kwargs = {**policy_kwargs, "use_sde": True}
        try:
            inspect.signature(policy_cls).bind(self.observation_space, self.action_space, **policy_kwargs)
        except TypeError as exc:
            skip = ("observation_space", "action_space")
            accepted = [p for p in inspect.signature(policy_cls).parameters if p not in skip]
            raise PolicyKwargsError(
                f"policy_kwargs do not fit {policy_cls.__name__}: {exc}. It accepts {', '.join(accepted)}.",
                field="policy_kwargs",
            ) from None
        return super().make_policy(policy_cls, policy_kwargs)

    def check_rollout_length(self, n_envs: int) -> None:
        """Only normalising advantages over the rollout needs two of them (A2C's default does not), as in SB3;
        an ``AssertionError`` too, the type SB3 asserts it with."""
        if getattr(self, "normalize_advantage", True) and self.n_steps * n_envs < 2:
            raise ConflictingOptionsError(
                f"n_steps * n_envs must be greater than 1 (advantage normalization needs it), got "
                f"n_steps={self.n_steps}, n_envs={n_envs}. Increase n_steps or n_envs, or pass "
                "normalize_advantage=False."
            )

    def on_fit_start(self) -> None:
        super().on_fit_start()
        n_envs = self.n_envs
        self.check_rollout_length(n_envs)
        self.validate_rollout_size(self.n_steps * n_envs)
        self._iterations_per_batch = self._iterations_per_batch_for(n_envs)
        buffer = self.rollout
        if buffer is None or buffer.n_envs != n_envs or buffer.device != self.device:
            assert self.observation_space is not None and self.action_space is not None
            if self.rollout_buffer_class is not None:
                self._build_sb3_rollout_buffer(n_envs)
            self.rollout = RolloutBuffer(
                self.n_steps,
                n_envs,
                self.observation_space,
                self.action_space,
                device=self.device,
                gamma=self.gamma,
                gae_lambda=self.gae_lambda,
            )

    @property
    def rollout_buffer(self) -> SB3RolloutBuffer | None:
        """SB3's ``rollout_buffer``: the last rollout as SB3's numpy ``RolloutBuffer`` (``DictRolloutBuffer`` for
        Dict observations), fields shaped ``(n_steps, n_envs, ...)``. It shares memory with ``self.rollout``
        on the CPU (no copy); algorithms train on ``self.rollout``, the tensors. None before the first learn."""
        core = self.rollout
        if core is None:
            return None
        if self._rollout_view is None or self._rollout_view[0] is not core:
            self._rollout_view = (
                core,
                rollout_view(core, self.rollout_buffer_class, self._rollout_buffer_extras),
            )
        return self._rollout_view[1]

    def env_steps_per_iteration(self, n_envs: int) -> int | None:
        return self._iterations_per_batch_for(n_envs) * self.n_steps * n_envs

    def _iterations_per_batch_for(self, n_envs: int) -> int:
        return max(1, math.ceil(self.min_steps_per_batch / (self.n_steps * n_envs)))

    def validate_rollout_size(self, rollout_size: int) -> None:
        """Hook for checks that need the rollout size (PPO warns when batch_size does not divide it)."""

    def training_step(self, batch: Any, batch_idx: int) -> None:
        """Whole iterations (rollout, then update) until the batch covers ``min_steps_per_batch`` steps."""
        # Without hooks on the policy, its forward passes skip nn.Module.__call__'s hook dispatch.
        with plain_calls(self.policy):
            for index in range(self._iterations_per_batch):
                if index > 0 and self.budget.reached():
                    break
                if self.collect_rollout() is False:  # a callback asked to stop at a step
                    self.trainer.should_stop = True
                    return
                self.iterations += 1  # counted before the update, as SB3 does: should_log() answers for it
                self.budget.update_progress()
                metrics = self.train_on_rollout()
                self.metrics.log_iteration(metrics)
        self.budget.stop_if_reached()

    def train_on_rollout(self) -> dict[str, float]:
        """All gradient updates of one iteration on ``self.rollout``; returns metrics to log.

        Metrics are written only when ``self.metrics.should_log()`` is true; an algorithm whose iterations are tiny
        (A2C) builds them only then.
        """
        raise NotImplementedError

    @torch.no_grad()
    def collect_rollout(self) -> bool:
        """Fill the rollout buffer with ``n_steps`` steps of every env, then compute advantages.

        Returns False when a step callback asked to stop (the rollout is then left unfinished).
        """
        env, buffer, policy = self.vector_env, self.rollout, self.policy
        assert env is not None and buffer is not None and policy is not None
        self._set_policy_mode(False)
        buffer.reset()
        use_sde, sde_sample_freq = self.use_sde, self.sde_sample_freq
        if use_sde:
            policy.reset_noise(env.num_envs)
        step_increment = env.num_envs * self.world_size
        device = self.device
        callbacks = self.step_callbacks
        has_callbacks = bool(callbacks)  # tested once per step; nothing else happens without callbacks
        if has_callbacks:
            callbacks.rollout_start()
        # Lightning acts on SIGTERM between iterations; poll its flag every step so that a long rollout stops
        # at the next step (one process only: DDP ranks stop together, at Lightning's batch boundary).
        trainer = attached_trainer(self)
        sigterm_poll = trainer if trainer is not None and trainer.world_size == 1 else None
        start_timesteps = self.num_timesteps
        try:
            for step in range(self.n_steps):
                if sigterm_poll is not None and sigterm_poll.received_sigterm:
                    raise SIGTERMException()
                # Step 0 too, right after the rollout's first draw: SB3 draws twice there, and the second
                # draw's matrices (and torch's generator after it) are the ones the rollout uses.
                if use_sde and sde_sample_freq > 0 and step % sde_sample_freq == 0:
                    policy.reset_noise(env.num_envs)
                obs_tensor = self.normalizers.obs(obs_to_tensor(self.last_obs, device), update=True)
                actions, values, log_probs = self.rollout_forward(obs_tensor)
                env_actions = self.prediction.to_env_actions(to_numpy(actions))
                new_obs, env_rewards, terminated, truncated, infos = env.step(env_actions)
                self.num_timesteps += step_increment
                dones = np.logical_or(terminated, truncated)
                rewards = self.normalizers.rewards(np.asarray(env_rewards, dtype=np.float32), dones)
                if "final_info" in infos:  # an episode ended (gymnasium adds the key only then)
                    self._record_episode_ends(infos)
                # bootstrap episodes cut by a time limit, not those that ended (count_nonzero: ``any()`` in a
                # quarter of its time)
                if np.count_nonzero(truncated):
                    truncated_only = np.logical_and(truncated, np.logical_not(terminated))
                    if truncated_only.any():
                        rewards = rewards + self.gamma * self._final_values(infos, truncated_only, new_obs)
                buffer.add(obs_tensor, actions, rewards, self.last_episode_starts, values, log_probs)
                self.last_obs = new_obs
                self.last_episode_starts = dones
                if has_callbacks and not callbacks.step(self.rollout_step_locals(locals())):
                    self._set_policy_mode(True)
                    return False
        except BaseException:
            # An unfinished rollout is dropped: the step counter goes back to its start, so a checkpoint
            # saved now (on an interrupt) describes the last complete iteration.
            self.num_timesteps = start_timesteps
            self._set_policy_mode(True)
            raise
        raw_last_obs = obs_to_tensor(self.last_obs, device)
        # Merged into the statistics when the next rollout reads it; bootstrapped as VecNormalize has it now.
        last_obs = self.normalizers.obs_after_merging(raw_last_obs, raw_last_obs)
        buffer.compute_returns_and_advantage(self.rollout_values(last_obs), self.last_episode_starts)
        if has_callbacks:
            callbacks.rollout_end(
                {
                    "rollout_buffer": self.rollout_buffer,
                    "new_obs": self.last_obs,
                    "dones": self.last_episode_starts,
                }
            )
        self._set_policy_mode(True)
        return True

    def collect_rollouts(
        self, env: Any, callback: Any, rollout_buffer: SB3RolloutBuffer | None, n_rollout_steps: int
    ) -> bool:
        """SB3's ``collect_rollouts``, for code that runs SB3's loop itself after ``_setup_learn``.

        ``collect_rollout`` with SB3's arguments: it steps the training env (``env``: ``model.get_env()``)
        ``n_rollout_steps`` (``model.n_steps``) times with the policy in eval mode, fills ``rollout_buffer``
        (``model.rollout_buffer``) with advantages computed, advances ``num_timesteps`` and ``_last_obs``, and
        calls ``callback`` (``BaseCallback``) around and after every step. Returns False when the callback
        stopped it. Other envs, buffers or lengths are refused: the model's own are what its loop fills.
        """
        check_own_loop(self, env, rollout_buffer, self.rollout_buffer, callback)
        if n_rollout_steps != self.n_steps:
            raise ValueError(
                f"collect_rollouts(n_rollout_steps={n_rollout_steps}): the rollout buffer holds n_steps="
                f"{self.n_steps} steps per env; pass n_rollout_steps=model.n_steps."
            )
        run_callbacks = self.step_callbacks
        self.step_callbacks = StepCallbacks([callback] if callback is not None else [])
        try:
            return self.collect_rollout()
        finally:
            self.step_callbacks = run_callbacks

    def rollout_step_locals(self, loop: dict[str, Any]) -> dict[str, Any]:
        """SB3's ``self.locals`` for a step callback, from ``collect_rollout``'s local variables."""
        return self.step_callbacks.locals(
            self,
            env=loop["env"],
            rollout_buffer=self.rollout_buffer,
            n_rollout_steps=self.n_steps,
            n_steps=loop["step"],
            obs_tensor=loop["obs_tensor"],
            actions=to_numpy(loop["actions"]),
            values=loop["values"],
            log_probs=loop["log_probs"],
            clipped_actions=loop["env_actions"],
            new_obs=loop["new_obs"],
            rewards=loop["env_rewards"],
            dones=loop["dones"],
            infos=loop["infos"],
            terminated=loop["terminated"],
            truncated=loop["truncated"],
        )

    def rollout_forward(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(actions, values, log_probs)`` for the training envs' current observations, during a rollout.

        Recurrent policies override this and ``rollout_values`` to carry their hidden state across steps.
        With ``compile_update`` the pass runs in numpy where ``NumpyActorCritic`` computes it (the same draws
        from torch's generator, the numbers within float rounding): not with hooks on the policy
        (``plain_calls`` is off then) or under an autocast.
        """
        numpy_pass = self._numpy_pass(obs)
        return self.policy(obs) if numpy_pass is None else numpy_pass(obs.numpy())

    def rollout_values(self, obs: Any, env_indices: np.ndarray | None = None) -> torch.Tensor:
        """V(obs) during a rollout: ``env_indices`` given, the final observations of those envs' truncated
        episodes; ``None``, every env's next observation (the bootstrap at the end of the rollout)."""
        numpy_pass = self._numpy_pass(obs)
        if numpy_pass is None:
            return self.policy.predict_values(obs)
        return numpy_pass.values(obs.numpy())

    def _numpy_pass(self, obs: Any) -> NumpyActorCritic | None:
        """The rollout's numpy pass (``compile_update``; see ``rollout_forward``), or None."""
        policy = self.policy
        if not (self.compile_update and policy.plain_calls and isinstance(obs, torch.Tensor) and obs.is_cpu):
            return None
        built = self._numpy_rollout
        if built is None or built[0] is not policy:
            built = self._numpy_rollout = (policy, NumpyActorCritic.of(policy))
        if built[1] is None or torch.is_autocast_enabled("cpu"):
            return None
        return built[1]

    def _final_values(self, infos: dict[str, Any], mask: np.ndarray, new_obs: Any) -> np.ndarray:
        """V(final observation) for envs whose episode was truncated, zeros elsewhere; normalized as
        VecNormalize normalizes it, after merging the step's new observations (``new_obs``)."""
        indices = np.flatnonzero(mask)
        final_obs = infos["final_obs"]
        if isinstance(self.observation_space, spaces.Dict):
            batch: Any = {
                key: np.stack([final_obs[i][key] for i in indices]) for key in self.observation_space.spaces
            }
        else:
            batch = np.stack([final_obs[i] for i in indices])
        values = np.zeros(mask.shape, dtype=np.float32)
        final = self.normalizers.obs_after_merging(obs_to_tensor(batch, self.device), new_obs)
        values[indices] = to_numpy(self.rollout_values(final, indices))
        return values
