"""Advantage Actor-Critic: the synchronous, deterministic variant of A3C.

Mnih et al., "Asynchronous Methods for Deep Reinforcement Learning", 2016. https://arxiv.org/abs/1602.01783

Each iteration collects ``n_steps`` steps from each environment (``OnPolicyAlgorithm.collect_rollout``)
and takes a *single* gradient step on the whole rollout, minimising

    L = -E[A log pi(a|s)] + vf_coef * (V(s) - R)^2 - ent_coef * H[pi(.|s)]

where ``A`` is the GAE(``gae_lambda``) advantage (``gae_lambda=1``: n-step returns, as in the paper) and
``R = A + V_old`` the value target. The optimizer is RMSprop (``alpha=0.99``, ``eps=rms_prop_eps``), as in
the paper and Stable-Baselines3, unless ``use_rms_prop=False`` (Adam) or ``policy_kwargs`` names another
one, e.g. ``optimizer_class="rmsprop_tf_like"`` for TensorFlow's RMSprop (:class:`RMSpropTFLike`).
Defaults and logged metrics are those of Stable-Baselines3's A2C.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from lit_sb3_a2c.hyperparams import TUNED
from lit_sb3_a2c.rmsprop_tf_like import RMSpropTFLike
from lit_sb3_core.sdk import (
    ACTOR_CRITIC_ALIASES,
    CompileChoice,
    CompiledStep,
    ConfigurationError,
    OnPolicyAlgorithm,
    Schedule,
    check_bool,
    check_number,
    explained_variance,
    init_compile,
    resolve_named_class,
)

__all__ = ["A2C", "OPTIMIZER_ALIASES"]

# Short names accepted for ``policy_kwargs["optimizer_class"]`` (case-insensitive), so configs stay plain.
# The plugin registers them (lit_sb3_register_optimizers), so model files may name them too.
OPTIMIZER_ALIASES: dict[str, type[torch.optim.Optimizer]] = {
    "rmsprop_tf_like": RMSpropTFLike,
    "rmsproptflike": RMSpropTFLike,
    "rmsprop": torch.optim.RMSprop,
    "adam": torch.optim.Adam,
}


class A2C(OnPolicyAlgorithm):
    """Advantage Actor-Critic (A2C).

    Args:
        policy: ``"MlpPolicy"`` (or another alias of ``ACTOR_CRITIC_ALIASES``), a policy class or import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: optimizer step size: number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per update; one update sees ``n_steps * n_envs`` transitions.
        gamma: discount factor.
        gae_lambda: GAE lambda; 1.0 gives the classic n-step advantage of the paper.
        ent_coef: entropy bonus weight.
        vf_coef: value loss weight.
        max_grad_norm: gradient clipping by global norm.
        rms_prop_eps: epsilon of the default RMSprop optimizer (stabilises the square root's denominator).
        use_rms_prop: RMSprop (``alpha=0.99``, the paper's choice) when True, Adam when False. Ignored when
            ``policy_kwargs`` sets ``optimizer_class``.
        use_sde: generalized State-Dependent Exploration (gSDE) for Box actions instead of independent
            Gaussian noise; its settings (``log_std_init``, ``full_std``, ``use_expln``, ...) go in ``policy_kwargs``.
        sde_sample_freq: resample the gSDE noise every this many steps (-1: once per rollout).
        rollout_buffer_class / rollout_buffer_kwargs: SB3's ``RolloutBuffer`` / ``DictRolloutBuffer`` (or a
            subclass adding to them) that ``rollout_buffer`` is, and its extra arguments.
        normalize_advantage: normalise advantages over the rollout (not in the original algorithm).
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``ortho_init``,
            ``optimizer_class`` such as ``"rmsprop_tf_like"``, ``optimizer_kwargs``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
        compile: run each update (the policy's evaluation of the rollout, the loss, gradients, clipping,
            RMSprop or Adam) as one program compiled with ``torch.compile`` (``lit_sb3_core.sdk.CompiledStep``):
            same learning, within float rounding; the first update of a run compiles (seconds with a warm
            on-disk cache, a minute or more cold). torch's RMSprop, Adam or AdamW optimizers, one process.
            The rollout's policy pass then runs in numpy where it can (Discrete actions, flat observations,
            ``lit_sb3_core.sdk.OnPolicyAlgorithm.rollout_forward``): the same draws, values within rounding.
            Off by default.
    """

    algo_name: ClassVar[str] = "a2c"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 750_000
    policy_aliases: ClassVar[dict[str, Any]] = ACTOR_CRITIC_ALIASES
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    default_log_interval: ClassVar[int] = 100  # SB3's A2C.learn(log_interval=100): iterations are tiny
    # Tiny iterations, so one Lightning batch runs several (>= 256 env steps); see lit_sb3_core.sdk.
    min_steps_per_batch: ClassVar[int] = 256

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 7e-4,
        n_steps: int = 5,
        gamma: float = 0.99,
        gae_lambda: float = 1.0,
        ent_coef: float = 0.0,
        vf_coef: float = 0.5,
        max_grad_norm: float | None = 0.5,
        rms_prop_eps: float = 1e-5,
        use_rms_prop: bool = True,
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        rollout_buffer_class: Any = None,
        rollout_buffer_kwargs: dict[str, Any] | None = None,
        normalize_advantage: bool = False,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        compile: CompileChoice = False,
    ) -> None:
        init_compile(self, compile)
        self._compiled_step: CompiledStep | None = None
        self.rms_prop_eps = check_number("rms_prop_eps", rms_prop_eps, minimum=0)
        self.use_rms_prop = check_bool("use_rms_prop", use_rms_prop)
        self.normalize_advantage = check_bool("normalize_advantage", normalize_advantage)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            n_steps=n_steps,
            gamma=gamma,
            gae_lambda=gae_lambda,
            ent_coef=ent_coef,
            vf_coef=vf_coef,
            max_grad_norm=max_grad_norm,
            use_sde=use_sde,
            sde_sample_freq=sde_sample_freq,
            rollout_buffer_class=rollout_buffer_class,
            rollout_buffer_kwargs=rollout_buffer_kwargs,
            policy_kwargs=policy_kwargs,
            seed=seed,
            verbose=verbose,
            device=device,
            tensorboard_log=tensorboard_log,
        )

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """Choose the optimizer as SB3 does; the saved ``policy_kwargs`` stay what the user gave."""
        kwargs = dict(policy_kwargs)
        optimizer_class = kwargs.get("optimizer_class")
        if optimizer_class is None:
            if self.use_rms_prop:
                kwargs["optimizer_class"] = torch.optim.RMSprop
                kwargs["optimizer_kwargs"] = {"alpha": 0.99, "eps": self.rms_prop_eps, "weight_decay": 0}
        else:
            optimizer_class = kwargs["optimizer_class"] = resolve_named_class(
                "optimizer", optimizer_class, field="policy_kwargs.optimizer_class"
            )
            if kwargs.get("optimizer_kwargs") is None and optimizer_class is not torch.optim.Adam:
                # SB3 adds eps=1e-5 for Adam only; other optimizers keep their own defaults.
                kwargs["optimizer_kwargs"] = {}
        return super().make_policy(policy_cls, kwargs)

    def rollout_loss(self, evaluate_actions: Any, batch: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """A2C's loss on the whole rollout and its logged terms (detached): the same code for the eager and
        the compiled update (``evaluate_actions`` is the policy's, or the compiled step's traced one)."""
        values, log_prob, entropy = evaluate_actions(batch.observations, batch.actions)
        advantages = batch.advantages
        if self.normalize_advantage:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        policy_loss = -(advantages * log_prob).mean()
        value_loss = F.mse_loss(batch.returns, values)
        # Without a closed-form entropy, -log_prob estimates it.
        entropy_loss = -torch.mean(entropy) if entropy is not None else torch.mean(log_prob)
        loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss
        terms = {"policy_loss": policy_loss, "value_loss": value_loss, "entropy_loss": entropy_loss}
        return loss, {key: value.detach() for key, value in terms.items()}

    def compiled_step(self) -> CompiledStep:
        """The compiled update (built once, compiled on its first call, kept across ``learn``)."""
        if self.world_size > 1:
            raise ConfigurationError(
                "A2C(compile=True) compiles the single-process update (no gradient all-reduce); train with "
                "compile=False under DDP."
            )
        step = self._compiled_step
        if step is None or step.network.policy is not self.policy or not step.clips_at(self.max_grad_norm):
            step = CompiledStep(_Evaluation(self.policy), self.rollout_loss, self.max_grad_norm, has_aux=True)
            self._compiled_step = step
        return step

    def train_on_rollout(self) -> dict[str, float]:
        """One gradient step on the whole rollout (A2C's update)."""
        buffer, policy = self.rollout, self.policy
        assert buffer is not None and isinstance(policy, torch.nn.Module)
        optimizer = self.optimizers()
        learning_rate = self.update_learning_rate(optimizer)

        # One gradient step on the whole rollout; minibatches(None) draws the shuffle SB3 draws here, so
        # numpy's global generator (which envs may use) stays in step with SB3's.
        (batch,) = buffer.minibatches(None)
        if self.compile_update:
            loss, terms = self.compiled_step()(optimizer, batch)
        else:
            loss, terms = self.rollout_loss(policy.evaluate_actions, batch)
            self.optimizer_step(optimizer, loss, self.max_grad_norm)
        self.n_updates += 1
        if not self.metrics.should_log():
            return {}  # A2C logs every 100 iterations by default: skip the .item() syncs in between

        metrics = {
            "train/n_updates": self.n_updates,
            "train/explained_variance": explained_variance(buffer.values.flatten(), buffer.returns.flatten()),
            "train/entropy_loss": float(terms["entropy_loss"].item()),
            "train/policy_loss": float(terms["policy_loss"].item()),
            "train/value_loss": float(terms["value_loss"].item()),
            "train/learning_rate": learning_rate,
        }
        log_std = getattr(policy, "log_std", None)  # Gaussian policies only
        if log_std is not None:
            metrics["train/std"] = torch.exp(log_std).mean().item()
        return metrics


class _Evaluation(torch.nn.Module):
    """The policy's ``evaluate_actions`` as a module whose only parameters are the policy's: the compiled
    step evaluates it with its traced weights (``torch.func.functional_call``)."""

    def __init__(self, policy: torch.nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def forward(
        self, observations: Any, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        return self.policy.evaluate_actions(observations, actions)  # type: ignore[operator]
