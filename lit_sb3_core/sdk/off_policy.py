"""``OffPolicyAlgorithm``: the shared loop of replay-buffer methods (DQN, QR-DQN, SAC, TD3, ...).

The loop is Stable-Baselines3's, step for step:

1. collect one ``train_freq`` chunk: ``n`` environment steps (or ``n`` episodes), acting at random
   (from the action space) until ``learning_starts`` steps, then with the policy's exploration
   (``explore``), plus ``action_noise`` for Box actions; every transition goes into the replay buffer
   (Box actions scaled to [-1, 1]; the true final observation as ``next_obs`` where an episode ended);
   ``on_env_step`` runs after every step (DQN updates its target network and epsilon there);
2. once ``num_timesteps > learning_starts``, run ``gradient_steps`` updates (``train_on_buffer``, SB3's
   ``train``; -1 means as many as environment steps were just collected).

How this maps onto Lightning. One Lightning batch runs *several* such chunks back to back: enough to
cover ``min_steps_per_batch`` (256) environment steps, or a single chunk when ``train_freq`` counts
episodes. The interleaving of collection and updates inside a batch is exactly SB3's, so the learning is
identical to one-chunk batches; only the granularity of Lightning's hooks changes. The reason is speed:
Lightning spends roughly 300 microseconds per batch, which would be a third of a DQN step on CartPole
and still noticeable for SAC's one-step chunks; over 256 steps it is a fraction of a percent. The budget
(``RLTrainer(max_steps)``) is checked before every chunk, as SB3 checks it, so runs stop on the same step.
``val_check_interval`` and other per-batch settings therefore count batches of >= 256 steps.

Logging follows SB3's rhythm: metrics are written when ``log_interval`` more episodes have finished
(``learn(log_interval=4)``, ``RLTrainer(log_every_n_steps=4)``; 4 by default, as SB3's off-policy
``learn``), at most once per Lightning batch, and once at the end of the run. ``train/*`` values are
means over the gradient steps since the previous write, accumulated as tensors so no update waits on a
``.item()``.

The replay buffer is created when training starts (it needs ``n_envs``) and kept across ``learn`` calls.
``save_replay_buffer``/``load_replay_buffer`` write and read ``.npz`` files; Lightning checkpoints carry it
too, so a resumed run continues with its experience (``checkpoint_replay_buffer=False`` skips it: it can
be large). When a run (re)starts on freshly reset
environments, the newest transitions are marked truncated first, so n-step windows and memory-optimized
storage never join two episodes (SB3 does the same for memory-optimized buffers);
``learn(reset_num_timesteps=False)`` on the same environments continues the episodes in flight.
"""

from __future__ import annotations

import math
import warnings
from enum import Enum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, ClassVar, cast

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.data.noise import ActionNoise, make_action_noise, noise_to_spec
from lit_sb3_core.data.replay_buffer import (
    DictReplayBuffer,
    NStepReplayBuffer,
    ReplayBuffer,
    ReplaySamples,
)
from lit_sb3_core.engine.lightning_internals import attached_trainer
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import (
    check_choice,
    check_fraction,
    check_int,
    check_non_negative_int,
    check_positive_int,
)
from lit_sb3_core.foundation.rng import GlobalNumpyRng
from lit_sb3_core.foundation.schedules import Schedule
from lit_sb3_core.foundation.spaces import (
    describe_space,
    obs_to_tensor,
    scale_action,
    to_numpy,
    unscale_action,
)
from lit_sb3_core.nets.actor_critic import class_to_string
from lit_sb3_core.nets.off_policy_policies import OffPolicyPolicy
from lit_sb3_core.registry.names import resolve_named_class
from lit_sb3_core.sb3.original_transitions import OriginalTransitions
from lit_sb3_core.sb3.own_loop import RolloutReturn, check_own_loop
from lit_sb3_core.sdk.algorithm import RLAlgorithm, clip_grad_norm
from lit_sb3_core.sdk.fast_path import plain_calls
from lit_sb3_core.sdk.step_callbacks import StepCallbacks

if TYPE_CHECKING:
    from typing import Self

__all__ = ["OffPolicyAlgorithm", "TrainFreq", "clip_grad_norm", "parse_train_freq"]

TrainFreq = tuple[int, str]


def parse_train_freq(train_freq: Any) -> TrainFreq:
    """``4`` -> ``(4, "step")``; ``(2, "episode")`` and ``[2, "episode"]`` (JSON) are taken as they are."""
    if isinstance(train_freq, (list, tuple)):
        if len(train_freq) != 2:
            raise ConfigurationError(
                f"train_freq must be an integer or a pair (n, 'step'|'episode'), got {train_freq!r}."
            )
        frequency, unit = train_freq
    else:
        frequency, unit = train_freq, "step"
    check_positive_int("train_freq", frequency, hint="It trains every n steps or episodes: (n, unit).")
    check_choice("the unit of train_freq", unit, ("step", "episode"))
    return int(frequency), str(unit)


def _jsonable_enums(value: Any) -> Any:
    """``value`` with the ``Enum`` members JSON cannot hold (HER's ``GoalSelectionStrategy``) as their lower-case
    name, as SB3 spells them in configs (``"future"``); the arguments that take them take the name too."""
    if isinstance(value, dict):
        return {key: _jsonable_enums(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_jsonable_enums(item) for item in value)
    if isinstance(value, Enum) and not isinstance(value, (str, int, float)):
        return value.name.lower()
    return value


class _TrainStats:
    """Running sums of per-update metrics kept as tensors; read (one sync) only when logging."""

    def __init__(self) -> None:
        self.sums: dict[str, torch.Tensor] = {}
        self.counts: dict[str, int] = {}

    def add(self, name: str, value: torch.Tensor) -> None:
        value = value.detach()
        total = self.sums.get(name)
        self.sums[name] = value if total is None else total + value
        self.counts[name] = self.counts.get(name, 0) + 1

    def means(self) -> dict[str, float]:
        if not self.sums:
            return {}
        names = list(self.sums)
        values = torch.stack([self.sums[n].float().reshape(()) for n in names]).tolist()
        means = {name: value / self.counts[name] for name, value in zip(names, values)}
        self.sums.clear()
        self.counts.clear()
        return means


class OffPolicyAlgorithm(RLAlgorithm):
    """Base class of off-policy algorithms: a replay buffer, exploration, and SB3's collect/train loop.

    Subclasses implement ``train_on_buffer(gradient_steps, batch_size)`` (SB3's ``train``; renamed because
    ``train(mode)`` belongs to ``nn.Module``) and ``configure_optimizers``, and may
    override ``explore`` (exploration actions), ``on_env_step`` (per-step bookkeeping) and
    ``random_warmup_steps`` (how long to act at random first).

    Args:
        policy: policy alias (``"MlpPolicy"``), import path or class.
        env: optional environment to build the policy from and train on with ``learn``.
        learning_rate: number, ``"lin_<start>"`` or callable of progress remaining.
        buffer_size: transitions the replay buffer holds.
        learning_starts: environment steps of random actions before learning starts.
        batch_size: minibatch size of each gradient step.
        tau: soft (Polyak) target update coefficient; 1 is a hard copy.
        gamma: discount factor.
        train_freq: update every ``n`` steps, or ``(n, "step" | "episode")`` (a list works too).
        gradient_steps: updates after each chunk; -1: as many as environment steps were collected.
        action_noise: exploration noise for Box actions: an ``ActionNoise`` or a spec such as
            ``{"type": "normal", "sigma": 0.1}`` (see ``lit_sb3_core.data.noise``).
        replay_buffer_class: buffer class, import path or registered name (``"her"``); default
            ``ReplayBuffer`` (``DictReplayBuffer`` for Dict observations). A buffer with a ``set_env(env)``
            method receives the training env each time training starts (HER needs its ``compute_reward``).
        replay_buffer_kwargs: extra buffer arguments, e.g. ``{"handle_timeout_termination": False}``.
        optimize_memory_usage: store each observation once (see ``ReplayBuffer``).
        n_steps: n-step returns (1: one-step TD targets).
        policy_kwargs: arguments of the policy class.
        stats_window_size: episodes averaged in ``rollout/ep_rew_mean`` and kept in ``ep_info_buffer``.
        tensorboard_log: folder for ``learn``'s TensorBoard logs.
        verbose: 1 prints the metrics when they are logged.
        seed: seed of python, numpy, torch, the environments, the buffer's sampling and the noise.
        device: accelerator ``learn`` uses.
        checkpoint_replay_buffer: store the replay buffer in Lightning checkpoints (default; resumed runs
            continue with their experience; the checkpoint grows with the buffer, False skips it).
    """

    # Environment steps a Lightning batch covers at least (see the module docstring).
    min_steps_per_batch: ClassVar[int] = 256
    # Off-policy methods count log_interval in episodes, as SB3 does (4 in its learn()).
    default_log_interval: ClassVar[int] = 4
    plain_attributes: ClassVar[frozenset[str]] = RLAlgorithm.plain_attributes | {
        "n_calls",
        "episode_num",
        "current_learning_rate",
        "exploration_rate",
    }
    supported_action_spaces: ClassVar[tuple[type[spaces.Space], ...]] = (spaces.Box, spaces.Discrete)
    # RLEnvDataModule(normalize=...): raw transitions in the buffer, minibatches normalized (sample_replay)
    supports_normalization: ClassVar[bool] = True
    dispatches_step_callbacks: ClassVar[bool] = True
    # Several partial backward passes per gradient step (see RLAlgorithm.average_gradients_per_step).
    average_gradients_per_step: ClassVar[bool] = True

    # Built from the env's spaces (see RLAlgorithm); typed as built, as SB3 types it.
    policy: OffPolicyPolicy

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
        policy_kwargs: dict[str, Any] | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: str = "auto",
        checkpoint_replay_buffer: bool = True,
    ) -> None:
        check_positive_int("buffer_size", buffer_size)
        check_positive_int("batch_size", batch_size)
        # batch_size may exceed buffer_size: minibatches are drawn with replacement, as SB3's.
        check_positive_int("n_steps", n_steps)
        check_fraction("tau", tau)
        check_fraction("gamma", gamma)
        check_non_negative_int("learning_starts", learning_starts)
        check_int(
            "gradient_steps",
            gradient_steps,
            minimum=-1,
            hint="Give a number of gradient steps per rollout, or -1 for as many as environment steps.",
        )
        if replay_buffer_kwargs is not None and not isinstance(replay_buffer_kwargs, dict):
            raise ConfigurationError(
                f"replay_buffer_kwargs must be a dict, got {type(replay_buffer_kwargs).__name__}."
            )
        self.buffer_size = int(buffer_size)
        self.learning_starts = int(learning_starts)
        self.batch_size = int(batch_size)
        self.tau = float(tau)
        self.gamma = float(gamma)
        self.train_freq = parse_train_freq(train_freq)
        self.gradient_steps = int(gradient_steps)
        self.optimize_memory_usage = bool(optimize_memory_usage)
        self.n_steps = int(n_steps)
        self.replay_buffer_kwargs = dict(replay_buffer_kwargs or {})
        self.checkpoint_replay_buffer = bool(checkpoint_replay_buffer)
        self._noise_source = action_noise
        noise_to_spec(action_noise)  # validate early
        self.action_noise: ActionNoise | None = None
        self._noise_seeded = False  # seeded once, at the first fit start (per rank)
        self.replay_buffer: ReplayBuffer | None = None
        self.episode_num = 0
        self.n_calls = 0
        self._log_episode_mark = 0
        self._stop_requested = False  # a step callback returned False
        self.current_learning_rate = 0.0
        self._train_stats = _TrainStats()
        self.exploration_rng: np.random.Generator | GlobalNumpyRng | None = None
        self._pending_off_policy_state: dict[str, Any] | None = None
        # With a VecNormalize training env: the originals the buffer stores (and the wrapper sample_replay uses)
        self._originals: OriginalTransitions | None = None
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
        self.metrics.due = False  # off-policy logging is decided per iteration (training_step)
        # Hyperparameters stay plain JSON: noise objects become specs, classes import strings. Only the
        # arguments the subclass's constructor takes were saved (a C51 without action noise has none).
        plain = {
            "action_noise": noise_to_spec(action_noise),
            "replay_buffer_class": class_to_string(replay_buffer_class),
            "train_freq": list(train_freq) if isinstance(train_freq, tuple) else train_freq,
            "replay_buffer_kwargs": _jsonable_enums(replay_buffer_kwargs),
        }
        for name, value in plain.items():
            if name in self.hparams:
                self.hparams[name] = value
        self._replay_buffer_class = self._resolve_buffer_class(replay_buffer_class)
        if self._replay_buffer_class is not None and self.n_steps > 1:
            name = getattr(self._replay_buffer_class, "__name__", str(self._replay_buffer_class))
            warnings.warn(
                f"n_steps={self.n_steps} is ignored: replay_buffer_class={name} is built from "
                "replay_buffer_kwargs only, as in SB3. Pass n_steps (and gamma) in replay_buffer_kwargs for "
                "n-step returns from it, or drop replay_buffer_class.",
                UserWarning,
                stacklevel=2,
            )
        self._ensure_replay_buffer()
        self._ensure_action_noise()

    # configuration --------------------------------------------------------------------------------------
    @staticmethod
    def _resolve_buffer_class(value: Any) -> type | None:
        if value is None or isinstance(value, type):
            return value
        if not isinstance(value, str):
            raise ConfigurationError(
                f"replay_buffer_class must be a class, an import path or a registered name, got {value!r}."
            )
        if ":" in value or "." in value:
            return resolve_named_class("buffer", value, field="replay_buffer_class")
        from lit_sb3_core.registry import registry as _registry

        return _registry.get_buffer_class(value)  # UnknownNameError lists the registered buffers

    def _make_replay_buffer(self, n_envs: int) -> ReplayBuffer:
        assert self.observation_space is not None and self.action_space is not None
        cls = self._replay_buffer_class
        kwargs: dict[str, Any] = {"optimize_memory_usage": self.optimize_memory_usage}
        if cls is None:  # the default buffer takes the algorithm's n_steps; a class of the user's does not
            if isinstance(self.observation_space, spaces.Dict):
                cls = DictReplayBuffer
            else:
                cls = NStepReplayBuffer if self.n_steps > 1 else ReplayBuffer
            kwargs.update(n_steps=self.n_steps, gamma=self.gamma)
        if isinstance(cls, type) and issubclass(cls, ReplayBuffer):
            kwargs["seed"] = self._own_stream_seed(1)
        kwargs.update(self.replay_buffer_kwargs)
        try:
            return cls(
                self.buffer_size,
                self.observation_space,
                self.action_space,
                device=self.device,
                n_envs=n_envs,
                **kwargs,
            )
        except TypeError as exc:
            raise ConfigurationError(
                f"Cannot create the replay buffer {cls.__name__} with {sorted(kwargs)}: {exc}. Check "
                "replay_buffer_kwargs."
            ) from None

    def build_policy(self, observation_space: spaces.Space, action_space: spaces.Space) -> None:
        super().build_policy(observation_space, action_space)
        if "_replay_buffer_class" in self.__dict__:  # not while the constructor is still running
            self._ensure_replay_buffer()
            self._ensure_action_noise()

    def _ensure_replay_buffer(self) -> None:
        """An empty buffer as soon as the spaces are known (SB3 has one after construction and load); it is
        replaced when training starts if the number of envs differs."""
        if self.replay_buffer is None and self.observation_space is not None:
            self.replay_buffer = self._make_replay_buffer(1)

    def _ensure_action_noise(self) -> None:
        """The exploration noise object as soon as the Box action space is known (SB3's ``model.action_noise``
        exists after construction); it is resized to the run's number of envs, and seeded, at fit start."""
        if self.action_noise is None and isinstance(self.action_space, spaces.Box):
            self.action_noise = make_action_noise(self._noise_source, int(np.prod(self.action_space.shape)))

    def _own_stream_seed(self, stream: int) -> int | None:
        """``_rank_seed(stream)`` under DDP; None in one process, where the buffer and exploration draw from
        numpy's global generator with SB3's calls (``GlobalNumpyRng``), so a seed gives SB3's run."""
        return self._rank_seed(stream) if self.world_size > 1 else None

    def _rank_seed(self, stream: int) -> int | None:
        """A distinct seed per rank and purpose (``stream``), derived from ``seed``."""
        if self.seed is None:
            return None
        trainer = attached_trainer(self)
        rank = int(trainer.global_rank) if trainer is not None else 0
        return int(self.seed) + 1_000_003 * stream + 7919 * rank

    # Lightning hooks --------------------------------------------------------------------------------------
    def on_fit_start(self) -> None:
        obs_before = self.last_obs
        super().on_fit_start()
        env_was_reset = self.last_obs is not obs_before
        env = self.vector_env
        assert env is not None and self.action_space is not None
        n_envs = env.num_envs
        if self.train_freq[1] == "episode" and n_envs > 1:
            raise ConfigurationError(
                f"train_freq={list(self.train_freq)} counts episodes, which needs a single environment; got "
                f"n_envs={n_envs}. Use train_freq=(n, 'step') or n_envs=1."
            )
        if self.train_freq[1] == "episode" and self.world_size > 1:
            raise ConfigurationError(
                f"train_freq={list(self.train_freq)} counts episodes, whose lengths differ between ranks, "
                f"so {self.world_size} processes would fall out of step. Use train_freq=(n, 'step') under DDP."
            )
        buffer = self.replay_buffer
        if buffer is not None and buffer.n_envs != n_envs:
            if buffer.size() > 0:
                raise ConfigurationError(
                    f"The replay buffer holds transitions of {buffer.n_envs} environment(s), but this run "
                    f"has n_envs={n_envs}. Train with n_envs={buffer.n_envs}, or clear it with "
                    "model.replay_buffer = None."
                )
            buffer = None
        if buffer is None:
            buffer = self.replay_buffer = self._make_replay_buffer(n_envs)
        buffer.device = self.device
        if hasattr(buffer, "set_env"):  # buffers that need the env (HER: compute_reward) get this run's
            buffer.set_env(env)
        if env_was_reset:
            _warn_lossy_truncation(buffer)
            buffer.truncate_last_transition()  # their episodes ended here, without a real termination
        if isinstance(self.action_space, spaces.Box):
            first = not self._noise_seeded
            self.action_noise = make_action_noise(
                self.action_noise if self.action_noise is not None else self._noise_source,
                int(np.prod(self.action_space.shape)),
                n_envs,
                seed=self._own_stream_seed(2) if first else None,
            )
            if first and self.action_noise is not None and self.world_size == 1:
                self.action_noise.draw_from_global_numpy()  # SB3's draws, in SB3's order
            self._noise_seeded = self.action_noise is not None
            self._action_low = np.asarray(self.action_space.low, dtype=np.float32)
            self._action_high = np.asarray(self.action_space.high, dtype=np.float32)
        if self.exploration_rng is None:
            seed = self._own_stream_seed(3)
            self.exploration_rng = GlobalNumpyRng() if seed is None else np.random.default_rng(seed)
        self._apply_pending_state()
        vec_normalize = self.get_vec_normalize_env()
        if vec_normalize is not None and self.normalizers.active:
            # the policy would act on twice-normalized observations but learn from once-normalized minibatches
            raise ConfigurationError(
                f"This model normalizes with its own statistics (normalize={self.normalization}), and its "
                "training env is wrapped in SB3's VecNormalize, which normalizes what the env returns a second "
                "time. Train it on an env without VecNormalize."
            )
        self._originals = None if vec_normalize is None else OriginalTransitions(vec_normalize, self.last_obs)
        self._step_increment = n_envs * self.world_size
        self._chunks_per_batch = self._chunks_per_batch_for(n_envs)
        self._log_episode_mark = self.episode_num
        self._stop_requested = False
        # Lightning warns about modules in eval mode right after this hook; target networks are in eval
        # mode on purpose, so switch everything on until on_train_start lets the policy decide again.
        torch.nn.Module.train(self.policy, True)

    def training_step(self, batch: Any, batch_idx: int) -> None:
        """Several SB3 iterations (collect a ``train_freq`` chunk, then train) back to back."""
        # Without hooks on the policy, networks that support it skip nn.Module.__call__'s hook dispatch.
        with plain_calls(self.policy):
            for _ in range(self._chunks_per_batch):
                if self.budget.reached():
                    break
                steps = self.collect_chunk()
                if self._stop_requested:  # a step callback asked to stop: no update after that step
                    break
                if self.num_timesteps > 0 and self.num_timesteps > self.learning_starts:
                    gradient_steps = self.gradient_steps if self.gradient_steps >= 0 else steps
                    if gradient_steps > 0:
                        self._set_policy_mode(True)
                        self.train_on_buffer(gradient_steps, self.batch_size)
        self.iterations += 1
        self.metrics.due = self._log_due()  # this iteration's answer to should_log(), decided here
        if self.metrics.due:
            self.metrics.log_iteration(self.collect_metrics())
            self._log_episode_mark = self.episode_num
        if self.budget.reached() or self._stop_requested:
            self.trainer.should_stop = True

    def _log_due(self) -> bool:
        """Every ``log_interval`` finished episodes (SB3's off-policy rhythm) and at the end of the budget.

        Writing reduces episode statistics over ranks, so with several processes the decision is shared:
        any rank that is due makes every rank write.
        """
        due = self.episode_num - self._log_episode_mark >= self.log_interval or self.budget.reached()
        if self.world_size > 1:
            due = bool(self.ranks.all_reduce(torch.tensor([float(due)]), "sum").item() > 0)
        return due

    def env_steps_per_iteration(self, n_envs: int) -> int | None:
        if self.train_freq[1] == "episode":
            return None
        return self._chunks_per_batch_for(n_envs) * self.train_freq[0] * n_envs

    def _chunks_per_batch_for(self, n_envs: int) -> int:
        if self.train_freq[1] == "episode":
            return 1
        return max(1, math.ceil(self.min_steps_per_batch / (self.train_freq[0] * n_envs)))

    def collect_metrics(self) -> dict[str, float]:
        """What is logged besides rollout and time metrics; subclasses add theirs."""
        metrics: dict[str, float] = {"time/episodes": self.episode_num}
        metrics.update({f"train/{name}": value for name, value in self._train_stats.means().items()})
        if self.n_updates:
            metrics["train/n_updates"] = self.n_updates
            metrics["train/learning_rate"] = self.current_learning_rate
        return metrics

    def record(self, name: str, value: torch.Tensor) -> None:
        """Add one update's value of ``train/<name>``; the logged value is the mean since the last write."""
        self._train_stats.add(name, value)

    def train(
        self, mode: bool = True, gradient_steps: int | None = None, batch_size: int | None = None
    ) -> Self:
        """``nn.Module.train(mode)``, or with ``gradient_steps``, SB3's ``model.train(gradient_steps,
        batch_size=...)``: that many updates from the replay buffer (``batch_size`` defaults to the model's).

        One name serves both because Lightning switches modes with ``train()`` while SB3 code calls
        ``model.train(gradient_steps=...)`` by keyword; the updates need a model that has collected
        transitions with ``learn``.
        """
        if gradient_steps is None:
            return super().train(mode)
        steps = check_non_negative_int("gradient_steps", gradient_steps)
        size = self.batch_size if batch_size is None else check_positive_int("batch_size", batch_size)
        buffer = self.replay_buffer
        if buffer is None or buffer.size() == 0:
            raise ConfigurationError(
                f"{type(self).__name__}.train(gradient_steps={gradient_steps}) samples the replay buffer, which "
                "is empty: collect transitions first with model.learn(...)."
            )
        if attached_trainer(self) is None:
            raise ConfigurationError(
                f"{type(self).__name__}.train(gradient_steps={gradient_steps}) steps the optimizers of a Lightning "
                "trainer, which a model has once it has trained: call model.learn(...) once first."
            )
        self._set_policy_mode(True)
        self.train_on_buffer(steps, size)
        return self

    def _on_step(self) -> None:
        """SB3's per-vector-step hook: counts the step (``n_calls``) and runs ``on_env_step`` (target
        updates, schedules), as the collection loop does after every vector step."""
        self.n_calls += 1
        self.on_env_step()

    # collection ---------------------------------------------------------------------------------------------
    def train_on_buffer(self, gradient_steps: int, batch_size: int) -> None:
        """``gradient_steps`` updates from minibatches of ``batch_size`` (what SB3's ``train`` does)."""
        raise NotImplementedError

    def sample_replay(self, batch_size: int) -> ReplaySamples:
        """A minibatch of the replay buffer as the updates train on it.

        With a ``VecNormalize`` training env the buffer holds the original observations and rewards, and
        they are normalized here with the wrapper's current statistics (SB3's
        ``replay_buffer.sample(batch_size, env=self._vec_normalize_env)``); with ``RLEnvDataModule(normalize=...)``
        with the model's own statistics (``self.normalizers``) the same way; otherwise as stored.
        """
        buffer, originals = self.replay_buffer, self._originals
        assert buffer is not None
        normalization: Any = (
            originals.vec_normalize
            if originals is not None
            else (self.normalizers if self.normalizers.active else None)  # also for train() on a loaded model
        )
        # env= only when there is one: a buffer class of the user's may take batch_size alone
        return (
            buffer.sample(batch_size)
            if normalization is None
            else buffer.sample(batch_size, env=normalization)
        )

    def update_learning_rate(self, optimizers: Any) -> float:
        lr = super().update_learning_rate(optimizers)
        self.current_learning_rate = lr
        return lr

    @torch.inference_mode()
    def collect_chunk(self) -> int:
        """Step the environments for one ``train_freq`` chunk; returns the environment steps taken."""
        env, buffer, policy = self.vector_env, self.replay_buffer, self.policy
        assert env is not None and buffer is not None and policy is not None
        self._set_policy_mode(False)
        frequency, unit = self.train_freq
        by_steps = unit == "step"
        box = isinstance(self.action_space, spaces.Box)
        discrete_offset = (
            int(self.action_space.start) if isinstance(self.action_space, spaces.Discrete) else 0
        )
        noise = self.action_noise
        explore, on_env_step, step = self.explore, self.on_env_step, env.step
        add: Any = buffer.add  # a buffer with copy_info_dict (HER's) takes infos= too
        increment, random_until = self._step_increment, self.random_warmup_steps()
        update_progress = self.budget.update_progress  # progress_remaining, for the schedules
        originals = self._originals  # with a VecNormalize env: store its original observations and rewards
        # RLEnvDataModule(normalize=...): the policy acts on normalized observations, the buffer keeps raw ones
        own = self.normalizers if self.normalizers.active else None
        callbacks = self.step_callbacks
        wants_infos = bool(getattr(buffer, "copy_info_dict", False))  # a buffer that keeps the step infos
        if wants_infos:
            from lit_sb3_core.sb3.vec_env_views import sb3_infos
        has_callbacks = bool(callbacks)  # tested once per step; nothing else happens without callbacks
        if has_callbacks:
            callbacks.rollout_start()
        steps = episodes = 0
        while (steps < frequency) if by_steps else (episodes < frequency):
            acting_obs = self.last_obs
            if own is not None:  # statistics learn from every observation, random warm-up steps included
                acting_obs = own.obs(obs_to_tensor(acting_obs, self.device), update=True)
            if self.num_timesteps < random_until:
                env_actions = self.random_actions()
                buffer_actions = self._scale(env_actions) if box else env_actions - discrete_offset
            else:
                buffer_actions = explore(acting_obs)
            if box:
                if noise is not None:
                    buffer_actions = np.clip(buffer_actions + noise(), -1.0, 1.0)
                env_actions = self._unscale(buffer_actions)
            else:
                env_actions = buffer_actions + discrete_offset if discrete_offset else buffer_actions
            new_obs, rewards, terminated, truncated, infos = step(env_actions)
            steps += 1
            self.num_timesteps += increment
            dones = terminated | truncated
            any_done = np.count_nonzero(dones) > 0  # ``dones.any()`` in a quarter of its time
            if own is not None:  # the return's std learns from the rewards, which are stored raw
                own.rewards(np.asarray(rewards, dtype=np.float32), dones)
            if originals is None:
                stored_obs, stored_rewards = self.last_obs, rewards
                next_obs = self._true_next_obs(new_obs, infos, dones) if any_done else new_obs
            else:
                stored_obs, next_obs, stored_rewards = originals.step(dones, infos.get("final_obs"))
            if wants_infos:  # HER with copy_info_dict: compute_reward gets each transition's SB3 info
                step_infos = sb3_infos(infos, terminated, truncated)
                add(
                    stored_obs,
                    next_obs,
                    buffer_actions,
                    stored_rewards,
                    terminated,
                    truncated,
                    infos=step_infos,
                )
            else:
                add(stored_obs, next_obs, buffer_actions, stored_rewards, terminated, truncated)
            self.last_obs = new_obs
            update_progress()
            self.n_calls += 1
            on_env_step()
            if any_done:
                self._record_episode_ends(infos)
                ended = np.flatnonzero(dones)
                episodes += len(ended)
                self.episode_num += len(ended)
                if noise is not None:
                    noise.reset(ended.tolist())
            if has_callbacks and not callbacks.step(self.chunk_step_locals(locals())):
                self._stop_requested = True
                return steps * env.num_envs
        if has_callbacks:
            callbacks.rollout_end()
        return steps * env.num_envs

    def collect_rollouts(
        self,
        env: Any,
        callback: Any,
        train_freq: Any,
        replay_buffer: Any,
        action_noise: ActionNoise | None = None,
        learning_starts: int = 0,
        log_interval: int | None = None,
    ) -> RolloutReturn:
        """SB3's ``collect_rollouts``, for code that runs SB3's loop itself after ``_setup_learn``.

        ``collect_chunk`` with SB3's arguments: it steps the training env (``model.get_env()``) for one
        ``train_freq`` (``model.train_freq``, ``4`` or ``(1, "episode")``) into ``replay_buffer``
        (``model.replay_buffer``), with ``action_noise`` on Box actions and random actions until
        ``learning_starts`` steps, calling ``callback`` around and after every step. Returns SB3's
        ``RolloutReturn(episode_timesteps, n_episodes, continue_training)``. ``log_interval`` is accepted
        for SB3's signature: ``learn`` writes the logs.
        """
        check_own_loop(self, env, replay_buffer, self.replay_buffer, callback)
        frequency = parse_train_freq(train_freq)
        check_non_negative_int("learning_starts", learning_starts)
        run = (self.train_freq, self.action_noise, self.learning_starts, self.step_callbacks)
        self.train_freq, self.action_noise, self.learning_starts = (
            frequency,
            action_noise,
            int(learning_starts),
        )
        self.step_callbacks = StepCallbacks([callback] if callback is not None else [])
        self._stop_requested = False
        episodes = self.episode_num
        try:
            steps = self.collect_chunk()
        finally:
            self.train_freq, self.action_noise, self.learning_starts, self.step_callbacks = run
        return RolloutReturn(steps, self.episode_num - episodes, not self._stop_requested)

    def chunk_step_locals(self, loop: dict[str, Any]) -> dict[str, Any]:
        """SB3's ``self.locals`` for a step callback, from ``collect_chunk``'s local variables."""
        return self.step_callbacks.locals(
            self,
            env=loop["env"],
            replay_buffer=loop["buffer"],
            train_freq=self.train_freq,
            action_noise=loop["noise"],
            learning_starts=self.learning_starts,
            num_collected_steps=loop["steps"],
            num_collected_episodes=loop["episodes"],
            actions=loop["env_actions"],
            buffer_actions=loop["buffer_actions"],
            new_obs=loop["new_obs"],
            rewards=loop["rewards"],
            dones=loop["dones"],
            infos=loop["infos"],
            terminated=loop["terminated"],
            truncated=loop["truncated"],
        )

    def random_actions(self) -> np.ndarray:
        """One uniformly random action per env, in the env's space.

        In one process drawn as SB3 draws them: one sample of the model's action space per env (seeded with
        the model; for SB3's vec envs it is the first env's own space). Under DDP from each rank's vector env.
        """
        assert self.vector_env is not None and self.action_space is not None
        if self.world_size > 1:
            return np.asarray(self.vector_env.action_space.sample())
        return np.array([self.action_space.sample() for _ in range(self.vector_env.num_envs)])

    def random_warmup_steps(self) -> int:
        """Environment steps that act uniformly at random (from the action space) before ``explore`` does.

        ``learning_starts``; SAC returns 0 with ``use_sde_at_warmup`` (its gSDE policy explores from the start).
        """
        return self.learning_starts

    def explore(self, obs: Any) -> np.ndarray:
        """Exploration actions for a batch of observations, in the buffer's space (Box: [-1, 1])."""
        actions = self.policy(obs_to_tensor(obs, self.device), deterministic=False)
        return to_numpy(actions)

    def on_env_step(self) -> None:
        """Called after every vector step (``_on_step`` in SB3): target updates, schedules."""

    def _true_next_obs(self, new_obs: Any, infos: dict[str, Any], dones: np.ndarray) -> Any:
        """``new_obs`` with the final observation of every env whose episode just ended."""
        final = infos["final_obs"]
        if isinstance(new_obs, dict):
            result = {key: value.copy() for key, value in new_obs.items()}
            for i in np.flatnonzero(dones):
                for key, values in result.items():
                    values[i] = final[i][key]
            return result
        stacked = np.array(new_obs, copy=True)
        for i in np.flatnonzero(dones):
            stacked[i] = final[i]
        return stacked

    def _scale(self, actions: np.ndarray) -> np.ndarray:
        """Box actions from the space's bounds to [-1, 1] (SB3's ``scale_action``)."""
        return scale_action(actions, self._action_low, self._action_high).astype(np.float32)

    def _unscale(self, actions: np.ndarray) -> np.ndarray:
        """[-1, 1] to the Box space's bounds (SB3's ``unscale_action``)."""
        low, high = self._action_low, self._action_high
        shaped = np.reshape(actions, (-1, *low.shape))
        return unscale_action(shaped, low, high).astype(np.float32)

    # SB3 surface ------------------------------------------------------------------------------------------
    def save_replay_buffer(self, path: str | Path | IO[bytes]) -> Path | IO[bytes]:
        """Write the replay buffer as a NumPy archive (arrays and a JSON header; no pickle): ``.npz`` added to a
        path without a suffix, SB3's ``.pkl`` kept."""
        if self.replay_buffer is None:
            raise ValueError(
                f"{type(self).__name__} has no replay buffer yet: it is created when training starts."
            )
        return self.replay_buffer.save(path)

    def load_replay_buffer(self, path: str | Path | IO[bytes], truncate_last_traj: bool = True) -> None:
        """Replace the replay buffer with one written by ``save_replay_buffer``.

        ``truncate_last_traj`` (SB3's name; buffers with episode bookkeeping, HER's, only): end the episodes
        that were in progress when it was saved as truncated, since training resumes on reset envs. Pass
        False when continuing on the very same environment state (``learn(reset_num_timesteps=False)``).
        """
        policy_built = self.observation_space is not None
        cls = self._replay_buffer_class if isinstance(self._replay_buffer_class, type) else ReplayBuffer
        loader = cls if issubclass(cls, ReplayBuffer) else ReplayBuffer
        buffer = loader.load(path, device=self.device)
        if policy_built and (
            buffer.observation_space != self.observation_space or buffer.action_space != self.action_space
        ):
            raise ConfigurationError(
                f"{str(path)!r} holds transitions for observations {describe_space(buffer.observation_space)} "
                f"and actions {describe_space(buffer.action_space)}, but the model has "
                f"{describe_space(self.observation_space)} and {describe_space(self.action_space)}."
            )
        if truncate_last_traj and callable(getattr(buffer, "truncate_last_trajectory", None)):
            cast(Any, buffer).truncate_last_trajectory()
        self.replay_buffer = buffer

    # checkpoints ------------------------------------------------------------------------------------------
    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        super().on_save_checkpoint(checkpoint)
        state: dict[str, Any] = {
            "episode_num": self.episode_num,
            "n_calls": self.n_calls,
            "rng": self.exploration_rng.bit_generator.state
            if isinstance(self.exploration_rng, np.random.Generator)
            else None,  # numpy's global generator: its state is the checkpoint's "rng"
            "noise": self.action_noise.state_dict() if self.action_noise is not None else None,
        }
        if self.checkpoint_replay_buffer and self.replay_buffer is not None:
            state["replay_buffer"] = self.replay_buffer.state_dict()
        checkpoint["lit_sb3_off_policy"] = state

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        super().on_load_checkpoint(checkpoint)
        state = checkpoint.get("lit_sb3_off_policy")
        if state is not None:
            self.episode_num = int(state["episode_num"])
            self.n_calls = int(state["n_calls"])
            self._pending_off_policy_state = state

    def _apply_pending_state(self) -> None:
        """Restore what a checkpoint held once the objects it belongs to exist (at fit start)."""
        state = self._pending_off_policy_state
        if state is None:
            return
        self._pending_off_policy_state = None
        if state.get("rng") is not None and isinstance(self.exploration_rng, np.random.Generator):
            self.exploration_rng.bit_generator.state = state["rng"]
        if state.get("noise") is not None and self.action_noise is not None:
            self.action_noise.load_state_dict(state["noise"])
        if state.get("replay_buffer") is not None and self.replay_buffer is not None:
            self.replay_buffer.load_state_dict(state["replay_buffer"])
            self.replay_buffer.truncate_last_transition()


def _warn_lossy_truncation(buffer: ReplayBuffer) -> None:
    """SB3's warning when a reset may cut the stored episode in progress short and the buffer cannot mark
    that as a timeout: with ``optimize_memory_usage`` and no ``handle_timeout_termination`` the last
    transition becomes a termination (no bootstrap), since the reset observation takes its next observation's
    row. Given whenever such a buffer holds transitions, as SB3 does.
    """
    if buffer.optimize_memory_usage and not buffer.handle_timeout_termination and buffer.size() > 0:
        warnings.warn(
            "The last trajectory in the replay buffer will be truncated: the environments were reset, and "
            "with optimize_memory_usage=True and handle_timeout_termination=False its last transition is "
            "stored as a termination. Continue with learn(reset_num_timesteps=False), or set "
            "handle_timeout_termination=True (kept as a timeout) or optimize_memory_usage=False.",
            stacklevel=2,
        )
