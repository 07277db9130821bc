"""Truncated Quantile Critics (TQC).

Kuznetsov et al., "Controlling Overestimation Bias with Truncated Mixture of Continuous Distributional
Quantile Critics", ICML 2020, https://arxiv.org/abs/2005.04269

SAC with distributional critics. Each of ``n_critics`` networks outputs ``n_quantiles`` atoms of the
return distribution ``Z(s, a)`` (quantile levels ``tau_i = (i + 0.5) / n_quantiles``). Each gradient step,
on a minibatch ``(s, a, r, s')``:

1. temperature (``ent_coef="auto"``): minimise ``-log(alpha) * (log pi(a~|s) + target_entropy)``, as SAC;
2. critics: pool the target critics' atoms at ``(s', a' ~ pi(s'))`` from all networks, sort them and drop
   the largest ``top_quantiles_to_drop_per_net * n_critics`` (the truncation that controls
   overestimation, replacing SAC's minimum over critics); the kept atoms ``z_j`` give the targets
   ``y_j = r + (1 - done) * gamma * (z_j - alpha * log pi(a'|s'))``, and every current atom of every
   network regresses onto all of them with the quantile Huber loss (averaged, as sb3-contrib does);
3. actor: minimise ``alpha * log pi(a~|s) - mean(Z(s, a~))``, the mean over all atoms of all networks,
   through the reparameterised sample ``a~`` (gradients flow into the actor only);
4. every ``target_update_interval`` steps, Polyak-average the critics into their targets.

The actor, the temperature, exploration and their arguments are SAC's (``TQC`` subclasses ``SAC``); the
quantile Huber loss is QR-DQN's. Defaults, the order of the updates and logged metrics are sb3-contrib's
TQC.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ActionNoise,
    Schedule,
    TrainFreq,
    check_below,
    check_non_negative_int,
    quantile_huber_loss,
)
from lit_sb3_sac.sac import SAC
from lit_sb3_tqc.hyperparams import TUNED
from lit_sb3_tqc.policies import TQC_POLICY_ALIASES, TQCPolicy

__all__ = ["TQC", "truncated_quantiles"]


def truncated_quantiles(quantiles: torch.Tensor, n_kept: int, ordered: bool = True) -> torch.Tensor:
    """Pool the atoms of all networks, keep the ``n_kept`` smallest.

    Args:
        quantiles: ``(batch, n_critics, n_quantiles)`` atoms (or ``(batch, n_atoms)``, already pooled).
        n_kept: atoms kept per sample, ``n_critics * (n_quantiles - top_quantiles_to_drop_per_net)``.
        ordered: in increasing order (a sort); False: in no particular order (a partial selection, ~6x
            cheaper on TQC's 50 atoms), for a use that does not depend on the order (the quantile loss).

    Returns:
        ``(batch, n_kept)`` atoms.
    """
    pooled = quantiles.reshape(quantiles.shape[0], -1)
    if not ordered:
        return torch.topk(pooled, n_kept, dim=1, largest=False, sorted=False).values
    return torch.sort(pooled, dim=1).values[:, :n_kept]


class TQC(SAC):
    """Truncated Quantile Critics: SAC whose critics learn return distributions, truncated at the top.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` or a policy class / import path;
            ``policy_kwargs={"n_quantiles": 25, "n_critics": 2}`` size the critics.
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
        top_quantiles_to_drop_per_net: how many of the largest target atoms to drop, per critic network
            (``d`` in the paper; 2 by default). More dropping means more pessimistic targets.
        use_sde / sde_sample_freq / use_sde_at_warmup: gSDE, handled as SAC handles it.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``n_quantiles``, ``n_critics``, ``net_arch``, ...).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments and the buffer.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step as one compiled program, as ``SAC(compile=True)``. Off by default.
    """

    algo_name: ClassVar[str] = "tqc"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 10_000
    policy_aliases: ClassVar[dict[str, Any]] = TQC_POLICY_ALIASES
    policy: TQCPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "sb3_contrib.tqc.policies.TQCPolicy": "MlpPolicy",
        "sb3_contrib.tqc.policies.CnnPolicy": "CnnPolicy",
        "sb3_contrib.tqc.policies.MultiInputPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED

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
        top_quantiles_to_drop_per_net: int = 2,
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
        compile: bool = False,
    ) -> None:
        # 0 keeps every atom
        self.top_quantiles_to_drop_per_net = check_non_negative_int(
            "top_quantiles_to_drop_per_net", top_quantiles_to_drop_per_net
        )
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
            ent_coef=ent_coef,
            target_update_interval=target_update_interval,
            target_entropy=target_entropy,
            use_sde=use_sde,
            sde_sample_freq=sde_sample_freq,
            use_sde_at_warmup=use_sde_at_warmup,
            stats_window_size=stats_window_size,
            tensorboard_log=tensorboard_log,
            policy_kwargs=policy_kwargs,
            verbose=verbose,
            seed=seed,
            device=device,
            checkpoint_replay_buffer=checkpoint_replay_buffer,
            compile=compile,
        )

    def setup_model(self) -> None:
        """SAC's temperature set-up, then check that the truncation keeps some atoms."""
        super().setup_model()
        critic = self.policy.critic
        if not hasattr(critic, "n_quantiles"):
            raise ConfigurationError(
                f"TQC needs a policy whose critic outputs quantiles (TQCPolicy or a subclass), got "
                f"{type(self.policy).__name__} with a {type(critic).__name__}."
            )
        check_below(
            "top_quantiles_to_drop_per_net",
            self.top_quantiles_to_drop_per_net,
            "the critic's n_quantiles",
            critic.n_quantiles,
            fix="Dropping them all leaves no target atom: drop fewer, or raise n_quantiles in policy_kwargs.",
        )

    @property
    def n_target_quantiles(self) -> int:
        """Atoms kept in the target: all critics' atoms minus the dropped top ones."""
        critic = self.require_policy().critic
        return critic.n_critics * (critic.n_quantiles - self.top_quantiles_to_drop_per_net)

    def critic_loss(
        self,
        data: Any,
        observations: Any,
        next_observations: Any,
        ent_coef: Any,
        discounts: Any,
        next_noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Quantile regression of every critic's atoms onto the pooled, truncated target atoms."""
        actor, critic, critic_target = self.policy.actor, self.policy.critic, self.policy.critic_target
        with torch.no_grad():
            next_actions, next_log_prob = actor.action_log_prob(next_observations, next_noise)
            atoms = critic_target(next_observations, next_actions)
            atoms = atoms.reshape(atoms.shape[0], -1) - ent_coef * next_log_prob.reshape(-1, 1)
            targets = data.rewards + (1.0 - data.dones) * discounts * atoms
            # Truncated after the soft Bellman map, which is non-decreasing in the atom (discounts >= 0), so the
            # smallest targets are the targets of the smallest atoms: sb3-contrib's values, in its order
            # (sorted) eagerly. The compiled program selects them unordered (the loss sums over them) and
            # reads one small buffer of targets instead of recomputing the map for every pair.
            target_quantiles = truncated_quantiles(
                targets, self.n_target_quantiles, ordered=not torch.compiler.is_compiling()
            )
            # (batch, 1, n_target): the same targets for every critic network.
            target_quantiles = target_quantiles.unsqueeze(1)
        current_quantiles = critic(observations, data.actions)  # (batch, n_critics, n_quantiles)
        return quantile_huber_loss(
            current_quantiles, target_quantiles, sum_over_quantiles=False, constant_target=True
        )

    def actor_q_value(self, observations: Any, actions: torch.Tensor) -> torch.Tensor:
        """The mean of every critic's atoms (no truncation for the actor, as in the paper)."""
        return self.policy.critic(observations, actions).mean(dim=(1, 2)).unsqueeze(1)
