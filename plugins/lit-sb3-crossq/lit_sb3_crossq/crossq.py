"""CrossQ: SAC without target networks, made stable and sample-efficient by batch normalization.

Bhatt et al., "CrossQ: Batch Normalization in Deep Reinforcement Learning for Greater Sample Efficiency and
Simplicity", ICLR 2024, https://arxiv.org/abs/1902.05605 (https://openreview.net/forum?id=PczQtTsTIX).

CrossQ is maximum-entropy actor-critic (SAC) with three changes: no target networks (the critics
bootstrap from themselves), Batch Renormalization layers in critics and actor (``batch_renorm.py``), and
wide critics. Batch norm alone fails in SAC because ``(s, a)`` from the buffer and ``(s', a' ~ pi)`` are
distributed differently, so one of them is always normalized with the other's statistics. CrossQ
evaluates both in **one** forward pass over the concatenated batch, so the statistics cover the mixture.

Each gradient step, on a minibatch ``(s, a, r, s')`` (train/eval modes of the normalization layers as in
sb3-contrib 2.9: "train" normalizes with the batch and updates the running statistics, "eval" uses them):

1. ``a' ~ pi(s')`` with the actor's layers in eval mode, without gradients;
2. critics, layers in train mode: ``[Q_i(s, a); Q_i(s', a')] = Q_i([s; s'], [a; a'])`` jointly; regress
   ``Q_i(s, a)`` onto ``y = r + (1 - done) * gamma * (min_j Q_j(s', a') - alpha * log pi(a'|s'))``, with ``y``
   held constant;
3. every ``policy_delay`` steps: sample ``a~ ~ pi(s)`` with the actor's layers in train mode; minimise
   ``alpha * log pi(a~|s) - min_i Q_i(s, a~)`` with the critics' layers in eval mode (gradients flow into
   the actor only), and update the temperature (``ent_coef="auto"``) on
   ``-log(alpha) * (log pi(a~|s) + target_entropy)`` from the same sample (sb3-contrib steps the
   temperature first; the two steps are independent, so the order changes no number).

Acting and ``predict`` run every layer in eval mode. With ``use_sde=True`` the actor explores with gSDE as
SAC's does (``StateDependentExploration``: new exploration matrices per collection chunk, every
``sde_sample_freq`` steps, and before every gradient step). Defaults and logged metrics are sb3-contrib's
CrossQ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch
import torch.nn.functional as F
from gymnasium import spaces

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ActionNoise,
    CompileChoice,
    EntropyTemperature,
    GradientSteps,
    OffPolicyAlgorithm,
    Schedule,
    StateDependentExploration,
    TrainFreq,
    UpdateProgram,
    check_int,
    check_positive_int,
    describe_space,
    init_compile,
)
from lit_sb3_crossq.batch_renorm import set_training
from lit_sb3_crossq.hyperparams import TUNED
from lit_sb3_crossq.policies import CROSSQ_POLICY_ALIASES, CrossQPolicy

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer


__all__ = ["CrossQ"]


class CrossQ(EntropyTemperature, StateDependentExploration, OffPolicyAlgorithm):
    """CrossQ: SAC with Batch-Renormalized networks, joint critic passes and no target networks.

    Args:
        policy: ``"MlpPolicy"`` or a policy class / import path (sb3-contrib 2.9 has no CNN or multi-input
            CrossQ policy; neither does this plugin).
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size of actor, critics and temperature (number, ``"lin_<start>"``, callable).
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step (the critics see twice as many rows: ``s`` and
            ``s'``); at least 2, for batch statistics.
        gamma: discount factor.
        train_freq: update every ``n`` environment steps, or ``(n, "step" | "episode")``.
        gradient_steps: gradient steps after each ``train_freq`` chunk (-1: as many as steps collected).
        action_noise: optional extra exploration noise (an ``ActionNoise`` or a spec dict).
        replay_buffer_class / replay_buffer_kwargs: buffer class (name, path or class) and its arguments.
        optimize_memory_usage: store each observation once in the replay buffer.
        n_steps: n-step returns (1: one-step TD targets).
        ent_coef: entropy temperature alpha: ``"auto"`` (learned from 1), ``"auto_<init>"`` or a fixed number.
        target_entropy: entropy the temperature steers toward; ``"auto"`` is ``-dim(A)``.
        policy_delay: critic updates per actor (and temperature) update.
        use_sde: explore with gSDE (generalized State-Dependent Exploration) instead of independent
            Gaussian noise; its settings (``log_std_init``, ``use_expln``, ``clip_mean``) go in
            ``policy_kwargs``. The exploration matrices are drawn as SAC draws them (before every gradient
            step too, as sb3-contrib; see ``StateDependentExploration``).
        sde_sample_freq: with gSDE, also redraw the exploration matrices every this many environment steps
            within a ``train_freq`` chunk (-1: only at the start of each chunk).
        use_sde_at_warmup: with gSDE, act with the gSDE policy during the ``learning_starts`` warm-up
            instead of uniformly at random.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``net_arch``, ``batch_norm``, ``batch_norm_momentum``,
            ``renorm_warmup_steps``, ``n_critics``, ...; see ``CrossQPolicy``).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments and the buffer.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step (the joint critic pass and the critic loss, the actor and temperature
            losses, their gradients and Adam steps, the Batch Renorm layers' mode switches and running
            statistics) as one program compiled with ``torch.compile`` (``lit_sb3_core.sdk.UpdateProgram``;
            two programs, with and without the actor's update): same learning, within float rounding. The
            first update of a run compiles (seconds with a warm on-disk cache, minutes cold). Adam/AdamW
            optimizers, one process, no gSDE; under bf16 autocast (``RLTrainer(precision="bf16-mixed")``)
            the program computes its products in bf16. Off by default.
    """

    algo_name: ClassVar[str] = "crossq"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 30_000
    policy_aliases: ClassVar[dict[str, Any]] = CROSSQ_POLICY_ALIASES
    policy: CrossQPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "CrossQPolicy": "MlpPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Box,)
    # sb3-contrib's CrossQ only has MlpPolicy: no Dict observations (the joint pass concatenates tensors).
    supported_observation_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (
        spaces.Box,
        spaces.Discrete,
        spaces.MultiDiscrete,
        spaces.MultiBinary,
    )

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 1e-3,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 256,
        gamma: float = 0.99,
        train_freq: int | TrainFreq | list[Any] = 1,
        gradient_steps: int = 1,
        action_noise: ActionNoise | dict[str, Any] | None = None,
        replay_buffer_class: Any = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        ent_coef: str | float = "auto",
        target_entropy: str | float = "auto",
        policy_delay: int = 3,
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        use_sde_at_warmup: bool = False,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        checkpoint_replay_buffer: bool = True,
        compile: CompileChoice = False,
    ) -> None:
        self.init_sde(use_sde, sde_sample_freq, use_sde_at_warmup)
        refusal = None
        if use_sde:
            refusal = (
                "gSDE's update is not compiled (its noise matrices are drawn from log std outside the step): "
                "pass use_sde=False, or compile=False"
            )
        init_compile(self, compile, refusal)
        self._update_program: UpdateProgram | None = None
        self.init_temperature(ent_coef, target_entropy)
        self.policy_delay = check_positive_int("policy_delay", policy_delay)
        # Batch Renorm layers normalize with the statistics of each minibatch: at least 2 samples.
        check_int("batch_size", batch_size, minimum=2)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            buffer_size=buffer_size,
            learning_starts=learning_starts,
            batch_size=batch_size,
            tau=1.0,  # no target networks
            gamma=gamma,
            train_freq=train_freq,
            gradient_steps=gradient_steps,
            action_noise=action_noise,
            replay_buffer_class=replay_buffer_class,
            replay_buffer_kwargs=replay_buffer_kwargs,
            optimize_memory_usage=optimize_memory_usage,
            n_steps=n_steps,
            policy_kwargs=policy_kwargs,
            stats_window_size=stats_window_size,
            tensorboard_log=tensorboard_log,
            verbose=verbose,
            seed=seed,
            device=device,
            checkpoint_replay_buffer=checkpoint_replay_buffer,
        )

    def check_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        if isinstance(observation_space, spaces.Dict):
            raise ConfigurationError(
                f"CrossQ does not support Dict observations ({describe_space(observation_space)}): like "
                "sb3-contrib's CrossQ it has MlpPolicy only. Flatten them with "
                "gymnasium.wrappers.FlattenObservation, or use SAC's MultiInputPolicy."
            )
        super().check_spaces(observation_space, action_space)

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        policy, buffer = self.policy, self.replay_buffer
        assert policy is not None and buffer is not None
        optimizers = cast("list[LightningOptimizer]", self.optimizers())
        self.update_learning_rate(optimizers)
        program = self.update_program()
        for _ in range(gradient_steps):
            self.n_updates += 1
            data = self.sample_replay(batch_size)
            update_actor = self.n_updates % self.policy_delay == 0
            if self.use_sde:
                # log std changed at the last step; the actor loss differentiates through this draw.
                self.reset_actor_noise()
                noise = next_noise = None
            else:  # the actor's Gaussian draws at s' (every step), then at s (actor updates): sb3-contrib's order
                shape = (data.actions.shape[0], policy.actor.action_dim)
                next_noise = torch.randn(shape, device=data.actions.device)
                noise = torch.randn(shape, device=data.actions.device) if update_actor else None
            discounts = data.discounts if data.discounts is not None else self.gamma
            losses = program(optimizers, data, discounts, noise, next_noise, update_actor)
            for name, value in losses.items():
                self.record(name, value)

    def gradient_step(
        self,
        steps: GradientSteps,
        data: Any,
        discounts: Any,
        noise: torch.Tensor | None,
        next_noise: torch.Tensor | None,
        update_actor: bool,
    ) -> dict[str, torch.Tensor]:
        """One gradient step on the minibatch ``data``: the critics; with ``update_actor``, the actor and the
        temperature.

        ``steps.minimize(i, loss, ...)`` is the gradient step of optimizer ``i`` (0 actor, 1 critic,
        2 temperature), eager or inside the compiled program (``compile=True``), which also switches the
        Batch Renorm layers' modes and updates their running statistics as eager code does; ``next_noise``
        and ``noise`` are the standard normal draws of the actor's samples at ``s'`` and ``s``. Returns the
        values to log.
        """
        policy = self.policy
        observations = policy.preprocess(data.observations)
        next_observations = policy.preprocess(data.next_observations)
        log_ent_coef = policy.log_ent_coef if self.learn_ent_coef else None
        # alpha of this step, detached: only the temperature loss moves log(alpha) (softlearning issue 60).
        ent_coef = self.ent_coef_init if log_ent_coef is None else torch.exp(log_ent_coef.detach())
        losses: dict[str, torch.Tensor] = {}
        if log_ent_coef is not None:
            losses["ent_coef"] = cast(torch.Tensor, ent_coef)

        # Each layer's mode set before each loss (Lightning's fit leaves every module in train mode): the
        # actor's next actions from the running statistics, the critics' joint pass from (and recording) its batch.
        set_training(policy.actor_norms, False)
        set_training(policy.critic_norms, True)
        losses["critic_loss"] = steps.minimize(
            1, self.critic_loss, data, observations, next_observations, ent_coef, discounts, next_noise
        )
        set_training(policy.critic_norms, False)
        if update_actor:
            set_training(policy.actor_norms, True)
            losses["actor_loss"], log_prob = steps.minimize(
                0, self.actor_loss, observations, ent_coef, noise, has_aux=True
            )
            set_training(policy.actor_norms, False)
            # From log pi of the sample before the actor's step, as sb3-contrib (which steps it first).
            if log_ent_coef is not None:
                losses["ent_coef_loss"] = steps.minimize(2, self.temperature_loss, log_prob)
        return losses

    def critic_loss(
        self,
        data: Any,
        observations: Any,
        next_observations: Any,
        ent_coef: Any,
        discounts: Any,
        next_noise: torch.Tensor | None,
    ) -> torch.Tensor:
        """Soft Bellman regression of every critic onto ``min_j Q_j(s', a')``, both from one joint pass over
        ``[s; s']`` and ``[a; a']`` (critic layers in train mode, actor layers in eval mode)."""
        actor, critic = self.policy.actor, self.policy.critic
        with torch.no_grad():
            next_actions, next_log_prob = actor.action_log_prob(next_observations, next_noise)
        # One pass over [s; s'] and [a; a']: the batch statistics cover both distributions.
        all_q = torch.cat(
            critic(
                torch.cat([observations, next_observations]),
                torch.cat([data.actions, next_actions]),
            ),
            dim=1,
        )
        current_q, next_q = all_q.split(data.actions.shape[0])
        with torch.no_grad():
            next_q = next_q.amin(dim=1, keepdim=True) - ent_coef * next_log_prob.reshape(-1, 1)
            target_q = data.rewards + (1.0 - data.dones) * discounts * next_q
        return 0.5 * cast(torch.Tensor, sum(F.mse_loss(q, target_q) for q in current_q.split(1, dim=1)))

    def actor_loss(
        self, observations: Any, ent_coef: Any, noise: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``alpha * log pi(a~|s) - min_i Q_i(s, a~)`` (actor layers in train mode, critic layers in eval
        mode), and ``log pi`` ``(batch, 1)`` for the temperature loss."""
        actions_pi, log_prob = self.policy.actor.action_log_prob(observations, noise)
        log_prob = log_prob.reshape(-1, 1)
        q_pi = torch.cat(self.policy.critic(observations, actions_pi), dim=1).amin(dim=1, keepdim=True)
        return (ent_coef * log_prob - q_pi).mean(), log_prob

    def temperature_loss(self, log_prob: torch.Tensor) -> torch.Tensor:
        """``-log(alpha) * (log pi + target_entropy)``: alpha rises while the entropy is below its target."""
        return -(self.policy.log_ent_coef * (log_prob + self.target_entropy).detach()).mean()

    def update_program(self) -> UpdateProgram:
        """``gradient_step`` run eagerly, or (``compile=True``) as one compiled program, kept across ``learn``."""
        if self._update_program is None or self._update_program.compiled != self.compile_update:
            self._update_program = UpdateProgram(self, self.gradient_step, compiled=self.compile_update)
        return self._update_program

    def collect_metrics(self) -> dict[str, float]:
        metrics = super().collect_metrics()
        if not self.learn_ent_coef and self.n_updates:
            metrics["train/ent_coef"] = self.ent_coef_init
        return metrics
