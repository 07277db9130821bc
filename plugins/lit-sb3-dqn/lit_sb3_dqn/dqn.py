"""Deep Q-Network.

Mnih et al., "Playing Atari with Deep Reinforcement Learning", 2013, https://arxiv.org/abs/1312.5602, and
"Human-level control through deep reinforcement learning", Nature 2015,
https://www.nature.com/articles/nature14236

The agent acts epsilon-greedily with respect to ``Q(s, .)`` (epsilon decays linearly from
``exploration_initial_eps`` to ``exploration_final_eps`` over the first ``exploration_fraction`` of the
budget) and regresses ``Q(s, a)`` onto the one-step (or n-step) target

    y = r + (1 - done) * gamma * max_a' Q_target(s', a')

with the Huber loss, clipping gradients by norm. The target network is copied from the online one every
``target_update_interval`` environment steps. Defaults and logged metrics are Stable-Baselines3's DQN.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from lit_sb3_core.sdk import (
    CompileChoice,
    CompiledStep,
    NumpyMlp,
    OffPolicyAlgorithm,
    Schedule,
    TorchMlp,
    TrainFreq,
    check_fraction,
    check_positive_int,
    check_positive_number,
    init_compile,
    obs_to_tensor,
    update_target,
)
from lit_sb3_dqn.hyperparams import TUNED
from lit_sb3_dqn.policies import DQN_POLICY_ALIASES, DQNPolicy

__all__ = ["DQN", "linear_epsilon"]


def linear_epsilon(initial: float, final: float, fraction: float, progress_remaining: float) -> float:
    """``initial`` to ``final`` linearly over the first ``fraction`` of training, then ``final``."""
    progress = 1.0 - progress_remaining
    if fraction <= 0 or progress > fraction:
        return final
    return initial + progress * (final - initial) / fraction


class DQN(OffPolicyAlgorithm):
    """Deep Q-Network with a target network, epsilon-greedy exploration and the Huber loss.

    Args:
        policy: ``"MlpPolicy"``, ``"CnnPolicy"``, ``"MultiInputPolicy"`` or a policy class / import path.
        env: optional environment (id, Env, factory, VectorEnv) to build the policy and ``learn`` on.
        learning_rate: Adam step size: number, ``"lin_<start>"`` or callable of progress remaining.
        buffer_size: replay buffer capacity (transitions).
        learning_starts: random-action steps before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: target update coefficient; 1 (the default) copies the online network.
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
        max_grad_norm: gradient clipping by global norm.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        policy_kwargs: arguments of the policy (``net_arch``, ``activation_fn``, ...).
        verbose: 1 prints the metrics when they are logged.
        seed: random seed for python, numpy, torch, the environments and the buffer.
        device: accelerator for ``learn``.
        checkpoint_replay_buffer: keep the replay buffer in Lightning checkpoints.
        compile: run each gradient step (TD loss, gradients, clipping, Adam) as one program compiled with
            ``torch.compile`` (``lit_sb3_core.sdk.CompiledStep``): same learning, within float rounding; the
            first update of a run compiles (seconds with a warm on-disk cache, minutes cold). The greedy action
            of each env step is then computed with numpy (``lit_sb3_core.sdk.NumpyMlp``) where the Q-network
            is an MLP over flat observations: the same Q-values within float rounding. Off by default.
    """

    algo_name: ClassVar[str] = "dqn"
    # compile="auto" compiles from this budget: twice the cold compile's break-even (benchmarks/README.md).
    compile_pays_after: ClassVar[int | None] = 400_000
    policy_aliases: ClassVar[dict[str, Any]] = DQN_POLICY_ALIASES
    policy: DQNPolicy  # built from the env's spaces (see RLAlgorithm)
    # Stable-Baselines3's policy classes, for loading its model files (see lit_sb3_core.sdk.SB3FileHooks).
    sb3_policy_classes: ClassVar[dict[str, str]] = {
        "stable_baselines3.dqn.policies.DQNPolicy": "MlpPolicy",
        "stable_baselines3.dqn.policies.CnnPolicy": "CnnPolicy",
        "stable_baselines3.dqn.policies.MultiInputPolicy": "MultiInputPolicy",
    }
    tuned_hyperparameters: ClassVar[dict[str, dict[str, Any]]] = TUNED
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Discrete,)

    def __init__(
        self,
        policy: Any = "MlpPolicy",
        env: Any = None,
        learning_rate: float | str | Schedule = 1e-4,
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
        exploration_fraction: float = 0.1,
        exploration_initial_eps: float = 1.0,
        exploration_final_eps: float = 0.05,
        max_grad_norm: float | None = 10,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        checkpoint_replay_buffer: bool = True,
        compile: CompileChoice = False,
    ) -> None:
        init_compile(self, compile)
        self._compiled_step: CompiledStep | None = None
        # The acting pass without module calls, for the Q-network and compile setting it was built for (None:
        # policy(obs)).
        self._acting: tuple[Any, bool, TorchMlp | NumpyMlp | None] | None = None
        self.target_update_interval = check_positive_int("target_update_interval", target_update_interval)
        self.exploration_fraction = check_fraction("exploration_fraction", exploration_fraction)
        self.exploration_initial_eps = check_fraction("exploration_initial_eps", exploration_initial_eps)
        self.exploration_final_eps = check_fraction("exploration_final_eps", exploration_final_eps)
        self.max_grad_norm = check_positive_number("max_grad_norm", max_grad_norm, allow_none=True)
        self.exploration_rate = 0.0
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
            action_noise=None,
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
        n_envs = getattr(self.env_source, "num_envs", None)  # a VecEnv/VectorEnv given: SB3 warns here
        if isinstance(n_envs, int):
            self._warn_fast_target_updates(n_envs)

    def _warn_fast_target_updates(self, n_envs: int) -> None:
        """SB3's warning: with more envs than ``target_update_interval`` the target net is updated on every
        vector step, i.e. every ``n_envs`` transitions, not every ``target_update_interval``."""
        if n_envs > self.target_update_interval:
            warnings.warn(
                "The number of environments used is greater than the target network update interval "
                f"({n_envs} > {self.target_update_interval}): the target network will be updated after each "
                f"vector step, which is {n_envs} environment steps. Raise target_update_interval to at least "
                f"{n_envs} to update it less often.",
                UserWarning,
                stacklevel=3,
            )

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.make_optimizer(self.require_policy().q_net.parameters())

    def _epsilon(self) -> float:
        return linear_epsilon(
            self.exploration_initial_eps,
            self.exploration_final_eps,
            self.exploration_fraction,
            self.progress_remaining,
        )

    # collection -----------------------------------------------------------------------------------------
    def on_env_step(self) -> None:
        # SB3's rule, read on every step so a changed target_update_interval applies at once.
        if self.n_calls % max(self.target_update_interval // self.n_envs, 1) == 0:
            policy = self.policy
            update_target(policy.q_net, policy.q_net_target, self.tau)
        self.exploration_rate = self._epsilon()

    def explore(self, obs: Any) -> np.ndarray:
        """Epsilon-greedy: one draw decides for all environments of the step, as in SB3.

        ``exploration_rate`` is updated after each step (``on_env_step``), as in SB3: the first step of a
        model's first run uses its initial value, 0 (greedy; it matters only with ``learning_starts=0``).
        """
        assert self.exploration_rng is not None
        if self.exploration_rng.random() < self.exploration_rate:
            start = int(self.action_space.start)  # type: ignore[union-attr]
            return self.random_actions() - start
        if type(obs) is np.ndarray:
            acting = self._direct_q_values()
            if acting is not None:
                return acting.argmax(obs)
        return self.policy(obs_to_tensor(obs, self.device)).cpu().numpy()

    def _direct_q_values(self) -> TorchMlp | NumpyMlp | None:
        """The Q-network's pass for acting without its module calls (``lit_sb3_core.sdk.TorchMlp``: the same
        numbers; with ``compile=True`` ``NumpyMlp``: within float rounding), or None where ``policy(obs)``
        runs: a policy that changes how it acts, a network the passes do not reproduce, hooks on it
        (``plain_calls`` is off), or numpy's pass under an autocast (it would not be in its precision)."""
        policy = self.policy
        q_net = policy.q_net
        built = self._acting
        if built is None or built[0] is not q_net or built[1] != self.compile_update:
            plain = type(policy).forward is DQNPolicy.forward and type(policy).q_values is DQNPolicy.q_values
            direct = (NumpyMlp if self.compile_update else TorchMlp).of(q_net) if plain else None
            built = self._acting = (q_net, self.compile_update, direct)
        direct = built[2]
        if direct is None or not q_net.plain_calls:
            return None
        if isinstance(direct, NumpyMlp) and torch.is_autocast_enabled("cpu"):
            return None  # torch's operators autocast, numpy's would not
        return direct

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Greedy actions, or (``deterministic=False``) epsilon-greedy at the current exploration rate."""
        if not deterministic and np.random.rand() < self.exploration_rate:
            assert self.action_space is not None
            _, single = self.prediction.batch_observation(observation)
            if single:
                return np.asarray(self.action_space.sample()), state
            first = next(iter(observation.values())) if isinstance(observation, dict) else observation
            return np.array([self.action_space.sample() for _ in range(len(first))]), state
        return super().predict(observation, state, episode_start, deterministic)

    # learning -------------------------------------------------------------------------------------------
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
        """Huber loss of ``Q(s, a)`` (``q_values``: the online network) against the target network's TD target."""
        policy = self.policy
        with torch.no_grad():
            next_q = policy.q_net_target(policy.preprocess(next_observations)).amax(dim=1, keepdim=True)
            target_q = rewards + (1.0 - dones) * discounts * next_q
        current_q = q_values(policy.preprocess(observations)).gather(1, actions.long())
        return F.smooth_l1_loss(current_q, target_q)

    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        policy, buffer = self.policy, self.replay_buffer
        assert policy is not None and buffer is not None
        optimizer = self.optimizers()
        self.update_learning_rate(optimizer)
        compiled = self.compiled_step() if self.compile_update else None
        for _ in range(gradient_steps):
            data = self.sample_replay(batch_size)
            discounts = data.discounts if data.discounts is not None else self.gamma
            batch = (
                data.observations,
                data.actions,
                data.rewards,
                data.dones,
                discounts,
                data.next_observations,
            )
            if compiled is not None:
                loss = compiled(optimizer, *batch)
            else:
                loss = self.td_loss(policy.q_net, *batch)
                self.optimizer_step(optimizer, loss, self.max_grad_norm)
            self.record("loss", loss)
        self.n_updates += gradient_steps

    def compiled_step(self) -> CompiledStep:
        """The compiled gradient step (built once, compiled on its first call, kept across ``learn`` calls
        while the network and ``max_grad_norm`` stay)."""
        step = self._compiled_step
        if step is None or step.network is not self.policy.q_net or not step.clips_at(self.max_grad_norm):
            step = self._compiled_step = CompiledStep(self.policy.q_net, self.td_loss, self.max_grad_norm)
        return step

    def collect_metrics(self) -> dict[str, float]:
        return {**super().collect_metrics(), "rollout/exploration_rate": self.exploration_rate}
