"""Soft Actor-Critic.

Haarnoja et al., "Soft Actor-Critic: Off-Policy Maximum Entropy Deep Reinforcement Learning with a
Stochastic Actor", 2018, https://arxiv.org/abs/1801.01290, and "Soft Actor-Critic Algorithms and
Applications", 2018, https://arxiv.org/abs/1812.05905 (automatic entropy temperature).

Each gradient step, on a minibatch ``(s, a, r, s')``:

1. temperature (``ent_coef="auto"``): minimise ``-log(alpha) * (log pi(a~|s) + target_entropy)``;
2. critics: regress every ``Q_i(s, a)`` onto
   ``y = r + (1 - done) * gamma * (min_j Q_target_j(s', a') - alpha * log pi(a'|s'))``, ``a' ~ pi(s')``;
3. actor: minimise ``alpha * log pi(a~|s) - min_i Q_i(s, a~)`` through the reparameterised sample ``a~``
   (gradients flow into the actor only; the critics' weight gradients are never computed);
4. every ``target_update_interval`` steps, Polyak-average the critics into their targets.

With ``use_sde=True`` the actor explores with generalized State-Dependent Exploration (gSDE, Raffin et al.,
"Smooth Exploration for Robotic Reinforcement Learning", 2021, https://arxiv.org/abs/2005.05719): the
exploration noise is ``latent(s) @ W``, a function of the state through the actor's last hidden layer, with
a random matrix ``W ~ N(0, std^2)`` and a learned, state-independent ``log std``. ``W`` is drawn again at
the start of every ``train_freq`` chunk of collection (so with ``train_freq=1``, every step), every
``sde_sample_freq`` steps within a chunk, and before every gradient step (``reset_actor_noise``), because
``log std`` changes and the actor loss differentiates through the sample. With ``use_sde_at_warmup`` the
``learning_starts`` warm-up steps also come from this policy instead of uniform random actions.

Defaults, the order of the updates and logged metrics are Stable-Baselines3's SAC.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch
import torch.nn.functional as F
from gymnasium import spaces

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
    check_positive_int,
    init_compile,
    update_target,
)
from lit_sb3_sac.hyperparams import TUNED
from lit_sb3_sac.policies import SAC_POLICY_ALIASES, SACPolicy

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer


__all__ = ["SAC"]


class SAC(EntropyTemperature, StateDependentExploration, OffPolicyAlgorithm):
    """Soft Actor-Critic with clipped double-Q critics and an automatically tuned entropy temperature.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` or a policy class / import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size of actor, critics and temperature (number, ``"lin_<start>"``, callable).
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: Polyak coefficient of the target critics.
        gamma: discount factor.
        train_freq: update every ``n`` environment steps, or ``(n, "step" | "episode")``.
        gradient_steps: gradient steps after each ``train_freq`` chunk (-1: as many as steps collected).
        action_noise: optional extra exploration noise (an ``ActionNoise`` or a spec dict).
        replay_buffer_class / replay_buffer_kwargs: buffer class (name, path or class) and its arguments.
        optimize_memory_usage: store each observation once in the replay buffer.
        n_steps: n-step returns (1: one-step TD targets).
        ent_coef: entropy temperature alpha: ``"auto"`` (learned from 1), ``"auto_<init>"`` or a fixed number.
        target_update_interval: gradient steps between target updates.
        target_entropy: entropy the temperature steers toward; ``"auto"`` is ``-dim(A)``.
        use_sde: explore with gSDE (see above) instead of independent Gaussian noise; its settings
            (``log_std_init`` (-3), ``use_expln``, ``clip_mean`` (2.0), ``full_std``) go in ``policy_kwargs``.
        sde_sample_freq: with gSDE, also redraw the exploration matrices every this many environment steps
            within a ``train_freq`` chunk (-1: only at the start of each chunk).
        use_sde_at_warmup: with gSDE, act with the (untrained) gSDE policy during the ``learning_starts``
            warm-up instead of uniformly at random.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``net_arch``, ``n_critics``, ``activation_fn``, ...).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments and the buffer.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step (the critic, actor and temperature losses, their gradients and Adam
            steps, the target update) as one program compiled with ``torch.compile``
            (``lit_sb3_core.sdk.UpdateProgram``): same learning, within float rounding. The first update of
            a run compiles (seconds with a warm on-disk cache, minutes cold). Adam/AdamW optimizers, one
            process, no gSDE; under bf16 autocast (``RLTrainer(precision="bf16-mixed")``) the program
            computes its products in bf16. Off by default.
    """

    algo_name: ClassVar[str] = "sac"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 50_000
    policy_aliases: ClassVar[dict[str, Any]] = SAC_POLICY_ALIASES
    policy: SACPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "stable_baselines3.sac.policies.SACPolicy": "MlpPolicy",
        "stable_baselines3.sac.policies.CnnPolicy": "CnnPolicy",
        "stable_baselines3.sac.policies.MultiInputPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Box,)

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 3e-4,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 256,
        tau: float = 0.005,
        gamma: float = 0.99,
        train_freq: int | TrainFreq | list[Any] = 1,
        gradient_steps: int = 1,
        action_noise: ActionNoise | dict[str, Any] | None = None,
        replay_buffer_class: Any = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        ent_coef: str | float = "auto",
        target_update_interval: int = 1,
        target_entropy: str | float = "auto",
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
        self.target_update_interval = check_positive_int("target_update_interval", target_update_interval)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            buffer_size=buffer_size,
            learning_starts=learning_starts,
            batch_size=batch_size,
            tau=tau,
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

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        policy, buffer = self.policy, self.replay_buffer
        assert policy is not None and buffer is not None
        optimizers = cast("list[LightningOptimizer]", self.optimizers())
        self.update_learning_rate(optimizers)
        program = self.update_program()
        for step in range(gradient_steps):
            data = self.sample_replay(batch_size)
            if self.use_sde:
                # log std changed at the last step; the actor loss differentiates through this draw.
                self.reset_actor_noise()
                noise = next_noise = None
            else:  # the actor's Gaussian draws at s and s', in the order SB3 draws them
                shape = (data.actions.shape[0], policy.actor.action_dim)
                noise = torch.randn(shape, device=data.actions.device)
                next_noise = torch.randn(shape, device=data.actions.device)
            discounts = data.discounts if data.discounts is not None else self.gamma
            update_targets = step % self.target_update_interval == 0
            losses = program(optimizers, data, discounts, noise, next_noise, update_targets)
            for name, value in losses.items():
                self.record(name, value)
        self.n_updates += gradient_steps

    def gradient_step(
        self,
        steps: GradientSteps,
        data: Any,
        discounts: Any,
        noise: torch.Tensor | None,
        next_noise: torch.Tensor | None,
        update_targets: bool,
    ) -> dict[str, torch.Tensor]:
        """One gradient step on the minibatch ``data``: critics, actor, temperature, then the targets.

        ``steps.minimize(i, loss, ...)`` is the gradient step of optimizer ``i`` (0 actor, 1 critic,
        2 temperature), eager or inside the compiled program (``compile=True``); ``noise`` and ``next_noise``
        are the standard normal draws of the actor's samples at ``s`` and ``s'``. Returns the values to log.
        """
        policy = self.policy
        observations = policy.preprocess(data.observations)
        next_observations = policy.preprocess(data.next_observations)
        log_ent_coef = policy.log_ent_coef if self.learn_ent_coef else None
        # alpha of this step, detached: only the temperature loss moves log(alpha) (softlearning issue 60).
        ent_coef = self.ent_coef_init if log_ent_coef is None else torch.exp(log_ent_coef.detach())

        critic_loss = steps.minimize(
            1, self.critic_loss, data, observations, next_observations, ent_coef, discounts, next_noise
        )
        actor_loss, log_prob = steps.minimize(0, self.actor_loss, observations, ent_coef, noise, has_aux=True)
        losses = {"critic_loss": critic_loss, "actor_loss": actor_loss}
        if log_ent_coef is not None:
            losses["ent_coef_loss"] = steps.minimize(2, self.temperature_loss, log_prob)
            losses["ent_coef"] = cast(torch.Tensor, ent_coef)
        if update_targets:
            update_target(policy.critic, policy.critic_target, self.tau)
        return losses

    def critic_loss(
        self,
        data: Any,
        observations: Any,
        next_observations: Any,
        ent_coef: Any,
        discounts: Any,
        next_noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Soft Bellman regression of every critic onto the clipped double-Q target (TQC: quantiles)."""
        actor, critic, critic_target = self.policy.actor, self.policy.critic, self.policy.critic_target
        with torch.no_grad():
            next_actions, next_log_prob = actor.action_log_prob(next_observations, next_noise)
            next_q = torch.cat(critic_target(next_observations, next_actions), dim=1).amin(
                dim=1, keepdim=True
            )
            next_q = next_q - ent_coef * next_log_prob.reshape(-1, 1)
            target_q = data.rewards + (1.0 - data.dones) * discounts * next_q
        current_q = critic(observations, data.actions)
        return 0.5 * cast(torch.Tensor, sum(F.mse_loss(q, target_q) for q in current_q))

    def actor_loss(
        self, observations: Any, ent_coef: Any, noise: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``alpha * log pi(a~|s) - Q(s, a~)`` through the reparameterised sample ``a~``, and ``log pi``
        ``(batch, 1)`` for the temperature loss."""
        actions_pi, log_prob = self.policy.actor.action_log_prob(observations, noise)
        log_prob = log_prob.reshape(-1, 1)
        return (ent_coef * log_prob - self.actor_q_value(observations, actions_pi)).mean(), log_prob

    def temperature_loss(self, log_prob: torch.Tensor) -> torch.Tensor:
        """``-log(alpha) * (log pi + target_entropy)``: alpha rises while the entropy is below its target."""
        return -(self.policy.log_ent_coef * (log_prob + self.target_entropy).detach()).mean()

    def actor_q_value(self, observations: Any, actions: torch.Tensor) -> torch.Tensor:
        """``(batch, 1)`` value the actor climbs: the minimum over the critics (TQC: the mean atom)."""
        return torch.cat(self.policy.critic(observations, actions), dim=1).amin(dim=1, keepdim=True)

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
