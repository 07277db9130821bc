"""Twin Delayed Deep Deterministic Policy Gradient (TD3).

Fujimoto et al., "Addressing Function Approximation Error in Actor-Critic Methods", 2018,
https://arxiv.org/abs/1802.09477

Each gradient step, on a minibatch ``(s, a, r, s')``:

1. target policy smoothing: ``a' = clip(mu_target(s') + clip(N(0, target_policy_noise), -c, c), -1, 1)``
   with ``c = target_noise_clip``;
2. clipped double-Q: regress every ``Q_i(s, a)`` onto
   ``y = r + (1 - done) * gamma * min_j Q_target_j(s', a')``;
3. every ``policy_delay`` updates: move the actor up ``Q_1(s, mu(s))`` (gradients flow into the actor
   only) and Polyak-average actor and critics into their targets.

Exploration is the deterministic action plus ``action_noise`` (none by default, as in SB3; rl-zoo3 uses
``{"type": "normal", "sigma": 0.1}``). Defaults and logged metrics are Stable-Baselines3's TD3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch
import torch.nn.functional as F
from gymnasium import spaces

from lit_sb3_core.sdk import (
    ActionNoise,
    CompileChoice,
    GradientSteps,
    OffPolicyAlgorithm,
    Schedule,
    TrainFreq,
    UpdateProgram,
    check_number,
    check_positive_int,
    init_compile,
    update_target,
)
from lit_sb3_td3.hyperparams import TUNED
from lit_sb3_td3.policies import TD3_POLICY_ALIASES, TD3Policy

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer


__all__ = ["TD3"]


class TD3(OffPolicyAlgorithm):
    """Twin Delayed DDPG: clipped double-Q learning, delayed policy updates, target policy smoothing.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` or a policy class / import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size of actor and critics (number, ``"lin_<start>"`` or callable).
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: Polyak coefficient of the target networks.
        gamma: discount factor.
        train_freq: update every ``n`` environment steps, or ``(n, "step" | "episode")``.
        gradient_steps: gradient steps after each ``train_freq`` chunk (-1: as many as steps collected).
        action_noise: exploration noise (an ``ActionNoise`` or a spec such as
            ``{"type": "normal", "sigma": 0.1}``); None explores only during ``learning_starts``.
        replay_buffer_class / replay_buffer_kwargs: buffer class (name, path or class) and its arguments.
        optimize_memory_usage: store each observation once in the replay buffer.
        n_steps: n-step returns (1: one-step TD targets).
        policy_delay: critic updates per actor (and target) update.
        target_policy_noise: standard deviation of the smoothing noise on target actions.
        target_noise_clip: bound of that noise.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``net_arch``, ``n_critics``, ``activation_fn``, ...).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments, the buffer and the noise.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step (the critic loss and Adam step; every ``policy_delay``-th also the
            actor's and the target updates) as one program compiled with ``torch.compile``
            (``lit_sb3_core.sdk.UpdateProgram``; two programs, with and without the actor): same learning,
            within float rounding. The first updates of a run compile (seconds with a warm on-disk cache,
            minutes cold). Adam/AdamW optimizers, one process. Off by default.
    """

    algo_name: ClassVar[str] = "td3"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 100_000
    policy_aliases: ClassVar[dict[str, Any]] = TD3_POLICY_ALIASES
    policy: TD3Policy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "stable_baselines3.td3.policies.TD3Policy": "MlpPolicy",
        "stable_baselines3.td3.policies.CnnPolicy": "CnnPolicy",
        "stable_baselines3.td3.policies.MultiInputPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Box,)

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 1e-3,
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
        policy_delay: int = 2,
        target_policy_noise: float = 0.2,
        target_noise_clip: float = 0.5,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        checkpoint_replay_buffer: bool = True,
        compile: CompileChoice = False,
    ) -> None:
        init_compile(self, compile)
        self._update_program: UpdateProgram | None = None
        self.policy_delay = check_positive_int("policy_delay", policy_delay)
        self.target_policy_noise = check_number("target_policy_noise", target_policy_noise, minimum=0)
        self.target_noise_clip = check_number("target_noise_clip", target_noise_clip, minimum=0)
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

    # SB3's model.actor.optimizer and model.critic.optimizer, in configure_optimizers's order
    optimizer_attributes: ClassVar[tuple[str, ...]] = ("actor.optimizer", "critic.optimizer")

    def configure_optimizers(self) -> list[torch.optim.Optimizer]:
        policy = self.require_policy()
        return [
            self.make_optimizer(policy.actor.parameters()),
            self.make_optimizer(policy.critic.optimizer_parameters()),
        ]

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        buffer = self.replay_buffer
        assert buffer is not None
        optimizers = cast("list[LightningOptimizer]", self.optimizers())
        self.update_learning_rate(optimizers)
        program = self.update_program()
        for _ in range(gradient_steps):
            self.n_updates += 1
            data = self.sample_replay(batch_size)
            discounts = data.discounts if data.discounts is not None else self.gamma
            noise = torch.randn_like(data.actions)  # the target policy smoothing draw, as SB3 draws it
            update_actor = self.n_updates % self.policy_delay == 0
            losses = program(optimizers, data, discounts, noise, update_actor)
            for name, value in losses.items():
                self.record(name, value)

    def gradient_step(
        self, steps: GradientSteps, data: Any, discounts: Any, noise: torch.Tensor, update_actor: bool
    ) -> dict[str, torch.Tensor]:
        """One gradient step on the minibatch ``data``: the critics; with ``update_actor``, the actor and the
        targets.

        ``steps.minimize(i, loss, ...)`` is the gradient step of optimizer ``i`` (0 actor, 1 critic), eager or
        inside the compiled program (``compile=True``); ``noise`` is the standard normal draw of the target
        policy smoothing. Returns the values to log.
        """
        policy = self.policy
        observations = policy.preprocess(data.observations)
        next_observations = policy.preprocess(data.next_observations)
        losses = {
            "critic_loss": steps.minimize(
                1, self.critic_loss, data, observations, next_observations, discounts, noise
            )
        }
        if update_actor:
            losses["actor_loss"] = steps.minimize(0, self.actor_loss, observations)
            update_target(policy.critic, policy.critic_target, self.tau)
            update_target(policy.actor, policy.actor_target, self.tau)
        return losses

    def critic_loss(
        self, data: Any, observations: Any, next_observations: Any, discounts: Any, noise: torch.Tensor
    ) -> torch.Tensor:
        """Clipped double-Q regression onto the smoothed target policy's value at ``s'``."""
        actor_target, critic, critic_target = (
            self.policy.actor_target,
            self.policy.critic,
            self.policy.critic_target,
        )
        with torch.no_grad():
            clip = self.target_noise_clip
            smoothing = (noise * self.target_policy_noise).clamp(-clip, clip)
            next_actions = (actor_target(next_observations) + smoothing).clamp(-1.0, 1.0)
            next_q = torch.cat(critic_target(next_observations, next_actions), dim=1).amin(
                dim=1, keepdim=True
            )
            target_q = data.rewards + (1.0 - data.dones) * discounts * next_q
        current_q = critic(observations, data.actions)
        return cast(torch.Tensor, sum(F.mse_loss(q, target_q) for q in current_q))

    def actor_loss(self, observations: Any) -> torch.Tensor:
        """``-Q_1(s, mu(s))``: the deterministic policy gradient through the first critic."""
        return -self.policy.critic.q1_forward(observations, self.policy.actor(observations)).mean()

    def update_program(self) -> UpdateProgram:
        """``gradient_step`` run eagerly, or (``compile=True``) as one compiled program, kept across ``learn``."""
        if self._update_program is None or self._update_program.compiled != self.compile_update:
            self._update_program = UpdateProgram(self, self.gradient_step, compiled=self.compile_update)
        return self._update_program
