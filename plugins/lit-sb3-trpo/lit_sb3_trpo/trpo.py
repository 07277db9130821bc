"""Trust Region Policy Optimization.

Schulman et al., "Trust Region Policy Optimization", 2015. https://arxiv.org/abs/1502.05477

Each iteration collects ``n_steps`` steps from each environment (``OnPolicyAlgorithm.collect_rollout``),
then makes one constrained step on the policy and fits the value function:

1. Policy step: maximise the surrogate ``L(theta) = E[r(theta) A]`` (``r`` the probability ratio to the
   rollout policy, ``A`` the GAE advantage) subject to ``E[KL(pi_theta || pi_old)] <= target_kl``. The
   direction ``s = F^-1 g`` comes from conjugate gradients (:func:`~lit_sb3_trpo.trust_region.conjugate_gradient`)
   with Fisher-vector products computed as Hessian-vector products of the KL (``F`` is never formed;
   ``cg_damping`` is added to its diagonal). The largest step allowed by the quadratic KL model,
   ``sqrt(2 target_kl / s^T F s) s``, is shrunk by ``line_search_shrinking_factor`` until the true KL is
   below ``target_kl`` and the surrogate improves; if no step qualifies the policy is left unchanged.
   This step is written straight into the actor's parameters: it is not a gradient-descent step.
2. Critic: ``n_critic_updates`` epochs of Adam minibatch regression of ``V`` on the returns, through
   Lightning's manual optimization (``self.optimizers()``, ``manual_backward``), with the gradients of
   parameters shared with the actor dropped so the critic cannot move the policy outside the trust region.

Defaults and logged metrics are those of sb3-contrib's TRPO. Under DDP the policy gradient, the
Fisher-vector products and the line search's KL and surrogate are averaged over ranks, so every rank takes
the same step.

What compile=True compiles. TRPO's gradient steps are the critic's: ``n_critic_updates`` epochs of Adam
minibatch steps (40 per rollout with rl-zoo3's CartPole settings, 240 with its Pendulum ones), each a
forward and backward pass of the value network and Adam, dispatched operator by operator. Each becomes one
compiled program (``CompiledStep`` over the parameters the actor does not use: the others enter as
constants and get no Adam state, as eagerly their gradients are None): 0.6 ms instead of 1.0 ms per step
on CartPole. The policy step is not a gradient step and stays eager, measured (2026-12-05, one thread):
one program for the objective's gradient, conjugate gradients as ``cg_max_steps`` fixed iterations (the
residual test as a mask) and the curvature ``s^T F s``, with the Fisher-vector products as ``torch.func``
Hessian-vector products (reverse-over-reverse or forward-over-reverse), found the same direction within
rounding but took 31-38 ms against eager's 30-31 on CartPole and 62-75 ms against 31-33 on Pendulum with
gSDE. That step is matrix products (17 double-backward passes over the whole rollout, ~half of its time in
``mm`` eagerly), which compiling does not speed up, and inductor's program ran more of them. Conjugate
gradients are ~80 % of the policy step; the curvature product and the line search together 4-6 ms of its
40-48, so a compiled line search would save little and add a compile. The step's data-dependent decisions
(the residual test, the accepted step) are therefore eager's own.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, ClassVar, cast

import torch
import torch.nn.functional as F

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    ACTOR_CRITIC_ALIASES,
    CompileChoice,
    CompiledStep,
    OnPolicyAlgorithm,
    RolloutBatch,
    Schedule,
    check_bool,
    check_number,
    check_positive_int,
    check_positive_number,
    explained_variance,
    init_compile,
)
from lit_sb3_trpo.hyperparams import TUNED
from lit_sb3_trpo.trust_region import conjugate_gradient, mean_kl

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer


__all__ = ["TRPO"]


def _every_kth(batch: RolloutBatch, k: int) -> RolloutBatch:
    """Every k-th transition of a (shuffled) batch: Schulman's thesis sub-sampling for the policy step."""
    obs = batch.observations
    obs = {key: value[::k] for key, value in obs.items()} if isinstance(obs, dict) else obs[::k]
    return RolloutBatch(obs, *(field[::k] for field in batch[1:]))


class TRPO(OnPolicyAlgorithm):
    """Trust Region Policy Optimization with conjugate gradients and a backtracking line search.

    Args:
        policy: ``"MlpPolicy"`` (or another alias of ``ACTOR_CRITIC_ALIASES``), a policy class or import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size of the *value function* (the policy step size comes from ``target_kl``):
            number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per rollout; the rollout holds ``n_steps * n_envs`` transitions.
        batch_size: minibatch size of the value-function updates.
        gamma: discount factor.
        cg_max_steps: conjugate-gradient iterations (Fisher-vector products) per policy step.
        cg_damping: added to the Fisher matrix's diagonal; keeps the solve well conditioned.
        line_search_shrinking_factor: step multiplier after each rejected line-search trial (in (0, 1)).
        line_search_max_iter: line-search trials before the step is abandoned.
        n_critic_updates: epochs of value-function minibatch updates per rollout.
        gae_lambda: GAE lambda.
        use_sde: generalized State-Dependent Exploration (gSDE) for Box actions instead of independent
            Gaussian noise; its settings (``log_std_init``, ``full_std``, ``use_expln``, ...) go in ``policy_kwargs``.
        sde_sample_freq: resample the gSDE noise every this many steps (-1: once per rollout).
        rollout_buffer_class / rollout_buffer_kwargs: SB3's ``RolloutBuffer`` / ``DictRolloutBuffer`` (or a
            subclass adding to them) that ``rollout_buffer`` is, and its extra arguments.
        normalize_advantage: normalise advantages over the rollout.
        target_kl: trust-region radius, the largest mean KL between the old and new policy.
        sub_sampling_factor: use every k-th transition for the policy step (faster; see Schulman's thesis,
            http://joschu.net/docs/thesis.pdf, pp. 40-42). The critic always sees the whole rollout.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``ortho_init``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
        compile: run each of the critic's minibatch steps (the value prediction, the regression loss, its
            gradients, Adam) as one program compiled with ``torch.compile`` (``lit_sb3_core.sdk.CompiledStep``):
            same learning, within float rounding; the first update of a run compiles (seconds with a warm
            on-disk cache, half a minute or more cold), a truncated last minibatch compiles once more. The
            policy step stays eager (see "What compile=True compiles" in the module docstring). Adam/AdamW
            optimizers, one process; gSDE works. The rollout's policy pass then runs in numpy where it can
            (Discrete actions, flat observations, ``lit_sb3_core.sdk.OnPolicyAlgorithm.rollout_forward``):
            the same draws, values within rounding.
            Off by default.
    """

    algo_name: ClassVar[str] = "trpo"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 600_000
    policy_aliases: ClassVar[dict[str, Any]] = ACTOR_CRITIC_ALIASES
    validate_rollout_at_construction: ClassVar[bool] = True  # sb3-contrib checks the rollout size there
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 1e-3,
        n_steps: int = 2048,
        batch_size: int = 128,
        gamma: float = 0.99,
        cg_max_steps: int = 15,
        cg_damping: float = 0.1,
        line_search_shrinking_factor: float = 0.8,
        line_search_max_iter: int = 10,
        n_critic_updates: int = 10,
        gae_lambda: float = 0.95,
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        rollout_buffer_class: Any = None,
        rollout_buffer_kwargs: dict[str, Any] | None = None,
        normalize_advantage: bool = True,
        target_kl: float = 0.01,
        sub_sampling_factor: int = 1,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        compile: CompileChoice = False,
    ) -> None:
        init_compile(self, compile)
        self._critic_step: CompiledStep | None = None
        self.batch_size = check_positive_int("batch_size", batch_size)
        self.cg_max_steps = check_positive_int("cg_max_steps", cg_max_steps)
        self.cg_damping = check_number("cg_damping", cg_damping, minimum=0)
        # Each trial of the line search is shorter than the one before: a factor in (0, 1).
        self.line_search_shrinking_factor = check_number(
            "line_search_shrinking_factor",
            line_search_shrinking_factor,
            minimum=0,
            maximum=1,
            exclusive_minimum=True,
            exclusive_maximum=True,
        )
        self.line_search_max_iter = check_positive_int("line_search_max_iter", line_search_max_iter)
        self.n_critic_updates = check_positive_int("n_critic_updates", n_critic_updates)
        self.target_kl = check_positive_number("target_kl", target_kl)
        self.sub_sampling_factor = check_positive_int("sub_sampling_factor", sub_sampling_factor)
        self.normalize_advantage = check_bool("normalize_advantage", normalize_advantage)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            n_steps=n_steps,
            gamma=gamma,
            gae_lambda=gae_lambda,
            ent_coef=0.0,
            vf_coef=0.0,
            max_grad_norm=None,
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
        policy_samples = -(-rollout_size // self.sub_sampling_factor)
        if self.normalize_advantage and policy_samples < 2:
            raise ConfigurationError(
                f"TRPO: the policy step sees {policy_samples} transition(s) (rollout {rollout_size} = n_steps * "
                f"n_envs, sub_sampling_factor={self.sub_sampling_factor}); advantage normalization needs at "
                "least 2. Increase n_steps or n_envs, or lower sub_sampling_factor."
            )
        if self.batch_size > rollout_size:  # SB3 accepts it: the critic trains on the whole rollout
            warnings.warn(
                f"TRPO: batch_size={self.batch_size} is larger than the rollout ({rollout_size} = n_steps * "
                "n_envs), so each critic epoch is one minibatch of the whole rollout. Lower batch_size to "
                f"{rollout_size} or less, or collect more steps per rollout.",
                UserWarning,
                stacklevel=2,
            )
            return
        remainder = rollout_size % self.batch_size
        if remainder:
            warnings.warn(
                f"TRPO: the rollout ({rollout_size} = n_steps * n_envs) is not a multiple of batch_size="
                f"{self.batch_size}, so each critic epoch ends with a truncated minibatch of {remainder}. "
                "Choose a batch_size that divides the rollout.",
                UserWarning,
                stacklevel=2,
            )

    # distributed helpers ---------------------------------------------------------------------------
    def _mean_over_ranks(self, tensor: torch.Tensor) -> torch.Tensor:
        if self.world_size == 1:
            return tensor
        return self.trainer.strategy.reduce(tensor, reduce_op="mean")

    def _cg_start(self, b: torch.Tensor) -> torch.Tensor:
        # A tiny random start, as sb3-contrib does: a zero start stalls when the gradient is nearly zero.
        x0 = 1e-4 * torch.randn_like(b)
        if self.world_size > 1:
            x0 = self.trainer.strategy.broadcast(x0, src=0)
        return x0

    # the update ------------------------------------------------------------------------------------
    def train_on_rollout(self) -> dict[str, float]:
        """One trust-region policy step, then ``n_critic_updates`` epochs of value regression."""
        buffer, policy = self.rollout, self.policy
        assert buffer is not None and isinstance(policy, torch.nn.Module)
        optimizer = cast("LightningOptimizer", self.optimizers())  # one optimizer: the critic's
        learning_rate = self.update_learning_rate(optimizer)

        (batch,) = buffer.minibatches(None)
        if self.sub_sampling_factor > 1:
            batch = _every_kth(batch, self.sub_sampling_factor)
        actor_params, objective, kl, success = self._policy_step(batch)

        value_losses: list[torch.Tensor] = []
        distributed = self.world_size > 1
        critic_step = self.compiled_critic_step(actor_params) if self.compile_update else None
        for _ in range(self.n_critic_updates):
            for minibatch in buffer.minibatches(self.batch_size):
                if critic_step is not None:
                    value_losses.append(critic_step(optimizer, minibatch.observations, minibatch.returns))
                    continue
                value_loss = F.mse_loss(minibatch.returns, policy.predict_values(minibatch.observations))
                optimizer.zero_grad(set_to_none=True)
                if distributed:
                    # DDP's reducer expects a gradient for every parameter: the actor's join with weight 0
                    # (and are dropped below), so plain strategy="ddp" works without find_unused_parameters.
                    self.manual_backward(value_loss + 0.0 * sum(p.sum() for p in actor_params))
                else:
                    self.manual_backward(value_loss)
                for param in actor_params:  # shared with the actor: moving them would leave the trust region
                    param.grad = None
                optimizer.step()
                value_losses.append(value_loss.detach())
        self.n_updates += 1

        metrics = {
            "train/policy_objective": objective,
            "train/value_loss": torch.stack(value_losses).mean().item(),
            "train/kl_divergence_loss": kl,
            "train/explained_variance": explained_variance(buffer.values.flatten(), buffer.returns.flatten()),
            "train/is_line_search_success": float(success),
            "train/n_updates": self.n_updates,
            "train/learning_rate": learning_rate,
        }
        log_std = getattr(policy, "log_std", None)  # Gaussian policies only
        if log_std is not None:
            metrics["train/std"] = torch.exp(log_std).mean().item()
        return metrics

    def compiled_critic_step(self, actor_params: list[torch.nn.Parameter]) -> CompiledStep:
        """The compiled critic minibatch step: Adam on the parameters the actor does not use (built once per
        policy, compiled on its first call, kept across ``learn``)."""
        if self.world_size > 1:
            raise ConfigurationError(
                "TRPO(compile=True) compiles the single-process critic step (no gradient all-reduce); train "
                "with compile=False under DDP."
            )
        policy = self.policy
        assert isinstance(policy, torch.nn.Module)
        actor_ids = {id(param) for param in actor_params}
        # Trained: what the eager step gives a gradient (not the actor's, not a frozen parameter).
        critic = [p for p in policy.parameters() if p.requires_grad and id(p) not in actor_ids]
        step = self._critic_step
        if (
            step is None
            or step.network.policy is not policy
            or [id(p) for p in step.trained] != list(map(id, critic))
        ):
            step = CompiledStep(_Values(policy), _value_loss, trained=critic)
            self._critic_step = step
        return step

    def _policy_step(self, batch: RolloutBatch) -> tuple[list[torch.nn.Parameter], float, float, bool]:
        """Natural-gradient step with a backtracking line search; returns (actor params, objective, KL, success)."""
        policy = self.policy
        assert policy is not None
        obs, actions = batch.observations, batch.actions
        advantages = batch.advantages
        if self.normalize_advantage:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        with torch.no_grad():
            old_distribution = policy.get_distribution(obs)
        distribution = policy.get_distribution(obs)
        ratio = torch.exp(distribution.log_prob(actions) - batch.old_log_prob)
        objective = (advantages * ratio).mean()
        kl = mean_kl(distribution, old_distribution)

        # The actor's parameters are those the action distribution depends on (critic-only ones are unused).
        trainable = [p for p in policy.parameters() if p.requires_grad]
        kl_grads = torch.autograd.grad(kl, trainable, create_graph=True, allow_unused=True)
        actor_params = [p for p, g in zip(trainable, kl_grads) if g is not None]
        flat_kl_grad = torch.cat([g.reshape(-1) for g in kl_grads if g is not None])
        objective_grads = torch.autograd.grad(objective, actor_params, retain_graph=True)
        g = self._mean_over_ranks(torch.cat([grad.reshape(-1) for grad in objective_grads]).detach())

        def fisher_vector_product(vector: torch.Tensor, retain_graph: bool = True) -> torch.Tensor:
            grads = torch.autograd.grad(flat_kl_grad @ vector, actor_params, retain_graph=retain_graph)
            product = self._mean_over_ranks(torch.cat([grad.reshape(-1) for grad in grads]))
            return product + self.cg_damping * vector

        direction = conjugate_gradient(
            fisher_vector_product, g, max_iter=self.cg_max_steps, x0=self._cg_start(g)
        )
        curvature = float((direction @ fisher_vector_product(direction, retain_graph=False)).item())
        objective_before = float(self._mean_over_ranks(objective.detach()).item())
        if not (math.isfinite(curvature) and curvature > 0):
            # A vanishing gradient (e.g. all advantages equal) gives no direction to step in.
            return actor_params, objective_before, 0.0, False
        max_step = math.sqrt(2 * self.target_kl / curvature)

        originals = [p.detach().clone() for p in actor_params]
        sizes = [p.numel() for p in actor_params]
        coefficient = 1.0
        with torch.no_grad():
            for _ in range(self.line_search_max_iter):
                steps = (coefficient * max_step * direction).split(sizes)
                for param, original, step in zip(actor_params, originals, steps):
                    # New storage, not an in-place copy: old_distribution may hold views of the parameters
                    # (a Gaussian's log_std) and must keep describing the rollout policy.
                    param.data = original + step.view_as(param)
                trial = policy.get_distribution(obs)
                new_ratio = torch.exp(trial.log_prob(actions) - batch.old_log_prob)
                new_objective = self._mean_over_ranks((advantages * new_ratio).mean())
                new_kl = self._mean_over_ranks(mean_kl(trial, old_distribution))
                new_objective_value, new_kl_value = float(new_objective.item()), float(new_kl.item())
                if new_kl_value < self.target_kl and new_objective_value > objective_before:
                    return actor_params, new_objective_value, new_kl_value, True
                coefficient *= self.line_search_shrinking_factor
            for param, original in zip(actor_params, originals):
                param.data = original
        return actor_params, objective_before, 0.0, False


def _value_loss(predict_values: Any, observations: Any, returns: torch.Tensor) -> torch.Tensor:
    """The critic's regression loss, as the eager loop computes it."""
    return F.mse_loss(returns, predict_values(observations))


class _Values(torch.nn.Module):
    """The policy's ``predict_values`` as a module whose only parameters are the policy's: the compiled
    critic step evaluates it with its traced weights (``torch.func.functional_call``)."""

    def __init__(self, policy: torch.nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, observations: Any) -> torch.Tensor:
        return self.policy.predict_values(observations)  # type: ignore[operator]
