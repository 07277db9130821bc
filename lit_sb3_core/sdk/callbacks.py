"""Stable-Baselines3's callbacks, as Lightning callbacks.

Each is a ``lightning.pytorch.callbacks.Callback``: pass it to ``RLTrainer(callbacks=[...])``,
``RLTrainer(rl_callback=...)`` or SB3-style ``model.learn(..., callback=...)``. They run once per
algorithm iteration (a Lightning batch), never per environment step, so frequencies given in steps are
honoured at the first iteration boundary at or after them.

As in SB3, frequencies of :class:`EvalCallback` and :class:`CheckpointCallback` count *calls*: vector-env
steps, i.e. ``num_timesteps / n_envs`` (so ``eval_freq=1000`` with 8 envs evaluates every 8000 env steps).
A callback whose ``_on_step`` returns ``False`` stops training cleanly (``trainer.should_stop``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

from lit_sb3_core.errors import ConfigurationError

__all__ = [
    "CallbackList",
    "CheckpointCallback",
    "EvalCallback",
    "EveryNTimesteps",
    "FunctionCallback",
    "LogEveryNTimesteps",
    "RLCallback",
    "StopTrainingOnMaxEpisodes",
    "StopTrainingOnNoModelImprovement",
    "StopTrainingOnRewardThreshold",
]


class RLCallback(Callback):
    """Base of the SB3-style callbacks: implement ``_on_step() -> bool`` (False stops training).

    Attributes available in ``_on_step``: ``model`` (the algorithm), ``trainer``, ``num_timesteps``
    (environment steps, all envs and ranks), ``n_calls`` (vector-env steps so far), ``parent`` (the
    EvalCallback a child callback was attached to).
    """

    def __init__(self, verbose: int = 0) -> None:
        self.verbose = verbose
        self.model: Any = None
        self.trainer: L.Trainer | None = None
        self.parent: RLCallback | None = None
        self.n_calls = 0
        self.num_timesteps = 0

    # wiring -----------------------------------------------------------------------------------------
    def init_callback(self, model: Any, trainer: L.Trainer | None) -> None:
        """Attach to a run (called for children by their parent)."""
        self.model, self.trainer = model, trainer
        self._init_callback()

    def _init_callback(self) -> None:
        """Hook: set up once the model is known."""

    def on_fit_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.init_callback(pl_module, trainer)
        self._on_training_start()

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if not self.on_step():
            trainer.should_stop = True

    def on_fit_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._on_training_end()

    def on_step(self) -> bool:
        """Refresh the counters and run ``_on_step``; the return value says whether to keep training."""
        model = self.model
        self.num_timesteps = int(model.num_timesteps)
        envs = max(1, int(getattr(model, "n_envs", 1)) * int(getattr(model, "world_size", 1)))
        self.n_calls = self.num_timesteps // envs
        return self._on_step() is not False

    def _on_step(self) -> bool:
        return True

    def _on_training_start(self) -> None:
        """Hook: called at the start of ``fit``."""

    def _on_training_end(self) -> None:
        """Hook: called at the end of ``fit``."""

    def _crossed(self, frequency: int, last: int, counter: int) -> bool:
        return frequency > 0 and counter // frequency > last // frequency


class CallbackList(RLCallback):
    """Several callbacks as one; training continues only if every one says so."""

    def __init__(self, callbacks: Sequence[RLCallback]) -> None:
        super().__init__()
        self.callbacks = list(callbacks)

    def _init_callback(self) -> None:
        for callback in self.callbacks:
            callback.parent = self.parent
            callback.init_callback(self.model, self.trainer)

    def _on_training_start(self) -> None:
        for callback in self.callbacks:
            callback._on_training_start()

    def _on_step(self) -> bool:
        results = [callback.on_step() for callback in self.callbacks]
        return all(results)

    def _on_training_end(self) -> None:
        for callback in self.callbacks:
            callback._on_training_end()


class FunctionCallback(RLCallback):
    """SB3's function callbacks: ``fn(locals_, globals_) -> bool``, called once per iteration."""

    def __init__(self, fn: Callable[[dict[str, Any], dict[str, Any]], Any], verbose: int = 0) -> None:
        super().__init__(verbose)
        self.fn = fn

    def _on_step(self) -> bool:
        result = self.fn({"self": self.model, "model": self.model, "num_timesteps": self.num_timesteps}, {})
        return result is not False


def _is_global_zero(trainer: L.Trainer | None) -> bool:
    """Files are written by one process only under DDP."""
    return trainer is None or trainer.is_global_zero


def _as_child(callback: RLCallback | None, parent: RLCallback) -> RLCallback | None:
    if callback is not None:
        callback.parent = parent
    return callback


class EvalCallback(RLCallback):
    """Evaluate every ``eval_freq`` calls; keep the best model and a record of every evaluation.

    Args:
        eval_env: env id, Env or SAME_STEP VectorEnv to evaluate on.
        callback_on_new_best: run when the mean return improves (e.g. StopTrainingOnRewardThreshold).
        callback_after_eval: run after every evaluation (e.g. StopTrainingOnNoModelImprovement).
        n_eval_episodes: episodes per evaluation.
        eval_freq: vector-env steps between evaluations.
        log_path: folder for ``evaluations.npz`` (arrays ``timesteps``, ``results``, ``ep_lengths``; no pickle).
        best_model_save_path: folder for ``best_model.zip``.
        deterministic: evaluate the distribution's mode.
        render: render during evaluation.
        verbose: 1 prints each evaluation.
        warn: kept for SB3 signature compatibility.
    """

    def __init__(
        self,
        eval_env: Any,
        callback_on_new_best: RLCallback | None = None,
        callback_after_eval: RLCallback | None = None,
        n_eval_episodes: int = 5,
        eval_freq: int = 10_000,
        log_path: str | Path | None = None,
        best_model_save_path: str | Path | None = None,
        deterministic: bool = True,
        render: bool = False,
        verbose: int = 1,
        warn: bool = True,
    ) -> None:
        super().__init__(verbose)
        if isinstance(n_eval_episodes, bool) or not isinstance(n_eval_episodes, int) or n_eval_episodes < 1:
            raise ConfigurationError(f"n_eval_episodes must be a positive integer, got {n_eval_episodes!r}.")
        self.eval_env_source = eval_env
        self.callback_on_new_best = _as_child(callback_on_new_best, self)
        self.callback_after_eval = _as_child(callback_after_eval, self)
        self.n_eval_episodes = n_eval_episodes
        self.eval_freq = eval_freq
        self.log_path = Path(log_path) / "evaluations.npz" if log_path is not None else None
        self.best_model_save_path = Path(best_model_save_path) if best_model_save_path is not None else None
        self.deterministic = deterministic
        self.render = render
        self.best_mean_reward = -np.inf
        self.last_mean_reward = -np.inf
        self.evaluations_timesteps: list[int] = []
        self.evaluations_results: list[list[float]] = []
        self.evaluations_length: list[list[int]] = []
        self._eval_env: Any = None
        self._last_call = 0

    def _init_callback(self) -> None:
        from lit_sb3_core.engine.envs import make_vector_env

        if self._eval_env is None:
            source = self.eval_env_source
            self._eval_env = source if hasattr(source, "num_envs") else make_vector_env(source, 1)
        for child in (self.callback_on_new_best, self.callback_after_eval):
            if child is not None:
                child.init_callback(self.model, self.trainer)
        for path in (self.best_model_save_path, self.log_path.parent if self.log_path else None):
            if path is not None:
                path.mkdir(parents=True, exist_ok=True)

    def _on_step(self) -> bool:
        last, self._last_call = self._last_call, self.n_calls
        if not self._crossed(self.eval_freq, last, self.n_calls):
            return True
        return self.evaluate()

    def evaluate(self) -> bool:
        """Run one evaluation now; returns whether training should continue."""
        from lit_sb3_core.engine.evaluation import evaluate_policy

        rewards, lengths = evaluate_policy(
            self.model,
            self._eval_env,
            n_eval_episodes=self.n_eval_episodes,
            deterministic=self.deterministic,
            render=self.render,
            return_episode_rewards=True,
        )
        self.evaluations_timesteps.append(self.num_timesteps)
        self.evaluations_results.append(list(rewards))
        self.evaluations_length.append(list(lengths))
        if self.log_path is not None:
            np.savez(
                self.log_path,
                timesteps=np.array(self.evaluations_timesteps),
                results=np.array(self.evaluations_results),
                ep_lengths=np.array(self.evaluations_length),
            )
        # Under DDP every rank evaluates; they agree on the averaged result so they take the same decisions.
        stats = torch.tensor(
            [np.mean(rewards), np.std(rewards), np.mean(lengths), np.std(lengths)], dtype=torch.float64
        )
        mean_reward, std_reward, mean_length, std_length = self.model.all_reduce(stats, "mean").tolist()
        self.last_mean_reward = mean_reward
        metrics = {"eval/mean_reward": mean_reward, "eval/mean_ep_length": mean_length}
        for logger in self.model.loggers:
            logger.log_metrics(metrics, step=self.num_timesteps)
        if self.verbose >= 1 and _is_global_zero(self.trainer):
            print(
                f"Eval num_timesteps={self.num_timesteps}, episode_reward={mean_reward:.2f} +/- {std_reward:.2f}\n"
                f"Episode length: {mean_length:.2f} +/- {std_length:.2f}"
            )
        keep_training = True
        if mean_reward > self.best_mean_reward:
            if self.verbose >= 1:
                print("New best mean reward!")
            self.best_mean_reward = mean_reward
            if self.best_model_save_path is not None and _is_global_zero(self.trainer):
                self.model.save(self.best_model_save_path / "best_model.zip")
            if self.callback_on_new_best is not None:
                keep_training = self.callback_on_new_best.on_step()
        if self.callback_after_eval is not None:
            keep_training = self.callback_after_eval.on_step() and keep_training
        return keep_training


class CheckpointCallback(RLCallback):
    """Save a model file every ``save_freq`` calls: ``<save_path>/<name_prefix>_<steps>_steps.zip``.

    Args:
        save_freq: vector-env steps between saves.
        save_path: folder for the files.
        name_prefix: file name prefix.
        save_replay_buffer: also save the replay buffer (off-policy algorithms).
        save_vecnormalize: kept for SB3 compatibility; normalization statistics travel inside model files.
        verbose: 2 prints every save.
    """

    def __init__(
        self,
        save_freq: int,
        save_path: str | Path,
        name_prefix: str = "rl_model",
        save_replay_buffer: bool = False,
        save_vecnormalize: bool = False,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        if isinstance(save_freq, bool) or not isinstance(save_freq, int) or save_freq < 1:
            raise ValueError(f"save_freq must be a positive integer, got {save_freq!r}.")
        self.save_freq = save_freq
        self.save_path = Path(save_path)
        self.name_prefix = name_prefix
        self.save_replay_buffer = save_replay_buffer
        self.save_vecnormalize = save_vecnormalize
        self._last_call = 0

    def _init_callback(self) -> None:
        self.save_path.mkdir(parents=True, exist_ok=True)

    def _on_step(self) -> bool:
        last, self._last_call = self._last_call, self.n_calls
        if self._crossed(self.save_freq, last, self.n_calls) and _is_global_zero(self.trainer):
            path = self.save_path / f"{self.name_prefix}_{self.num_timesteps}_steps.zip"
            self.model.save(path)
            if self.save_replay_buffer and hasattr(self.model, "save_replay_buffer"):
                self.model.save_replay_buffer(
                    self.save_path / f"{self.name_prefix}_replay_buffer_{self.num_timesteps}_steps"
                )
            if self.verbose >= 2:
                print(f"Saving model checkpoint to {path}")
        return True


class StopTrainingOnRewardThreshold(RLCallback):
    """Stop once the parent EvalCallback's best mean return reaches ``reward_threshold``."""

    def __init__(self, reward_threshold: float, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.reward_threshold = reward_threshold

    def _on_step(self) -> bool:
        if not isinstance(self.parent, EvalCallback):
            raise TypeError("StopTrainingOnRewardThreshold must be an EvalCallback's callback_on_new_best.")
        reached = self.parent.best_mean_reward >= self.reward_threshold
        if reached and self.verbose >= 1:
            print(
                f"Stopping training: the mean reward {self.parent.best_mean_reward:.2f} reached the threshold."
            )
        return not reached


class StopTrainingOnMaxEpisodes(RLCallback):
    """Stop after ``max_episodes`` episodes per environment (``max_episodes * n_envs`` in total)."""

    def __init__(self, max_episodes: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.max_episodes = max_episodes
        self.n_episodes = 0

    def _on_step(self) -> bool:
        env = self.model.get_env()
        self.n_episodes = int(getattr(env, "episode_count", 0))
        total = self.max_episodes * max(1, getattr(env, "num_envs", 1))
        if self.n_episodes >= total and self.verbose >= 1:
            print(f"Stopping training after {self.n_episodes} episodes (max_episodes={self.max_episodes}).")
        return self.n_episodes < total


class StopTrainingOnNoModelImprovement(RLCallback):
    """Stop when ``max_no_improvement_evals`` evaluations in a row (after ``min_evals``) did not improve."""

    def __init__(self, max_no_improvement_evals: int, min_evals: int = 0, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.max_no_improvement_evals = max_no_improvement_evals
        self.min_evals = min_evals
        self.last_best_mean_reward = -np.inf
        self.no_improvement_evals = 0
        self._evals = 0

    def _on_step(self) -> bool:
        if not isinstance(self.parent, EvalCallback):
            raise TypeError("StopTrainingOnNoModelImprovement must be an EvalCallback's callback_after_eval.")
        self._evals += 1
        if self._evals > self.min_evals:
            if self.parent.best_mean_reward > self.last_best_mean_reward:
                self.no_improvement_evals = 0
            else:
                self.no_improvement_evals += 1
        self.last_best_mean_reward = self.parent.best_mean_reward
        stop = self.no_improvement_evals > self.max_no_improvement_evals
        if stop and self.verbose >= 1:
            print(f"Stopping training: no improvement in the last {self.no_improvement_evals} evaluations.")
        return not stop


class EveryNTimesteps(RLCallback):
    """Run ``callback`` each time another ``n_steps`` environment steps have passed."""

    def __init__(self, n_steps: int, callback: RLCallback) -> None:
        super().__init__()
        if isinstance(n_steps, bool) or not isinstance(n_steps, int) or n_steps < 1:
            raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}.")
        self.n_steps = n_steps
        self.callback = _as_child(callback, self)
        self.last_time_trigger = 0

    def _init_callback(self) -> None:
        self.callback.init_callback(self.model, self.trainer)  # type: ignore[union-attr]

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last_time_trigger >= self.n_steps:
            self.last_time_trigger = self.num_timesteps
            return self.callback.on_step()  # type: ignore[union-attr]
        return True


class LogEveryNTimesteps(RLCallback):
    """Print the latest metrics table every ``n_steps`` environment steps (SB3's logger dump)."""

    def __init__(self, n_steps: int) -> None:
        super().__init__()
        self.n_steps = n_steps
        self.last_time_trigger = 0
        self.dumps = 0
        self._start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last_time_trigger >= self.n_steps:
            from lit_sb3_core.engine.progress import print_metrics

            self.last_time_trigger = self.num_timesteps
            metrics = dict(getattr(self.model, "_last_metrics", {}))
            if metrics:
                print_metrics(metrics)
                self.dumps += 1
        return True
