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
    OffPolicyAlgorithm,
    Schedule,
    TrainFreq,
    check_number,
    check_positive_int,
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
    """

    algo_name: ClassVar[str] = "td3"
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
    ) -> None:
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

    def configure_optimizers(self) -> list[torch.optim.Optimizer]:
        policy = self.require_policy()
        return [
            self.make_optimizer(policy.actor.parameters()),
            self.make_optimizer(policy.critic.optimizer_parameters()),
        ]

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        policy, buffer = self.policy, self.replay_buffer
        assert policy is not None and buffer is not None
        actor_optimizer, critic_optimizer = cast("list[LightningOptimizer]", self.optimizers())
        self.update_learning_rate([actor_optimizer, critic_optimizer])
        actor, actor_target, critic, critic_target = (
            policy.actor,
            policy.actor_target,
            policy.critic,
            policy.critic_target,
        )
        preprocess = policy.preprocess
        actor_params = list(actor.parameters())
        for _ in range(gradient_steps):
            self.n_updates += 1
            data = buffer.sample(batch_size)
            discounts = data.discounts if data.discounts is not None else self.gamma
            observations = preprocess(data.observations)
            next_observations = preprocess(data.next_observations)
            with torch.no_grad():
                noise = torch.randn_like(data.actions) * self.target_policy_noise
                noise = noise.clamp_(-self.target_noise_clip, self.target_noise_clip)
                next_actions = (actor_target(next_observations) + noise).clamp_(-1.0, 1.0)
                next_q = torch.cat(critic_target(next_observations, next_actions), dim=1).amin(
                    dim=1, keepdim=True
                )
                target_q = data.rewards + (1.0 - data.dones) * discounts * next_q

            current_q = critic(observations, data.actions)
            critic_loss = cast(torch.Tensor, sum(F.mse_loss(q, target_q) for q in current_q))
            self.optimizer_step(critic_optimizer, critic_loss)
            self.record("critic_loss", critic_loss)

            if self.n_updates % self.policy_delay == 0:
                actor_loss = -critic.q1_forward(observations, actor(observations)).mean()
                self.optimizer_step(actor_optimizer, actor_loss, inputs=actor_params)
                self.record("actor_loss", actor_loss)
                update_target(critic, critic_target, self.tau)
                update_target(actor, actor_target, self.tau)
