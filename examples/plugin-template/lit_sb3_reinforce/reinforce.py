"""REINFORCE: the Monte-Carlo policy gradient, with an optional learned value baseline.

Williams, "Simple Statistical Gradient-Following Algorithms for Connectionist Reinforcement Learning",
Machine Learning 8, 1992. https://doi.org/10.1007/BF00992696

Each iteration collects ``n_steps`` steps from each environment (``OnPolicyAlgorithm.collect_rollout``)
and takes one gradient step on the whole rollout, minimising

    L = -E[w_t log pi(a_t|s_t)] - ent_coef * H[pi(.|s_t)]  (+ vf_coef * (V(s_t) - G_t)^2 with a baseline)

where ``G_t`` is the discounted return from step t (the rollout buffer computes it: GAE with
``gae_lambda=1`` is exactly the Monte-Carlo return) and the weight ``w_t`` is ``G_t`` itself, or
``G_t - V(s_t)`` with ``use_baseline=True``. Without a baseline nothing is bootstrapped: an episode that the
rollout cuts, or that is truncated, counts only the rewards seen. With a baseline, V bootstraps those.

This file is the template for writing an algorithm on the lit-sb3 SDK: subclass ``OnPolicyAlgorithm``,
validate and store the hyperparameters, call ``super().__init__``, and implement ``train_on_rollout``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from lit_sb3_core.sdk import (
    ACTOR_CRITIC_ALIASES,
    OnPolicyAlgorithm,
    Schedule,
    check_bool,
    check_number,
    check_positive_number,
    explained_variance,
)

__all__ = ["REINFORCE"]

# OnPolicyAlgorithm arguments REINFORCE fixes: Monte-Carlo returns and plain Gaussian exploration.
_FIXED: dict[str, Any] = {"gae_lambda": 1.0, "use_sde": False, "sde_sample_freq": -1}


class REINFORCE(OnPolicyAlgorithm):
    """REINFORCE (vanilla policy gradient).

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"`` (images), ``"MultiInputPolicy"`` (Dict observations), or
            a policy class / import path. The actor-critic policy's value head is the baseline.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size: number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per update; make it longer than a typical episode so most returns
            are complete Monte-Carlo returns.
        gamma: discount factor of the returns.
        use_baseline: subtract a learned state value ``V(s)`` from the returns (lower variance, same
            expected gradient) and bootstrap cut episodes with it.
        normalize_advantage: standardise the weights over the rollout (a common variance reduction).
        ent_coef: entropy bonus weight.
        vf_coef: value loss weight (with ``use_baseline`` only).
        max_grad_norm: gradient clipping by global norm (``None``: no clipping).
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``ortho_init``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
    """

    algo_name: ClassVar[str] = "reinforce"
    policy_aliases: ClassVar[dict[str, Any]] = ACTOR_CRITIC_ALIASES
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = {
        # "n_envs" and "n_timesteps" are run settings for `lit-sb3 train`, the rest constructor arguments.
        "CartPole-v1": {"n_envs": 4, "n_timesteps": 100_000, "n_steps": 256, "learning_rate": 0.01},
    }

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 1e-3,
        n_steps: int = 1024,
        gamma: float = 0.99,
        use_baseline: bool = True,
        normalize_advantage: bool = True,
        ent_coef: float = 0.0,
        vf_coef: float = 0.5,
        max_grad_norm: float | None = 0.5,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
    ) -> None:
        # Validate before anything is built, with the SDK's validators: each bad value gets the same
        # message as in every other algorithm (what was given, what is allowed), and a value read back from a
        # model file or checkpoint is named there. (OnPolicyAlgorithm checks its own arguments.)
        self.use_baseline = check_bool("use_baseline", use_baseline)
        self.normalize_advantage = check_bool("normalize_advantage", normalize_advantage)
        check_number("ent_coef", ent_coef, minimum=0.0)
        check_number("vf_coef", vf_coef, minimum=0.0)
        check_positive_number("max_grad_norm", max_grad_norm, allow_none=True)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            n_steps=n_steps,
            gamma=gamma,
            ent_coef=ent_coef,
            vf_coef=vf_coef,
            max_grad_norm=max_grad_norm,
            policy_kwargs=policy_kwargs,
            seed=seed,
            verbose=verbose,
            device=device,
            tensorboard_log=tensorboard_log,
            **_FIXED,  # not saved as hyperparameters: the base class keeps only this constructor's arguments
        )

    def rollout_values(self, obs: Any, env_indices: Any = None) -> torch.Tensor:
        """The bootstrap value of cut and truncated episodes: V(s) with a baseline, else nothing (0)."""
        if self.use_baseline:
            return super().rollout_values(obs, env_indices)
        batch = next(iter(obs.values())) if isinstance(obs, dict) else obs
        return torch.zeros(len(batch), device=self.device)

    def train_on_rollout(self) -> dict[str, float]:
        """One policy-gradient step on the whole rollout (plus the baseline's regression, if any)."""
        buffer, policy = self.rollout, self.policy
        assert buffer is not None
        optimizer = self.optimizers()
        learning_rate = self.update_learning_rate(optimizer)

        (batch,) = buffer.minibatches(None)  # the whole rollout as one batch, in order
        values, log_prob, entropy = policy.evaluate_actions(batch.observations, batch.actions)
        # With gae_lambda=1, returns are the Monte-Carlo returns G_t and advantages are G_t - V_old(s_t).
        weights = batch.advantages if self.use_baseline else batch.returns
        if self.normalize_advantage and len(weights) > 1:
            weights = (weights - weights.mean()) / (weights.std() + 1e-8)
        policy_loss = -(weights * log_prob).mean()
        # Without a closed-form entropy (gSDE-like distributions), -log_prob estimates it.
        entropy_loss = -torch.mean(entropy) if entropy is not None else torch.mean(log_prob)
        loss = policy_loss + self.ent_coef * entropy_loss
        metrics: dict[str, float] = {}
        if self.use_baseline:
            value_loss = F.mse_loss(batch.returns, values)
            loss = loss + self.vf_coef * value_loss
            metrics["train/value_loss"] = float(value_loss.item())
            metrics["train/explained_variance"] = explained_variance(
                buffer.values.flatten(), buffer.returns.flatten()
            )
        self.optimizer_step(optimizer, loss, self.max_grad_norm)
        self.n_updates += 1

        metrics.update(
            {
                "train/n_updates": self.n_updates,
                "train/policy_loss": float(policy_loss.item()),
                "train/entropy_loss": float(entropy_loss.item()),
                "train/loss": float(loss.item()),
                "train/learning_rate": learning_rate,
            }
        )
        log_std = getattr(policy, "log_std", None)  # Gaussian policies only
        if log_std is not None:
            metrics["train/std"] = torch.exp(log_std).mean().item()
        return metrics
