"""Augmented Random Search: derivative-free policy search with antithetic random perturbations.

Mania, Guy & Recht, "Simple random search provides a competitive approach to reinforcement learning", 2018.
https://arxiv.org/abs/1803.07055 (reference implementation: https://github.com/modestyachts/ARS)

One iteration (one Lightning batch) of ARS-v2t:

1. draw ``n_delta`` directions ``d_k ~ N(0, I)`` in weight space;
2. run the ``2 * n_delta`` candidates ``w +- delta_std * d_k`` for ``n_eval_episodes`` whole episodes each
   on the training environments and sum their returns ``r+_k``, ``r-_k``;
3. keep the ``n_top`` directions with the best ``max(r+_k, r-_k)`` and step
   ``w += learning_rate / (n_top * sigma_R) * sum_k (r+_k - r-_k) d_k``, ``sigma_R`` the std of the kept returns;
4. with ``RLEnvDataModule(normalize="observation")`` (ARS-v2), fold the iteration's observations into the
   running mean and variance observations are normalized with; they stay frozen during an iteration, so
   every candidate is scored with the same normalization, and travel with the model.

There is no gradient and no optimizer (``configure_optimizers`` returns ``None``): the weights are written
directly. With several training environments, candidates run side by side, one per environment, through
``ARSPolicy.forward_batch``. Every environment step counts in ``num_timesteps``. Defaults and logged metrics
are sb3-contrib's ARS.

Under DDP (``RLTrainer(strategy="ddp", devices=N)``) the ranks share the work of step 2, as the paper's
parallel version does: every rank draws the same directions (broadcast from rank 0), scores its share of
the candidates on its own environments, and the scores, step counts, episode statistics and observation
moments are summed over the ranks, so every rank takes the same step and the weights stay identical.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from torch.nn.utils import parameters_to_vector, vector_to_parameters

from lit_sb3_ars.hyperparams import TUNED
from lit_sb3_ars.policies import ARS_POLICY_ALIASES, ARSPolicy
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    RLAlgorithm,
    Schedule,
    check_bool,
    check_number,
    check_positive_int,
    make_schedule,
    obs_to_tensor,
    swapped_env,
    to_numpy,
)

if TYPE_CHECKING:
    from typing import Self

__all__ = ["ARS"]


class ARS(RLAlgorithm):
    """Augmented Random Search (ARS-v2t) for Box and Discrete actions.

    Args:
        policy: ``"MlpPolicy"``, ``"LinearPolicy"``, or an ``ARSPolicy`` subclass (class or import path).
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        n_delta: random directions tried per iteration (``2 * n_delta`` candidates are evaluated).
        n_top: directions kept for the update, the best by ``max(r+, r-)``; ``None``: all ``n_delta``.
        learning_rate: step size ``alpha``: number, ``"lin_<start>"`` or callable of progress remaining.
        delta_std: exploration noise ``nu``, the std of the weight perturbations (number or schedule).
        zero_policy: start from all-zero weights (the paper's choice for linear policies).
        alive_bonus_offset: added to the reward of every step when scoring candidates (e.g. -1 cancels the
            +1 "alive" bonus of MuJoCo locomotion tasks, which otherwise rewards standing still).
        n_eval_episodes: episodes per candidate; its score is the sum of their returns.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``with_bias``,
            ``squash_output``).
        stats_window_size: kept for sb3-contrib signature compatibility; ARS reports the episodes of the
            last iteration, as sb3-contrib does.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        seed: random seed for python, numpy, torch and the environments.
        verbose: 1 prints metrics each iteration.
        device: accelerator for ``learn`` (``"cpu"``: ARS's networks are tiny).
    """

    algo_name: ClassVar[str] = "ars"
    dispatches_step_callbacks: ClassVar[bool] = True
    policy_aliases: ClassVar[dict[str, Any]] = ARS_POLICY_ALIASES
    policy: ARSPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "ARSPolicy": "MlpPolicy",
        "ARSLinearPolicy": "LinearPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Box, spaces.Discrete)
    # RLEnvDataModule(normalize="observation"): ARS-v2 (rewards are never normalized, see below).
    supports_normalization: ClassVar[bool] = True
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
        n_delta: int = 8,
        n_top: int | None = None,
        learning_rate: float | str | Schedule = 0.02,
        delta_std: float | str | Schedule = 0.05,
        zero_policy: bool = True,
        alive_bonus_offset: float = 0,
        n_eval_episodes: int = 1,
        policy_kwargs: dict[str, Any] | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        seed: int | None = None,
        verbose: int = 0,
        device: str = "cpu",
    ) -> None:
        self.n_delta = check_positive_int("n_delta", n_delta)
        if n_top is None:
            n_top = n_delta
        self.n_top = check_positive_int("n_top", n_top)
        if self.n_top > self.n_delta:
            warnings.warn(
                f"n_top = {n_top} > n_delta = {n_delta}, setting n_top = n_delta", UserWarning, stacklevel=2
            )
            self.n_top = self.n_delta
        self.n_eval_episodes = check_positive_int("n_eval_episodes", n_eval_episodes)
        self.alive_bonus_offset = check_number("alive_bonus_offset", alive_bonus_offset)
        self.delta_std_schedule = make_schedule(delta_std, "delta_std")
        self.zero_policy = check_bool("zero_policy", zero_policy)
        self.pop_size = 2 * self.n_delta
        self.n_params = 0
        self._episode_metrics: dict[str, float] = {}
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            policy_kwargs=policy_kwargs,
            seed=seed,
            verbose=verbose,
            device=device,
            tensorboard_log=tensorboard_log,
        )
        self._stopped_by_callback = False  # a step callback returned False
        # While learning with async_eval: after each iteration, merges the observation statistics of the
        # workers' VecNormalize envs into the model's own env's (sb3-contrib's AsyncEval contract).
        self._merge_worker_statistics: Callable[[], None] | None = None

    # construction ---------------------------------------------------------------------------------
    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        if not (isinstance(policy_cls, type) and issubclass(policy_cls, ARSPolicy)):
            raise ConfigurationError(
                f"ARS needs an ARS policy ('MlpPolicy', 'LinearPolicy' or a subclass of "
                f"lit_sb3_ars.ARSPolicy), got {getattr(policy_cls, '__name__', policy_cls)!r}."
            )
        assert self.observation_space is not None and self.action_space is not None  # set before this call
        try:
            return policy_cls(self.observation_space, self.action_space, **policy_kwargs)
        except TypeError as exc:
            raise ConfigurationError(f"policy_kwargs do not fit {policy_cls.__name__}: {exc}") from None

    def setup_model(self) -> None:
        """Count the weights and zero them if asked.

        No gradient ever flows (training runs under ``torch.no_grad``), but the weights keep
        ``requires_grad``: Lightning's DDP refuses to wrap a module without trainable parameters.
        """
        policy = self.require_policy()
        self.n_params = int(sum(p.numel() for p in policy.parameters()))
        if self.zero_policy:
            with torch.no_grad():
                for parameter in policy.parameters():
                    parameter.zero_()

    def configure_normalization(self, config: dict[str, Any] | None) -> None:
        if config is not None and config.get("reward"):
            raise ConfigurationError(
                "ARS ranks candidates by their returns, which reward normalization would rescale while they "
                "are compared. Use RLEnvDataModule(normalize='observation') (ARS-v2)."
            )
        super().configure_normalization(config)

    def configure_optimizers(self) -> None:
        """ARS writes the weights itself: no optimizer."""
        return

    # training -------------------------------------------------------------------------------------
    def learn(self, total_timesteps: int, *args: Any, async_eval: Any = None, **kwargs: Any) -> Self:
        """SB3's ``learn``, with sb3-contrib's ``async_eval`` (``lit_sb3.common.vec_env.AsyncEval``).

        The candidates already run side by side on the sub-envs of the training env, so evaluating them in
        worker processes is training on ``async_eval.vec_env`` (a ``SubprocVecEnv``) with its
        ``n_eval_episodes``. As in sb3-contrib, ``async_eval`` is closed when ``learn`` ends; the model's
        own env and ``n_eval_episodes`` are back in place then. When the workers' envs are wrapped in
        ``VecNormalize`` and so is the model's env, the workers' observation statistics are merged into the
        model env's after every iteration and copied back to them (``AsyncEval.merge_obs_rms``).
        """
        if async_eval is None:
            return super().learn(total_timesteps, *args, **kwargs)
        if not (hasattr(async_eval, "n_eval_episodes") and hasattr(async_eval, "close")):
            raise ConfigurationError(
                f"async_eval must be an AsyncEval (from lit_sb3.common.vec_env import AsyncEval), got "
                f"{type(async_eval).__name__}."
            )
        own_n_eval_episodes = self.n_eval_episodes
        own_normalize = self.get_vec_normalize_env() if self.env_source is not None else None
        merge = getattr(async_eval, "merge_obs_rms", None)
        try:
            self.n_eval_episodes = check_positive_int("n_eval_episodes", async_eval.n_eval_episodes)
            if merge is not None and own_normalize is not None:
                self._merge_worker_statistics = lambda: merge(own_normalize)
            with swapped_env(self, async_eval.vec_env):
                return super().learn(total_timesteps, *args, **kwargs)
        finally:
            self._merge_worker_statistics = None
            self.n_eval_episodes = own_n_eval_episodes
            async_eval.close()

    def on_fit_start(self) -> None:
        if self.world_size > self.pop_size:
            raise ConfigurationError(
                f"ARS spreads its 2 * n_delta = {self.pop_size} candidates over the ranks, but there are "
                f"{self.world_size} ranks: raise n_delta to at least {(self.world_size + 1) // 2} or use fewer "
                "devices."
            )
        super().on_fit_start()
        self._stopped_by_callback = False

    @torch.no_grad()
    def training_step(self, batch: Any, batch_idx: int) -> None:
        """One ARS iteration: perturb, evaluate ``2 * n_delta`` candidates, step the weights."""
        policy = self.require_policy()
        assert isinstance(policy, ARSPolicy)
        self.budget.update_progress()
        delta_std = self.delta_std_schedule(self.progress_remaining)
        learning_rate = self.lr_schedule(self.progress_remaining)

        weights = parameters_to_vector(policy.parameters())
        deltas = torch.randn(self.n_delta, self.n_params, device=weights.device)
        if self.world_size > 1:
            deltas = self.trainer.strategy.broadcast(deltas, src=0)  # every rank tries the same directions
        scaled = deltas * delta_std
        candidates = torch.cat([weights + scaled, weights - scaled])
        returns = self.score_candidates(candidates).to(weights.device)
        if self._merge_worker_statistics is not None:
            self._merge_worker_statistics()

        plus_returns, minus_returns = returns[: self.n_delta], returns[self.n_delta :]
        top_idx = torch.argsort(torch.maximum(plus_returns, minus_returns), descending=True)[: self.n_top]
        plus_returns, minus_returns, deltas = plus_returns[top_idx], minus_returns[top_idx], deltas[top_idx]
        # Smaller steps when the returns vary a lot.
        return_std = torch.cat([plus_returns, minus_returns]).std()
        step_size = learning_rate / (self.n_top * return_std + 1e-6)
        vector_to_parameters(
            weights + step_size * ((plus_returns - minus_returns) @ deltas), policy.parameters()
        )

        metrics = {
            **self._episode_metrics,
            "train/iterations": self.n_updates,
            "train/delta_std": delta_std,
            "train/learning_rate": learning_rate,
            "train/step_size": float(step_size.item()),
            "rollout/return_std": float(return_std.item()),
        }
        self.n_updates += 1
        self.iterations += 1
        self.metrics.log_iteration(metrics)
        self.budget.stop_if_reached()
        if self._stopped_by_callback:  # a step callback returned False: stop after this iteration's update
            self.trainer.should_stop = True

    def score_candidates(self, candidates: torch.Tensor) -> torch.Tensor:
        """Scores of every row of ``candidates``, each rank evaluating every ``world_size``-th row.

        Also counts the iteration's environment steps over all ranks, reports its episodes and folds its
        observations into the normalization statistics (the same on every rank).
        """
        world = self.world_size
        if world == 1:
            scores, moments = self.evaluate_candidates(candidates)
        else:
            mine = torch.arange(self.global_rank, len(candidates), world)
            local, local_moments = self.evaluate_candidates(candidates[mine])
            scores = torch.zeros(len(candidates), dtype=torch.float32)
            scores[mine] = local
            scores = self.ranks.all_reduce(scores, "sum")
            moments = self.ranks.all_reduce(local_moments, "sum")
        steps, return_sum, length_sum, episodes = moments[:4].tolist()
        self.num_timesteps += int(steps)
        # sb3-contrib reports the episodes of this iteration only.
        self._episode_metrics = {
            "rollout/ep_rew_mean": return_sum / episodes,
            "rollout/ep_len_mean": length_sum / episodes,
        }
        normalizer = self.obs_normalizer
        if normalizer is not None:
            obs_sum, obs_sq_sum = moments[4:].chunk(2)
            mean = obs_sum / steps
            variance = (obs_sq_sum / steps - mean * mean).clamp(min=0.0)
            normalizer.rms.update_from_moments(mean, variance, int(steps))
        return scores

    def evaluate_candidates(self, candidates: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sum of returns of ``n_eval_episodes`` whole episodes for each row of ``candidates``.

        Each environment runs one candidate's episodes at a time, taking the next job when an episode ends;
        an environment with no job left runs the current weights until the others finish (those steps count
        but score nothing). Returns the float32 scores ``(len(candidates),)`` and a float64 vector of
        sums: environment steps, episode returns, episode lengths, episodes, then (with observation
        normalization) observations and squared observations.
        """
        env, policy = self.vector_env, self.policy
        assert env is not None and isinstance(policy, ARSPolicy)
        n_envs, n_eval = env.num_envs, self.n_eval_episodes
        n_jobs = len(candidates) * n_eval
        device = candidates.device
        obs = self.last_obs
        # One env: every candidate starts from a fresh reset, as sb3-contrib's evaluate_policy call per
        # candidate does (its initial states, so a seed gives sb3-contrib's run). Several: candidates queue
        # over the envs, and only envs left mid-episode by the last iteration restart.
        reset_per_candidate = n_envs == 1
        if reset_per_candidate or not np.all(self.last_episode_starts):
            obs, _ = env.reset()
        center = parameters_to_vector(policy.parameters())
        table = torch.cat([candidates, center.unsqueeze(0)])  # the last row: idle environments
        idle = len(candidates)
        job = np.full(n_envs, -1, dtype=np.int64)
        started = min(n_envs, n_jobs)
        job[:started] = np.arange(started)
        params = table[np.where(job >= 0, job // n_eval, idle)]
        to_env = self._env_action_converter()

        scores = np.zeros(len(candidates), dtype=np.float64)
        episode_return = np.zeros(n_envs, dtype=np.float64)
        episode_length = np.zeros(n_envs, dtype=np.int64)
        finished_returns: list[float] = []
        finished_lengths: list[int] = []
        normalizer = self.obs_normalizer
        obs_shape = normalizer.rms.mean.shape if normalizer is not None else ()
        obs_sum = obs_sq_sum = torch.zeros(obs_shape, dtype=torch.float64)
        steps = 0
        dones = np.ones(n_envs, dtype=bool)
        callbacks = self.step_callbacks
        has_callbacks = bool(callbacks)  # SB3-style callbacks see every vector step, as in sb3-contrib
        start_timesteps, step_increment = self.num_timesteps, n_envs * self.world_size
        if has_callbacks:
            callbacks.rollout_start()
        while len(finished_returns) < n_jobs:
            obs_tensor = obs_to_tensor(obs, device)
            if normalizer is not None:
                rows = obs_tensor.to(torch.float64)
                obs_sum = obs_sum + rows.sum(0)
                obs_sq_sum = obs_sq_sum + (rows * rows).sum(0)
                obs_tensor = normalizer(obs_tensor)  # this iteration's statistics, frozen
            actions = policy.forward_batch(policy.features(obs_tensor), params)
            obs, rewards, terminated, truncated, infos = env.step(to_env(actions))
            steps += 1
            episode_return += rewards
            episode_length += 1
            dones = np.logical_or(terminated, truncated)
            if dones.any():
                for i in np.flatnonzero(dones):
                    if job[i] >= 0:
                        scores[job[i] // n_eval] += (
                            episode_return[i] + self.alive_bonus_offset * episode_length[i]
                        )
                        finished_returns.append(float(episode_return[i]))
                        finished_lengths.append(int(episode_length[i]))
                        if started < n_jobs:
                            job[i], started = started, started + 1
                            params[i] = table[job[i] // n_eval]
                            if reset_per_candidate and job[i] % n_eval == 0:
                                obs, _ = env.reset()
                        else:
                            job[i] = -1
                            params[i] = table[idle]
                    episode_return[i] = 0.0
                    episode_length[i] = 0
            if has_callbacks:
                # The step count is provisional here (score_candidates adds the iteration's steps of all ranks).
                self.num_timesteps = start_timesteps + steps * step_increment
                step_locals = {"new_obs": obs, "rewards": rewards, "dones": dones, "infos": infos}
                keep = callbacks.step(
                    self.step_callbacks.locals(
                        self, **step_locals, terminated=terminated, truncated=truncated
                    )
                )
                self._stopped_by_callback = self._stopped_by_callback or not keep
        if has_callbacks:
            self.num_timesteps = start_timesteps
            callbacks.rollout_end()
        # Module attributes are written once per iteration: LightningModule.__setattr__ is slow per step.
        self.last_obs, self.last_episode_starts = obs, dones
        totals = [steps * n_envs, sum(finished_returns), sum(finished_lengths), len(finished_returns)]
        moments = torch.tensor(totals, dtype=torch.float64)
        if normalizer is not None:
            moments = torch.cat([moments, obs_sum.reshape(-1), obs_sq_sum.reshape(-1)])
        return torch.as_tensor(scores, dtype=torch.float32), moments

    def _env_action_converter(self) -> Callable[[torch.Tensor], np.ndarray]:
        """Policy output -> what ``env.step`` takes, with every per-space decision taken once."""
        space, policy = self.action_space, self.policy
        if isinstance(space, spaces.Discrete):
            start = int(space.start)
            if start:
                return lambda actions: to_numpy(actions) + start
            return lambda actions: to_numpy(actions)
        assert isinstance(space, spaces.Box) and isinstance(policy, ARSPolicy)
        shape, low, high = (-1, *space.shape), space.low, space.high
        if policy.squash_output:
            return lambda actions: np.clip(policy.unscale_action(to_numpy(actions).reshape(shape)), low, high)
        return lambda actions: np.clip(to_numpy(actions).reshape(shape), low, high)
