"""Recurrent PPO: Proximal Policy Optimization with LSTM policies, for partially observed tasks.

Schulman et al., "Proximal Policy Optimization Algorithms", 2017. https://arxiv.org/abs/1707.06347
The recurrent variant follows sb3-contrib's ``RecurrentPPO`` (itself after the recurrent PPO of OpenAI
Baselines' ``ppo2`` with LSTM policies); see also Pleines et al., "Generalization, Mayhems and Limits in
Recurrent Proximal Policy Optimization", 2022, https://arxiv.org/abs/2205.11104.

What changes from PPO:

* Rollouts (``OnPolicyAlgorithm.collect_rollout`` through the ``rollout_forward``/``rollout_values``
  hooks) carry the LSTM state of every training env from step to step and from one iteration to the
  next, reset it where an episode starts, and store the state each step started from. Truncated
  episodes bootstrap from V(final observation) computed with the state the episode had reached.
* Training cuts the rollout into per-env sequences that end at episode boundaries
  (``RecurrentRolloutBuffer.sequence_minibatches``) and replays each from its stored initial state, so
  the gradient flows through time within a sequence. The update is PPO's (``lit_sb3_ppo.PPO``): only
  what an epoch iterates over (``epoch_minibatches``: sequences) and how a minibatch is evaluated
  (``evaluate_minibatch``: through the LSTMs) change. Its clipped surrogate objective

      L = -E[min(r A, clip(r, 1 - eps, 1 + eps) A)] + vf_coef * (V - R)^2 - ent_coef * H

  is taken over the minibatch's real (unpadded) steps. Defaults and logged metrics are sb3-contrib's.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import torch

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import (
    CompileChoice,
    CompiledStep,
    PolicyModule,
    Schedule,
    evaluation_mode,
    obs_to_tensor,
)
from lit_sb3_ppo.ppo import PPO
from lit_sb3_ppo_recurrent import envs as _envs  # noqa: F401  (registers the *NoVel env ids)
from lit_sb3_ppo_recurrent.buffers import RecurrentRolloutBatch, RecurrentRolloutBuffer
from lit_sb3_ppo_recurrent.hyperparams import TUNED
from lit_sb3_ppo_recurrent.policies import (
    RECURRENT_ALIASES,
    RecurrentActorCriticPolicy,
    RecurrentDeterministicPolicy,
    RNNStates,
)

__all__ = ["RecurrentPPO"]


class RecurrentPPO(PPO):
    """PPO (clip variant) with an LSTM policy.

    Args:
        policy: ``"MlpLstmPolicy"``, ``"CnnLstmPolicy"`` (images), ``"MultiInputLstmPolicy"`` (Dict
            observations), or a subclass of ``RecurrentActorCriticPolicy`` / its import path. LSTM settings
            (``lstm_hidden_size=256``, ``n_lstm_layers=1``, ``shared_lstm=False``,
            ``enable_critic_lstm=True``, ``lstm_kwargs``) go in ``policy_kwargs``.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size: number, ``"lin_<start>"`` or callable of progress remaining.
        n_steps: steps per environment per rollout; the rollout holds ``n_steps * n_envs`` transitions and
            no training sequence is longer than ``n_steps``.
        batch_size: samples per minibatch (cut into sequences); ``None`` trains on the whole rollout at once.
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
        use_sde: generalized State-Dependent Exploration (gSDE) for Box actions; its settings go in
            ``policy_kwargs``.
        sde_sample_freq: resample the gSDE noise every this many steps (-1: once per rollout).
        target_kl: stop an iteration's epochs early when the approximate KL exceeds ``1.5 * target_kl``.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments for the policy (``lstm_hidden_size``, ``net_arch``, ``activation_fn``, ...).
        verbose: 1 prints metrics each iteration.
        seed: random seed for python, numpy, torch and the environments.
        device: accelerator for ``learn``.
        compile: run each minibatch update (the LSTMs over the minibatch's sequences, the clipped loss,
            gradients, clipping, Adam) as one program compiled with ``torch.compile``
            (``lit_sb3_core.sdk.CompiledStep``): same learning, within float rounding. The minibatches come
            as segments of a fixed grid (``Segments``) and the LSTMs are evaluated step by step from their
            weights (``lit_sb3_ppo_recurrent.lstm_steps``), so the program is traced once per minibatch size;
            the first update of a run compiles (seconds with a warm on-disk cache, minutes cold: the
            program holds one step per time step of the grid). Adam/AdamW optimizers, one process, no LSTM
            dropout. Rollouts stay eager (the policy carries the LSTM states). Off by default.
    """

    algo_name: ClassVar[str] = "recurrent_ppo"
    # compile="auto" never compiles: the cold compile grows with the LSTM's unrolled steps (~250 s of CPU at
    # rl-zoo3's 32, more at the default 128) and pays back only after millions of steps (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = None
    policy_aliases: ClassVar[dict[str, Any]] = RECURRENT_ALIASES
    policy: RecurrentActorCriticPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "RecurrentActorCriticPolicy": "MlpLstmPolicy",
        "RecurrentActorCriticCnnPolicy": "CnnLstmPolicy",
        "RecurrentMultiInputActorCriticPolicy": "MultiInputLstmPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    whole_rollout_batches: ClassVar[bool] = True  # batch_size=None, as in sb3-contrib
    # compile=True: the update program unrolls the LSTMs over the grid's steps, a few kernels per step;
    # inductor's C++ wrapper builds them as one module (about half the CPU of a cold compile).
    compile_options: ClassVar[dict[str, Any]] = {"cpp_wrapper": True}

    def __init__(
        self,
        policy: Any = "MlpLstmPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 3e-4,
        n_steps: int = 128,
        batch_size: int | None = 128,
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
        target_kl: float | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        compile: CompileChoice = False,
    ) -> None:
        self.rollout: RecurrentRolloutBuffer | None = None
        self._last_lstm_states: RNNStates | None = None
        super().__init__(
            policy=policy,
            env=env,
            learning_rate=learning_rate,
            n_steps=n_steps,
            batch_size=batch_size,  # type: ignore[arg-type]
            n_epochs=n_epochs,
            gamma=gamma,
            gae_lambda=gae_lambda,
            clip_range=clip_range,
            clip_range_vf=clip_range_vf,
            normalize_advantage=normalize_advantage,
            ent_coef=ent_coef,
            vf_coef=vf_coef,
            max_grad_norm=max_grad_norm,
            use_sde=use_sde,
            sde_sample_freq=sde_sample_freq,
            target_kl=target_kl,
            stats_window_size=stats_window_size,
            tensorboard_log=tensorboard_log,
            policy_kwargs=policy_kwargs,
            verbose=verbose,
            seed=seed,
            device=device,
            compile=compile,
        )

    def make_policy(
        self, policy_cls: type[torch.nn.Module], policy_kwargs: dict[str, Any]
    ) -> torch.nn.Module:
        if not (isinstance(policy_cls, type) and issubclass(policy_cls, RecurrentActorCriticPolicy)):
            raise ConfigurationError(
                f"RecurrentPPO needs a recurrent policy, got {getattr(policy_cls, '__name__', policy_cls)!r}: use "
                f"{', '.join(RECURRENT_ALIASES)} or a subclass of "
                "lit_sb3_ppo_recurrent.policies.RecurrentActorCriticPolicy. For a memoryless policy use PPO."
            )
        return super().make_policy(policy_cls, policy_kwargs)

    @property
    def recurrent_policy(self) -> RecurrentActorCriticPolicy:
        policy = self.require_policy()
        assert isinstance(policy, RecurrentActorCriticPolicy)
        return policy

    # rollouts -----------------------------------------------------------------------------------
    def on_fit_start(self) -> None:
        # Our buffer goes in first, so OnPolicyAlgorithm keeps it instead of building a plain one.
        n_envs = self.datamodule.get_env("fit").num_envs  # type: ignore[union-attr]
        policy = self.recurrent_policy
        buffer = self.rollout
        if buffer is None or buffer.n_envs != n_envs or buffer.device != self.device:
            assert self.observation_space is not None and self.action_space is not None
            self.rollout = RecurrentRolloutBuffer(
                self.n_steps,
                n_envs,
                self.observation_space,
                self.action_space,
                policy.lstm_state_shape,
                device=self.device,
                gamma=self.gamma,
                gae_lambda=self.gae_lambda,
            )
        super().on_fit_start()
        states = self._last_lstm_states
        if states is None or states.pi[0].shape[1] != n_envs:
            self._last_lstm_states = policy.initial_state(n_envs, self.device)
        else:  # learn(reset_num_timesteps=False) continues the episodes in flight, and their memory
            (h_pi, c_pi), (h_vf, c_vf), device = states.pi, states.vf, self.device
            self._last_lstm_states = RNNStates(
                (h_pi.to(device), c_pi.to(device)), (h_vf.to(device), c_vf.to(device))
            )

    def reset_env(self, seed: int | None) -> None:
        super().reset_env(seed)
        # Fresh episodes start with an empty memory.
        self._last_lstm_states = self.recurrent_policy.initial_state(self.n_envs, self.device)

    def rollout_forward(self, obs: Any) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One step of every env from the carried LSTM states; stores the states the step started from."""
        assert self.rollout is not None and self._last_lstm_states is not None
        self.rollout.add_lstm_states(self._last_lstm_states)
        episode_starts = torch.as_tensor(self.last_episode_starts, dtype=torch.float32).to(self.device)
        actions, values, log_probs, self._last_lstm_states = self.recurrent_policy(
            obs, self._last_lstm_states, episode_starts
        )
        return actions, values, log_probs

    def rollout_values(self, obs: Any, env_indices: np.ndarray | None = None) -> torch.Tensor:
        """V(obs) from the critic's carried state: final observations continue their episode; the next
        observations start a new one where the last step ended an episode."""
        assert self._last_lstm_states is not None
        hidden, cell = self._last_lstm_states.vf
        if env_indices is None:
            episode_starts = torch.as_tensor(self.last_episode_starts, dtype=torch.float32).to(self.device)
        else:
            rows = torch.as_tensor(env_indices, dtype=torch.long, device=hidden.device)
            hidden, cell = hidden[:, rows], cell[:, rows]
            episode_starts = torch.zeros(len(env_indices), device=self.device)
        return self.recurrent_policy.predict_values(obs, (hidden, cell), episode_starts)

    # training: PPO's update over sequences ------------------------------------------------------
    def validate_rollout_size(self, rollout_size: int) -> None:
        """No warning for a ``batch_size`` that does not divide the rollout (sb3-contrib has none): episode
        boundaries cut the sequences of a minibatch anyway. One larger than the rollout is warned about."""
        # sb3-contrib trains on one minibatch of the whole rollout then; said, not refused (its configs do it).
        if self.batch_size is not None and self.batch_size > rollout_size:
            warnings.warn(
                f"RecurrentPPO: batch_size={self.batch_size} is larger than the rollout ({rollout_size} = n_steps * "
                "n_envs), so each epoch is one minibatch of the whole rollout. Pass batch_size=None to say so.",
                UserWarning,
                stacklevel=2,
            )

    def epoch_minibatches(self) -> Iterable[RecurrentRolloutBatch]:
        """One epoch of minibatches of whole sequences, each with its LSTM states at the start; compiled,
        the same samples as segments of a fixed grid (``RecurrentRolloutBuffer.segment_minibatches``)."""
        assert self.rollout is not None
        if self.compile_update:
            return self.rollout.segment_minibatches(self.batch_size)
        return self.rollout.sequence_minibatches(self.batch_size)

    def compiled_step(self) -> CompiledStep:
        """PPO's compiled minibatch update, with the LSTMs evaluated from their weights (``lstm_steps``),
        which leaves out dropout between stacked layers: refused."""
        for lstm in (self.recurrent_policy.lstm_actor, self.recurrent_policy.lstm_critic):
            if lstm is not None and lstm.num_layers > 1 and lstm.dropout > 0:
                raise ConfigurationError(
                    f"RecurrentPPO(compile=True) evaluates the LSTMs without dropout, but lstm_kwargs sets "
                    f"dropout={lstm.dropout} between the {lstm.num_layers} layers: train with compile=False, "
                    "or without LSTM dropout."
                )
        return super().compiled_step()

    def evaluate_minibatch(
        self, batch: RecurrentRolloutBatch
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Replay the minibatch's sequences through the LSTMs from their stored states."""
        return self.recurrent_policy.evaluate_actions(
            batch.observations, batch.actions, batch.lstm_states, batch.episode_starts, batch.sequences
        )

    # prediction ---------------------------------------------------------------------------------
    def predict(
        self,
        observation: Any,
        state: tuple[np.ndarray, np.ndarray] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """Actions and the actor's next LSTM state, as sb3-contrib's ``RecurrentPPO.predict``.

        Args:
            observation: one observation or a batch (one row per env).
            state: ``(hidden, cell)`` from the previous call, each ``(n_lstm_layers, n_envs,
                lstm_hidden_size)``; ``None`` starts from zeros.
            episode_start: one flag per env; where set, that env's state is reset before this step.
            deterministic: use the distribution's mode instead of sampling.

        Returns:
            ``(actions, (hidden, cell))``: feed the state back with the next observation.
        """
        policy = self.recurrent_policy
        obs, single = self.prediction.batch_observation(observation)
        n_envs = len(next(iter(obs.values()))) if isinstance(obs, dict) else len(obs)
        lstm_state = self._predict_state(state, n_envs)
        if episode_start is None:
            starts = torch.zeros(n_envs, device=self.device)
        else:
            flags = np.asarray(episode_start, dtype=np.float32).reshape(-1)
            if flags.shape != (n_envs,):
                raise ValueError(
                    f"episode_start has {flags.size} flags for {n_envs} observation(s): pass one per env."
                )
            starts = torch.as_tensor(flags, device=self.device)
        with evaluation_mode(policy), torch.no_grad():
            obs_tensor = self.normalizers.obs(obs_to_tensor(obs, self.device))
            actions, (hidden, cell) = policy.predict_actions(obs_tensor, lstm_state, starts, deterministic)
        return self.prediction.unbatch_actions(actions, single), (hidden.cpu().numpy(), cell.cpu().numpy())

    def export_policy_module(self) -> PolicyModule:
        """The exported graph carries the actor's LSTM state: inputs ``lstm_hidden``, ``lstm_cell`` (zeros at
        the start) and ``episode_start`` (1.0 where an episode starts), outputs the next state."""
        policy = copy.deepcopy(self.recurrent_policy).cpu().eval()
        layers, size = policy.lstm_state_shape
        state = torch.zeros(layers, 3, size)
        return PolicyModule(
            RecurrentDeterministicPolicy(policy),
            extra_inputs={"lstm_hidden": state, "lstm_cell": state.clone(), "episode_start": torch.ones(3)},
            extra_outputs=("lstm_hidden_out", "lstm_cell_out"),
            batch_axes={"lstm_hidden": 1, "lstm_cell": 1, "lstm_hidden_out": 1, "lstm_cell_out": 1},
            initial_values={"lstm_hidden": "zeros", "lstm_cell": "zeros", "episode_start": "ones"},
        )

    def _predict_state(self, state: Any, n_envs: int) -> tuple[torch.Tensor, torch.Tensor]:
        policy = self.recurrent_policy
        expected = (policy.n_lstm_layers, n_envs, policy.lstm_hidden_size)
        if state is None:
            zeros = torch.zeros(expected, device=self.device)
            return zeros, zeros
        if not (isinstance(state, (tuple, list)) and len(state) == 2):
            raise ValueError(
                "state must be the (hidden, cell) pair a previous predict() returned, or None to start from zeros."
            )
        tensors = tuple(
            torch.as_tensor(np.asarray(part), dtype=torch.float32, device=self.device) for part in state
        )
        for tensor in tensors:
            if tuple(tensor.shape) != expected:
                raise ValueError(
                    f"state arrays must have shape (n_lstm_layers, n_envs, lstm_hidden_size) = {expected}, got "
                    f"{tuple(tensor.shape)}: pass the state predict() returned for the same number of envs."
                )
        return tensors[0], tensors[1]
