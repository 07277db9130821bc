"""Deep Deterministic Policy Gradient (DDPG).

Lillicrap et al., "Continuous control with deep reinforcement learning", 2015,
https://arxiv.org/abs/1509.02971 (building on Silver et al., "Deterministic Policy Gradient Algorithms",
2014, https://proceedings.mlr.press/v32/silver14.pdf).

Each gradient step, on a minibatch ``(s, a, r, s')``:

1. critic: regress ``Q(s, a)`` onto ``y = r + (1 - done) * gamma * Q_target(s', mu_target(s'))``;
2. actor: move ``mu`` up ``Q(s, mu(s))`` (the deterministic policy gradient; gradients flow into the
   actor only);
3. Polyak-average actor and critic into their targets.

TD3 (Fujimoto et al. 2018) is this algorithm plus three tricks, so, as in Stable-Baselines3, DDPG is TD3
with the tricks switched off: one critic (``n_critics=1`` unless ``policy_kwargs`` says otherwise), a
policy update every critic update (``policy_delay=1``) and no target policy smoothing
(``target_policy_noise=0``, ``target_noise_clip=0``). Exploration is the deterministic action plus
``action_noise`` (none by default, as in SB3; the paper used Ornstein-Uhlenbeck noise, rl-zoo3 uses
``{"type": "normal", "sigma": 0.1}``). Defaults, policies and logged metrics are Stable-Baselines3's DDPG.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from lit_sb3_core.sdk import ActionNoise, Schedule, TrainFreq
from lit_sb3_ddpg.hyperparams import TUNED
from lit_sb3_td3.td3 import TD3

__all__ = ["DDPG"]


class DDPG(TD3):
    """Deep Deterministic Policy Gradient: TD3 with one critic, no policy delay and no target smoothing.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` (TD3's policies) or a policy class /
            import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size of actor and critic (number, ``"lin_<start>"`` or callable).
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: Polyak coefficient of the target networks.
        gamma: discount factor.
        train_freq: update every ``n`` environment steps, or ``(n, "step" | "episode")``.
        gradient_steps: gradient steps after each ``train_freq`` chunk (-1: as many as steps collected).
        action_noise: exploration noise (an ``ActionNoise`` or a spec such as
            ``{"type": "normal", "sigma": 0.1}`` or ``{"type": "ornstein_uhlenbeck", "sigma": 0.2}``);
            None explores only during ``learning_starts``.
        replay_buffer_class / replay_buffer_kwargs: buffer class (name, path or class) and its arguments.
        optimize_memory_usage: store each observation once in the replay buffer.
        n_steps: n-step returns (1: one-step TD targets).
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``net_arch``, ``activation_fn``, ...); ``n_critics``
            defaults to 1 here (TD3's policy default is 2).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments, the buffer and the noise.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step as one compiled program, as ``TD3(compile=True)``. Off by default.
    """

    algo_name: ClassVar[str] = "ddpg"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 200_000
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED

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
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        checkpoint_replay_buffer: bool = True,
        compile: bool = False,
    ) -> None:
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
            # TD3 without its tricks: every update moves the actor and the targets, and the target
            # action is mu_target(s') itself.
            policy_delay=1,
            target_policy_noise=0.0,
            target_noise_clip=0.0,
            tensorboard_log=tensorboard_log,
            policy_kwargs=policy_kwargs,
            verbose=verbose,
            seed=seed,
            device=device,
            checkpoint_replay_buffer=checkpoint_replay_buffer,
            compile=compile,
        )

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        """One critic unless ``policy_kwargs`` asks for more (the TD3 policy's default is two)."""
        return super().make_policy(policy_cls, {"n_critics": 1, **policy_kwargs})
