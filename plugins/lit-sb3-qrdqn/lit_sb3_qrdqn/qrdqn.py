"""Quantile Regression DQN.

Dabney et al., "Distributional Reinforcement Learning with Quantile Regression", AAAI 2018,
https://arxiv.org/abs/1710.10044

DQN with a distribution over returns instead of its mean: the network outputs ``n_quantiles`` values
per action, the quantiles at the midpoints ``tau_i = (i + 0.5) / n_quantiles``. The greedy action
maximises the mean of the quantiles; its next-state quantiles, discounted and shifted by the reward,
are the targets of every current quantile under the quantile Huber loss (summed over quantiles). The
exploration schedule, target updates and the rest of the loop are DQN's; defaults and logged metrics
are sb3-contrib's QR-DQN.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from lit_sb3_core.sdk import SB3File, Schedule, TrainFreq, quantile_huber_loss
from lit_sb3_dqn.dqn import DQN
from lit_sb3_qrdqn.hyperparams import TUNED
from lit_sb3_qrdqn.policies import QRDQN_POLICY_ALIASES, QRDQNPolicy

__all__ = ["QRDQN"]


class QRDQN(DQN):
    """Quantile Regression DQN (sb3-contrib defaults).

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` or a policy class / import path;
            ``policy_kwargs={"n_quantiles": 200}`` sets the number of quantiles.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size (its ``eps`` defaults to ``0.01 / batch_size``, as in the paper).
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: target update coefficient; 1 copies the online network.
        gamma: discount factor.
        train_freq: update every ``n`` environment steps, or ``(n, "step" | "episode")``.
        gradient_steps: gradient steps after each ``train_freq`` chunk (-1: as many as steps collected).
        replay_buffer_class / replay_buffer_kwargs: buffer class (name, path or class) and its arguments.
        optimize_memory_usage: store each observation once in the replay buffer.
        n_steps: n-step returns (1: one-step TD targets).
        target_update_interval: environment steps between target network updates.
        exploration_fraction: fraction of the budget over which epsilon decays.
        exploration_initial_eps: epsilon at the start.
        exploration_final_eps: epsilon after the decay.
        max_grad_norm: gradient clipping by global norm; None (the default) does not clip.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``n_quantiles``, ``net_arch``, ...).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments and the buffer.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step (quantile loss, gradients, clipping, Adam) as one program compiled
            with ``torch.compile``, as ``DQN(compile=True)`` does: same learning, within float rounding; the
            first update of a run compiles (seconds with a warm on-disk cache, minutes cold). Off by default.
    """

    algo_name: ClassVar[str] = "qrdqn"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 25_000
    policy_aliases: ClassVar[dict[str, Any]] = QRDQN_POLICY_ALIASES
    policy: QRDQNPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "sb3_contrib.qrdqn.policies.QRDQNPolicy": "MlpPolicy",
        "sb3_contrib.qrdqn.policies.CnnPolicy": "CnnPolicy",
        "sb3_contrib.qrdqn.policies.MultiInputPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED

    @classmethod
    def state_dict_from_sb3(
        cls, file: SB3File, model: Any, renames: dict[str, str] | None = None
    ) -> dict[str, torch.Tensor]:
        """sb3-contrib names the quantile networks ``quantile_net``/``quantile_net_target``; here they are DQN's."""
        return super().state_dict_from_sb3(
            file,
            model,
            renames={"quantile_net": "q_net", "quantile_net_target": "q_net_target", **(renames or {})},
        )

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 5e-5,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 32,
        tau: float = 1.0,
        gamma: float = 0.99,
        train_freq: int | TrainFreq | list[Any] = 4,
        gradient_steps: int = 1,
        replay_buffer_class: Any = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        target_update_interval: int = 10_000,
        exploration_fraction: float = 0.005,
        exploration_initial_eps: float = 1.0,
        exploration_final_eps: float = 0.01,
        max_grad_norm: float | None = None,
        stats_window_size: int = 100,
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
            replay_buffer_class=replay_buffer_class,
            replay_buffer_kwargs=replay_buffer_kwargs,
            optimize_memory_usage=optimize_memory_usage,
            n_steps=n_steps,
            target_update_interval=target_update_interval,
            exploration_fraction=exploration_fraction,
            exploration_initial_eps=exploration_initial_eps,
            exploration_final_eps=exploration_final_eps,
            max_grad_norm=max_grad_norm,
            stats_window_size=stats_window_size,
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
        """Adam with ``eps = 0.01 / batch_size`` (the QR-DQN paper's) unless an optimizer is configured."""
        kwargs = dict(policy_kwargs)
        if "optimizer_class" not in kwargs and "optimizer_kwargs" not in kwargs:
            kwargs["optimizer_kwargs"] = {"eps": 0.01 / self.batch_size}
        return super().make_policy(policy_cls, kwargs)

    def td_loss(
        self,
        q_values: Any,
        observations: Any,
        actions: torch.Tensor,
        rewards: torch.Tensor,
        dones: torch.Tensor,
        discounts: Any,
        next_observations: Any,
    ) -> torch.Tensor:
        """Quantile Huber loss of the taken action's quantiles (``q_values``: the online network) against the
        target network's quantiles at its greedy action (by mean); DQN's ``train_on_buffer`` steps it, eagerly
        or (``compile=True``) as one compiled program."""
        policy = self.policy
        n_quantiles = policy.n_quantiles
        with torch.no_grad():
            next_quantiles = policy.q_net_target(
                policy.preprocess(next_observations)
            )  # (batch, quantiles, actions)
            greedy = next_quantiles.mean(dim=1, keepdim=True).argmax(dim=2, keepdim=True)
            next_quantiles = next_quantiles.gather(2, greedy.expand(-1, n_quantiles, 1)).squeeze(2)
            target_quantiles = rewards + (1.0 - dones) * discounts * next_quantiles
        taken = actions.long().unsqueeze(1).expand(-1, n_quantiles, 1)
        current_quantiles = q_values(policy.preprocess(observations)).gather(2, taken).squeeze(2)
        return quantile_huber_loss(
            current_quantiles, target_quantiles, sum_over_quantiles=True, constant_target=True
        )
