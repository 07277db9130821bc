"""Maskable PPO: Proximal Policy Optimization that only ever samples valid actions.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. https://arxiv.org/abs/1707.06347
Huang & Ontañón, "A Closer Look at Invalid Action Masking in Policy Gradient Algorithms", 2020.
https://arxiv.org/abs/2006.14171

Before every step the environment says which actions are allowed (its ``action_masks()`` method, read for
all sub-envs at once through ``VectorEnv.call``). The policy sets the logits of the other actions to a large
negative number, so they have probability 0: they are never sampled, the masks are stored with the rollout,
and the PPO update (``lit_sb3_ppo.PPO``'s, unchanged) scores each old action under the mask it was chosen
with, with the entropy taken over the valid actions. Defaults, policies and logged metrics are those of
sb3-contrib's MaskablePPO.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import VectorEnv

from lit_sb3_core.errors import ConfigurationError, UnsupportedSpaceError
from lit_sb3_core.sdk import (
    CompileChoice,
    PolicyModule,
    Schedule,
    check_bool,
    describe_space,
    evaluation_mode,
    obs_to_tensor,
)
from lit_sb3_ppo.ppo import PPO
from lit_sb3_ppo_mask.action_masks import MASK_METHOD, get_action_masks, is_masking_supported
from lit_sb3_ppo_mask.buffers import MaskableRolloutBatch, MaskableRolloutBuffer
from lit_sb3_ppo_mask.hyperparams import TUNED
from lit_sb3_ppo_mask.policies import (
    MASKABLE_ALIASES,
    MaskableActorCriticPolicy,
    MaskedDeterministicPolicy,
    mask_dims,
)

__all__ = ["MaskablePPO"]


class MaskablePPO(PPO):
    """PPO (clip variant) with invalid action masking, for Discrete, MultiDiscrete and MultiBinary actions.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"``, or a subclass of
            ``MaskableActorCriticPolicy`` (class or import path).
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size: number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per rollout; the rollout holds ``n_steps * n_envs`` transitions.
        batch_size: minibatch size.
        n_epochs: passes over the rollout per iteration.
        gamma: discount factor.
        gae_lambda: GAE lambda.
        clip_range: clipping of the probability ratio (number, ``"lin_<start>"`` or callable).
        clip_range_vf: clipping of the value prediction around the old value; ``None`` disables it.
        normalize_advantage: normalise advantages within each minibatch.
        ent_coef: entropy bonus weight (the entropy of the masked distribution).
        vf_coef: value loss weight.
        max_grad_norm: gradient clipping by global norm.
        target_kl: stop an iteration's epochs early when the approximate KL exceeds ``1.5 * target_kl``.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``net_arch``, ``activation_fn``, ``ortho_init``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
        use_masking: read masks from the training env and apply them (sb3-contrib passes this to
            ``learn``; here it is also a hyperparameter so ``RLTrainer.fit`` and configs can set it).
            ``False`` trains an ordinary PPO policy on an env without masks. ``learn(use_masking=...)``
            overrides it for one call.
        compile: run each minibatch update (the policy's evaluation of the minibatch under its stored masks,
            the clipped loss, gradients, clipping, Adam) as one program compiled with ``torch.compile``
            (``lit_sb3_core.sdk.CompiledStep``): same learning, within float rounding; the first update of
            a run compiles (seconds with a warm on-disk cache, a minute or more cold), a truncated last
            minibatch and a rollout without masks compile once more. Adam/AdamW optimizers, one process.
            Off by default.
    """

    algo_name: ClassVar[str] = "maskable_ppo"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 700_000
    policy_aliases: ClassVar[dict[str, Any]] = MASKABLE_ALIASES
    policy: MaskableActorCriticPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "MaskableActorCriticPolicy": "MlpPolicy",
        "MaskableActorCriticCnnPolicy": "CnnPolicy",
        "MaskableMultiInputActorCriticPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (
        spaces.Discrete,
        spaces.MultiDiscrete,
        spaces.MultiBinary,
    )

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
        target_kl: float | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        use_masking: bool = True,
        compile: CompileChoice = False,
    ) -> None:
        self.use_masking = check_bool("use_masking", use_masking)
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            n_steps=n_steps,
            batch_size=batch_size,
            n_epochs=n_epochs,
            gamma=gamma,
            gae_lambda=gae_lambda,
            clip_range=clip_range,
            clip_range_vf=clip_range_vf,
            normalize_advantage=normalize_advantage,
            ent_coef=ent_coef,
            vf_coef=vf_coef,
            max_grad_norm=max_grad_norm,
            use_sde=False,
            sde_sample_freq=-1,
            target_kl=target_kl,
            stats_window_size=stats_window_size,
            tensorboard_log=tensorboard_log,
            policy_kwargs=policy_kwargs,
            verbose=verbose,
            seed=seed,
            device=device,
            compile=compile,
        )

    # construction ---------------------------------------------------------------------------------
    def check_spaces(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        if isinstance(action_space, spaces.Box):  # an AssertionError too, as sb3-contrib asserts
            raise UnsupportedSpaceError(
                "The algorithm only supports Discrete, MultiDiscrete and MultiBinary actions (MaskablePPO masks "
                f"a choice among discrete actions); the env has continuous {describe_space(action_space)} "
                "actions. Use PPO for Box actions, or give the env Discrete, MultiDiscrete or MultiBinary actions."
            )
        super().check_spaces(observation_space, action_space)

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        if not (isinstance(policy_cls, type) and issubclass(policy_cls, MaskableActorCriticPolicy)):
            raise ConfigurationError(
                f"MaskablePPO needs a policy that applies action masks: a subclass of "
                f"lit_sb3_ppo_mask.MaskableActorCriticPolicy, got {getattr(policy_cls, '__name__', policy_cls)!r}."
            )
        return super().make_policy(policy_cls, policy_kwargs)

    @property
    def mask_dims(self) -> int:
        """Length of one action mask for the model's action space."""
        assert self.action_space is not None
        return mask_dims(self.action_space)

    # training -------------------------------------------------------------------------------------
    def on_fit_start(self) -> None:
        super().on_fit_start()
        buffer = self.rollout
        assert buffer is not None and self.observation_space is not None and self.action_space is not None
        if not isinstance(buffer, MaskableRolloutBuffer):
            self.rollout = MaskableRolloutBuffer(
                self.n_steps,
                buffer.n_envs,
                self.observation_space,
                self.action_space,
                self.mask_dims,
                device=self.device,
                gamma=self.gamma,
                gae_lambda=self.gae_lambda,
            )
        if self.use_masking:
            assert self.vector_env is not None
            self._check_masks(self.vector_env, "training")
        # Evaluation during fit (a val_env) masks exactly when training does.
        self.evaluation_options = {
            **(self.evaluation_options or {}),
            "use_masking": self.use_masking,
        }

    def _check_masks(self, env: VectorEnv, which: str) -> None:
        """Fail early, with the fix, when ``env`` gives no masks or masks of the wrong size."""
        try:
            if not is_masking_supported(env):  # asked first: a subprocess env's workers stop on an error
                raise AttributeError(MASK_METHOD)
            masks = get_action_masks(env)
        except AttributeError:
            raise ConfigurationError(
                f"MaskablePPO(use_masking=True) reads action masks from the {which} env, but it has no "
                "action_masks() method. Add one to the env, wrap it with "
                "lit_sb3_ppo_mask.ActionMasker(env, mask_fn) (RLEnvDataModule(wrappers=[...]) wraps every "
                "copy), or train without masks: MaskablePPO(use_masking=False) or learn(use_masking=False)."
            ) from None
        expected = (env.num_envs, self.mask_dims)
        if masks.shape != expected:
            raise ConfigurationError(
                f"The {which} env's action_masks() gives {masks.shape[1:]} booleans per sub-env; "
                f"{describe_space(self.action_space)} actions need {self.mask_dims} "
                "(n for Discrete, sum(nvec) for MultiDiscrete, 2 per bit for MultiBinary)."
            )

    def rollout_forward(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample allowed actions for the training envs' current observations; the step's masks go into
        the rollout buffer beside the transition the core loop is about to add."""
        masks = None
        if self.use_masking:
            assert self.vector_env is not None and isinstance(self.rollout, MaskableRolloutBuffer)
            # After a SAME_STEP autoreset the env already shows the new episode, as the observations do.
            masks = torch.as_tensor(get_action_masks(self.vector_env), device=self.device)
            self.rollout.store_masks(masks)
        return self.policy(obs, action_masks=masks)

    def evaluate_minibatch(
        self, batch: MaskableRolloutBatch
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Score the minibatch's actions under the masks they were sampled with."""
        return self.policy.evaluate_actions(
            batch.observations, batch.actions, action_masks=batch.action_masks
        )

    # SB3 surface ----------------------------------------------------------------------------------
    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
        action_masks: np.ndarray | None = None,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch; ``action_masks`` (``(mask_dims,)`` or
        ``(batch, mask_dims)`` booleans) restricts them to allowed ones."""
        if action_masks is None:
            return super().predict(observation, state, episode_start, deterministic)
        policy = self.require_policy()
        obs, single = self.prediction.batch_observation(observation)
        masks = torch.as_tensor(np.asarray(action_masks, dtype=bool), device=self.device)
        with evaluation_mode(policy), torch.no_grad():
            obs_tensor = self.normalizers.obs(obs_to_tensor(obs, self.device))
            actions = policy.predict_actions(obs_tensor, deterministic, action_masks=masks)
        return self.prediction.unbatch_actions(actions, single), state

    def export_policy_module(self) -> PolicyModule:
        """The exported graph takes the action masks as its second input, ``action_masks``: one boolean per
        choice (``mask_dims`` per row; all ``True`` allows every action)."""
        policy = copy.deepcopy(self.require_policy()).cpu().eval()
        assert isinstance(policy, MaskableActorCriticPolicy)
        return PolicyModule(
            MaskedDeterministicPolicy(policy),
            extra_inputs={"action_masks": torch.ones((3, policy.mask_dims), dtype=torch.bool)},
            initial_values={"action_masks": "ones"},
        )

    def collect_rollouts(
        self,
        env: Any,
        callback: Any,
        rollout_buffer: Any,
        n_rollout_steps: int,
        use_masking: bool = True,
    ) -> bool:
        """sb3-contrib's ``collect_rollouts``: the core's, reading the env's masks unless ``use_masking`` is
        False for this call (as ``learn(use_masking=...)``)."""
        saved = self.use_masking
        self.use_masking = check_bool("use_masking", use_masking)
        try:
            return super().collect_rollouts(env, callback, rollout_buffer, n_rollout_steps)
        finally:
            self.use_masking = saved

    def learn(
        self,
        total_timesteps: int,
        env: Any = None,
        callback: Any = None,
        log_interval: int | None = 1,
        tb_log_name: str | None = None,
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
        n_envs: int | None = None,
        use_masking: bool | None = None,
    ) -> MaskablePPO:
        """SB3's ``learn``; ``use_masking`` (default: the constructor's, True) applies to this call only."""
        saved = self.use_masking
        if use_masking is not None:
            self.use_masking = bool(use_masking)
        try:
            super().learn(
                total_timesteps,
                env=env,
                callback=callback,
                log_interval=log_interval,
                tb_log_name=tb_log_name,
                reset_num_timesteps=reset_num_timesteps,
                progress_bar=progress_bar,
                n_envs=n_envs,
            )
        finally:
            self.use_masking = saved
        return self
