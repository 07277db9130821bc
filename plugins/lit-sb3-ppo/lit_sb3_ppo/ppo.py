"""Proximal Policy Optimization with a clipped surrogate objective.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. https://arxiv.org/abs/1707.06347

Each iteration collects ``n_steps`` steps from each environment (``OnPolicyAlgorithm.collect_rollout``),
then runs ``n_epochs`` passes of shuffled minibatches over the rollout, minimising

    L = -E[min(r A, clip(r, 1 - eps, 1 + eps) A)] + vf_coef * (V - R)^2 - ent_coef * H

where ``r`` is the probability ratio of the new and old policy and ``A`` the GAE advantage. Defaults and
logged metrics are those of Stable-Baselines3's PPO.

Variants reuse this update through two override points: ``epoch_minibatches`` (what one epoch iterates
over; RecurrentPPO: whole sequences with their LSTM states) and ``evaluate_minibatch`` (values,
log-probabilities and entropy of a minibatch's actions; MaskablePPO: under the stored action masks).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ACTOR_CRITIC_ALIASES,
    CompileChoice,
    CompiledStep,
    ConflictingOptionsError,
    InvalidArgumentError,
    OnPolicyAlgorithm,
    Schedule,
    check_bool,
    check_int,
    check_positive_int,
    check_positive_number,
    explained_variance,
    init_compile,
    make_schedule,
)
from lit_sb3_ppo.hyperparams import TUNED

__all__ = ["PPO"]


class PPO(OnPolicyAlgorithm):
    """Proximal Policy Optimization (clip variant).

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"`` (images), ``"MultiInputPolicy"`` (Dict observations), or a
            policy class / import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size: number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per rollout; the rollout holds ``n_steps * n_envs`` transitions.
        batch_size: minibatch size.
        n_epochs: passes over the rollout per iteration.
        gamma: discount factor.
        gae_lambda: GAE lambda.
        clip_range: clipping of the probability ratio (number, ``"lin_<start>"`` or callable).
        clip_range_vf: clipping of the value prediction around the old value; ``None`` disables it.
            Depends on the reward scale.
        normalize_advantage: normalise advantages within each minibatch.
        ent_coef: entropy bonus weight.
        vf_coef: value loss weight.
        max_grad_norm: gradient clipping by global norm.
        use_sde: generalized State-Dependent Exploration (gSDE) for Box actions instead of independent
            Gaussian noise; its settings (``log_std_init``, ``full_std``, ``use_expln``, ``squash_output``)
            go in ``policy_kwargs``.
        sde_sample_freq: resample the gSDE noise every this many steps (-1: once per rollout).
        rollout_buffer_class / rollout_buffer_kwargs: SB3's ``RolloutBuffer`` / ``DictRolloutBuffer`` (or a
            subclass adding to them) that ``rollout_buffer`` is, and its extra arguments.
        target_kl: stop an iteration's epochs early when the approximate KL exceeds ``1.5 * target_kl``.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``ortho_init``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
        compile: run each minibatch update (the policy's evaluation of the minibatch, the clipped loss,
            gradients, clipping, Adam) as one program compiled with ``torch.compile``
            (``lit_sb3_core.sdk.CompiledStep``): same learning, within float rounding; the first update of
            a run compiles (seconds with a warm on-disk cache, a minute or more cold), a truncated last
            minibatch compiles once more. Adam/AdamW optimizers, one process. The rollout's policy pass
            then runs in numpy where it can (Discrete actions, flat observations,
            ``lit_sb3_core.sdk.OnPolicyAlgorithm.rollout_forward``): the same draws, values within rounding.
            Off by default.
    """

    algo_name: ClassVar[str] = "ppo"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 600_000
    policy_aliases: ClassVar[dict[str, Any]] = ACTOR_CRITIC_ALIASES
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    # Whether batch_size=None (one minibatch of the whole rollout) is allowed: not in SB3's PPO.
    whole_rollout_batches: ClassVar[bool] = False

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 3e-4,
        n_steps: int = 2048,
        batch_size: int = 64,
        n_epochs: int = 10,
        gamma: float = 0.99,
        gae_lambda: float = 0.95,
        clip_range: float | str | Schedule = 0.2,
        clip_range_vf: float | str | Schedule | None = None,
        normalize_advantage: bool = True,
        ent_coef: float = 0.0,
        vf_coef: float = 0.5,
        max_grad_norm: float | None = 0.5,
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        rollout_buffer_class: Any = None,
        rollout_buffer_kwargs: dict[str, Any] | None = None,
        target_kl: float | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        compile: CompileChoice = False,
    ) -> None:
        self.normalize_advantage = check_bool("normalize_advantage", normalize_advantage)
        init_compile(self, compile)
        self._compiled_step: CompiledStep | None = None
        # Advantages are normalized per minibatch (at least 2 samples); None (RecurrentPPO): the whole rollout.
        self.batch_size = check_int(
            "batch_size", batch_size, minimum=1, allow_none=self.whole_rollout_batches
        )
        if self.batch_size == 1 and self.normalize_advantage:
            raise ConflictingOptionsError(
                "batch_size must be greater than 1 with normalize_advantage=True (the advantages of one sample "
                "have no spread): raise batch_size or pass normalize_advantage=False.",
                field="batch_size",
            )
        self.n_epochs = check_positive_int("n_epochs", n_epochs)
        if isinstance(clip_range_vf, (int, float)):  # None disables it; a schedule string below
            check_positive_number(
                "clip_range_vf",
                clip_range_vf,
                hint="It is a range in value units; pass None to leave the value predictions unclipped.",
                error=InvalidArgumentError,  # SB3 asserts
            )
        self.clip_range = make_schedule(clip_range, "clip_range")
        self.clip_range_vf = None if clip_range_vf is None else make_schedule(clip_range_vf, "clip_range_vf")
        self.target_kl = check_positive_number("target_kl", target_kl, allow_none=True)
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

    def validate_rollout_size(self, rollout_size: int) -> None:
        """Warn, as SB3 does, when minibatches of ``batch_size`` do not tile the rollout; a ``batch_size``
        larger than the rollout trains on the whole rollout as one minibatch each epoch (SB3 accepts it)."""
        if self.batch_size > rollout_size:
            warnings.warn(
                f"PPO: batch_size={self.batch_size} is larger than the rollout ({rollout_size} = n_steps * "
                f"n_envs{' per process' if self.world_size > 1 else ''}), so each epoch is one minibatch of the "
                f"whole rollout. Lower batch_size to {rollout_size} or less, or collect more steps per rollout.",
                UserWarning,
                stacklevel=2,
            )
            return
        remainder = rollout_size % self.batch_size
        if remainder:
            warnings.warn(
                f"PPO: the rollout ({rollout_size} = n_steps * n_envs) is not a multiple of batch_size="
                f"{self.batch_size}: after every {rollout_size // self.batch_size} untruncated mini-batches, there "
                f"will be a truncated mini-batch of size {remainder}. Consider "
                f"batch_size={self._divisor_near(rollout_size)}.",
                UserWarning,
                stacklevel=2,
            )

    def _divisor_near(self, rollout_size: int) -> int:
        divisors = [d for d in range(2, rollout_size + 1) if rollout_size % d == 0]
        return min(divisors, key=lambda d: abs(d - self.batch_size))

    def epoch_minibatches(self) -> Iterable[Any]:
        """One epoch's minibatches of the rollout buffer, shuffled (SB3's ``rollout_buffer.get``).

        Each needs ``advantages``, ``old_log_prob``, ``old_values`` and ``returns`` (one entry per sample)
        and whatever ``evaluate_minibatch`` reads; RecurrentPPO yields whole sequences instead.
        """
        assert self.rollout is not None
        return self.rollout.minibatches(self.batch_size)

    def evaluate_minibatch(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Values, log-probabilities and entropy (None: estimated from the log-probabilities) of a
        minibatch's actions under the current policy: the one place the update calls the policy.

        MaskablePPO passes the stored action masks; RecurrentPPO the sequences' LSTM states.
        """
        return self.policy.evaluate_actions(batch.observations, batch.actions)

    def minibatch_loss(
        self,
        batch: Any,
        values: torch.Tensor,
        log_prob: torch.Tensor,
        entropy: torch.Tensor | None,
        clip_range: Any,
        clip_range_vf: Any,
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The clipped-surrogate loss of one minibatch and its logged terms (detached): the same code
        for the eager and the compiled update. The clip ranges are floats (eager) or 0-d tensors (compiled);
        ``clip_range_vf`` None: no value clipping."""
        advantages = batch.advantages
        if self.normalize_advantage and len(advantages) > 1:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        log_ratio = log_prob - batch.old_log_prob
        ratio = torch.exp(log_ratio)
        surrogate = torch.min(
            advantages * ratio, advantages * torch.clamp(ratio, 1 - clip_range, 1 + clip_range)
        )
        policy_loss = -surrogate.mean()

        if clip_range_vf is not None:
            values = batch.old_values + torch.clamp(values - batch.old_values, -clip_range_vf, clip_range_vf)
        value_loss = F.mse_loss(batch.returns, values)
        entropy_loss = -torch.mean(entropy) if entropy is not None else -torch.mean(-log_prob)
        loss = policy_loss + self.ent_coef * entropy_loss + self.vf_coef * value_loss

        with torch.no_grad():
            stats = {
                "policy_loss": policy_loss.detach(),
                "value_loss": value_loss.detach(),
                "entropy_loss": entropy_loss.detach(),
                "clip_fraction": torch.mean((torch.abs(ratio - 1) > clip_range).float()),
            }
            if self._kl_wanted:
                stats["approx_kl"] = torch.mean((ratio - 1) - log_ratio)
        return loss, stats

    # Whether ``minibatch_loss`` computes the approximate KL: always, but for the eager update without
    # ``target_kl``, which logs the last epoch's KL only (three operators per minibatch saved in the others).
    _kl_wanted: bool = True
    # Inductor options of the compiled minibatch update (``CompiledStep(options=...)``); variants add theirs.
    compile_options: ClassVar[dict[str, Any]] = {}

    def compiled_step(self) -> CompiledStep:
        """The compiled minibatch update (built once, compiled on its first call, kept across ``learn``)."""
        if self.world_size > 1:
            raise ConfigurationError(
                "PPO(compile=True) compiles the single-process update (no gradient all-reduce); train with "
                "compile=False under DDP."
            )
        step = self._compiled_step
        gate = None if self.target_kl is None else "apply"
        if (
            step is None
            or step.network.policy is not self.policy
            or not step.clips_at(self.max_grad_norm)
            or step.gate != gate
        ):
            step = CompiledStep(
                _Evaluation(self),
                self._compiled_loss,
                self.max_grad_norm,
                has_aux=True,
                gate=gate,
                options=self.compile_options,
            )
            self._compiled_step = step
        return step

    def _compiled_loss(
        self, evaluate: Any, batch: Any, clip_range: torch.Tensor, clip_range_vf: torch.Tensor | None
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``minibatch_loss`` with the traced weights; with ``target_kl``, ``apply`` gates the update as the
        eager loop's early stop does (a minibatch whose KL is too large is not applied)."""
        values, log_prob, entropy = evaluate(batch)
        loss, stats = self.minibatch_loss(batch, values, log_prob, entropy, clip_range, clip_range_vf)
        if self.target_kl is not None:
            stats["apply"] = ~(stats["approx_kl"] > 1.5 * self.target_kl)
        return loss, stats

    def train_on_rollout(self) -> dict[str, float]:
        """``n_epochs`` passes of clipped-surrogate minibatch updates over the rollout buffer."""
        buffer, policy = self.rollout, self.policy
        assert buffer is not None and isinstance(policy, torch.nn.Module)
        optimizer = self.optimizers()
        learning_rate = self.update_learning_rate(optimizer)
        clip_range = self.clip_range(self.progress_remaining)
        clip_range_vf = self.clip_range_vf(self.progress_remaining) if self.clip_range_vf else None

        # Per-minibatch values stay tensors and are reduced once at the end: no .item() in the loop.
        pg_losses: list[torch.Tensor] = []
        value_losses: list[torch.Tensor] = []
        entropy_losses: list[torch.Tensor] = []
        clip_fractions: list[torch.Tensor] = []
        approx_kls: list[torch.Tensor] = []
        loss = torch.zeros(())
        compiled = self.compiled_step() if self.compile_update else None
        if compiled is not None:  # schedules enter the program as tensors: no recompiling as they change
            ranges = (
                torch.tensor(clip_range, device=self.device),
                None if clip_range_vf is None else torch.tensor(clip_range_vf, device=self.device),
            )
        continue_training = True
        for epoch in range(self.n_epochs):
            approx_kls = []  # SB3 logs the last epoch's KL; the other means cover every epoch
            self._kl_wanted = compiled is not None or self.target_kl is not None or epoch == self.n_epochs - 1
            for batch in self.epoch_minibatches():
                if compiled is not None:
                    loss, stats = compiled(optimizer, batch, *ranges)
                else:
                    values, log_prob, entropy = self.evaluate_minibatch(batch)
                    loss, stats = self.minibatch_loss(
                        batch, values, log_prob, entropy, clip_range, clip_range_vf
                    )
                pg_losses.append(stats["policy_loss"])
                value_losses.append(stats["value_loss"])
                entropy_losses.append(stats["entropy_loss"])
                clip_fractions.append(stats["clip_fraction"])
                approx_kl = stats.get("approx_kl")
                if approx_kl is not None:
                    approx_kls.append(approx_kl)

                # Under DDP the ranks must agree to stop, or their gradient all-reduces would not match.
                # The compiled step already skipped the update of this minibatch (its gate).
                if self.target_kl is not None and (
                    not bool(stats["apply"])
                    if compiled is not None
                    else self.ranks.all_reduce(stats["approx_kl"]).item() > 1.5 * self.target_kl
                ):
                    continue_training = False
                    if self.verbose >= 1:
                        print(
                            f"Early stopping at step {self.n_updates} due to reaching max kl: "
                            f"{stats['approx_kl']:.2f}"
                        )
                    break
                if compiled is None:
                    self.optimizer_step(optimizer, loss, self.max_grad_norm)
            self.n_updates += 1
            if not continue_training:
                break

        metrics = {
            "train/entropy_loss": torch.stack(entropy_losses).mean().item(),
            "train/policy_gradient_loss": torch.stack(pg_losses).mean().item(),
            "train/value_loss": torch.stack(value_losses).mean().item(),
            "train/approx_kl": torch.stack(approx_kls).mean().item(),
            "train/clip_fraction": torch.stack(clip_fractions).mean().item(),
            "train/loss": float(loss.item()),
            "train/explained_variance": explained_variance(buffer.values.flatten(), buffer.returns.flatten()),
            "train/n_updates": self.n_updates,
            "train/clip_range": clip_range,
            "train/learning_rate": learning_rate,
        }
        log_std = getattr(policy, "log_std", None)  # Gaussian policies only
        if log_std is not None:
            metrics["train/std"] = torch.exp(log_std).mean().item()
        if clip_range_vf is not None:
            metrics["train/clip_range_vf"] = clip_range_vf
        return metrics


class _Evaluation(torch.nn.Module):
    """``algorithm.evaluate_minibatch`` as a module whose only parameters are the policy's: the compiled
    step evaluates it with its traced weights (``torch.func.functional_call``)."""

    def __init__(self, algorithm: PPO) -> None:
        super().__init__()
        self.policy = algorithm.policy
        self.evaluate_minibatch = algorithm.evaluate_minibatch

    def forward(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        return self.evaluate_minibatch(batch)
