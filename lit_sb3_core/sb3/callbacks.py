"""Stable-Baselines3's callbacks, as Lightning callbacks, with SB3's per-step semantics.

Each is a ``lightning.pytorch.callbacks.Callback``: pass it to ``RLTrainer(callbacks=[...])``,
``RLTrainer(rl_callback=...)`` or SB3-style ``model.learn(..., callback=...)``. :class:`RLCallback` is
SB3's ``BaseCallback``: when training starts it is attached to the model (``init_callback``,
``on_training_start`` with ``self.locals``), then the algorithm's collection loop calls ``on_step`` after
every vector-env step with that step's locals (``new_obs``, ``rewards``, ``dones``, ``infos``, ``actions``,
...; see ``lit_sb3_core.sdk.step_callbacks``), ``on_rollout_start``/``on_rollout_end`` around each rollout,
and ``on_training_end`` when training ends. ``_on_step`` returning ``False`` stops training at that step.

So frequencies count what SB3's count: ``n_calls`` is the number of vector-env steps (``eval_freq=1000`` with
8 envs evaluates every 8000 env steps), ``num_timesteps`` the environment steps of all envs (and ranks).
An algorithm whose loop does not call the step callbacks (``dispatches_step_callbacks = False``) gets one
``on_step`` per iteration instead.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

from lit_sb3_core.errors import EvalEnvMismatchError
from lit_sb3_core.foundation.checks import check_positive_int
from lit_sb3_core.foundation.files import write_atomically

__all__ = [
    "BaseCallback",
    "CallbackList",
    "CheckpointCallback",
    "ConvertCallback",
    "EvalCallback",
    "EventCallback",
    "EveryNTimesteps",
    "FunctionCallback",
    "LogEveryNTimesteps",
    "MaskableEvalCallback",
    "ProgressBarCallback",
    "RLCallback",
    "StableBaselines3Callback",
    "StopTrainingOnMaxEpisodes",
    "StopTrainingOnNoModelImprovement",
    "StopTrainingOnRewardThreshold",
    "is_stable_baselines3_callback",
]


class RLCallback(Callback):
    """SB3's ``BaseCallback``: implement ``_on_step() -> bool`` (False stops training).

    Attributes: ``model`` (the algorithm), ``training_env`` (``model.get_env()``), ``logger`` (the model's
    SB3-style logger), ``num_timesteps`` (environment steps, all envs and ranks), ``n_calls`` (calls of
    ``on_step``: vector-env steps for a top-level callback, events for a child), ``locals`` / ``globals``
    (the collection loop's variables), ``parent`` (the EventCallback a child belongs to), ``trainer``.
    Override points, as in SB3: ``_init_callback``, ``_on_training_start``, ``_on_rollout_start``,
    ``_on_step``, ``_on_rollout_end``, ``_on_training_end``.
    """

    def __init__(self, verbose: int = 0) -> None:
        self.verbose = verbose
        self.model: Any = None
        self.trainer: L.Trainer | None = None
        self.parent: RLCallback | None = None
        self.n_calls = 0
        self.num_timesteps = 0
        self.locals: dict[str, Any] = {}
        self.globals: dict[str, Any] = {}
        self._warned_none = False

    @property
    def training_env(self) -> Any:
        env = self.model.get_env()
        if env is None:
            raise RuntimeError("model.get_env() returned None: the model has no training environment yet.")
        return env

    @property
    def logger(self) -> Any:
        return self.model.logger

    # SB3's protocol -----------------------------------------------------------------------------------
    def init_callback(self, model: Any, trainer: L.Trainer | None = None) -> None:
        """Attach to ``model`` (parents call it for their children)."""
        self.model = model
        if trainer is not None:
            self.trainer = trainer
        self._init_callback()

    def _init_callback(self) -> None:
        """Hook: set up once the model is known."""

    def on_training_start(self, locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
        self.locals = locals_
        self.globals = globals_
        self.num_timesteps = int(self.model.num_timesteps)
        self._on_training_start()

    def _on_training_start(self) -> None:
        """Hook: called when training starts."""

    def on_rollout_start(self) -> None:
        self._on_rollout_start()

    def _on_rollout_start(self) -> None:
        """Hook: called before each rollout (a ``train_freq`` chunk for off-policy algorithms)."""

    def on_step(self) -> bool:
        """Count the call and run ``_on_step``; the result says whether to keep training."""
        self.n_calls += 1
        self.num_timesteps = int(self.model.num_timesteps)
        result = self._on_step()
        if result is None and not self._warned_none:
            self._warned_none = True
            warnings.warn(
                f"{type(self).__name__}._on_step returned None, which stops training (as in SB3): return True "
                "to continue.",
                UserWarning,
                stacklevel=2,
            )
        return bool(result)

    def _on_step(self) -> bool:
        return True

    def on_rollout_end(self) -> None:
        self._on_rollout_end()

    def _on_rollout_end(self) -> None:
        """Hook: called after each rollout."""

    def on_training_end(self) -> None:
        self._on_training_end()

    def _on_training_end(self) -> None:
        """Hook: called when training ends."""

    def update_locals(self, locals_: dict[str, Any]) -> None:
        """Take the collection loop's variables (also for the children)."""
        self.locals.update(locals_)
        self.update_child_locals(locals_)

    def update_child_locals(self, locals_: dict[str, Any]) -> None:
        """Hook: pass the loop's variables on to child callbacks."""

    # Lightning's hooks ----------------------------------------------------------------------------------
    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        # After the algorithm's on_fit_start: its training env is set up and its counters are final.
        self.trainer = trainer
        self.init_callback(pl_module)
        self.on_training_start(_learn_locals(trainer, pl_module), {})

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if getattr(pl_module, "dispatches_step_callbacks", False):
            return  # the algorithm's loop called on_step after every env step
        self.update_locals({"self": pl_module})
        if not self.on_step():
            trainer.should_stop = True

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.on_training_end()


BaseCallback = RLCallback  # SB3's name


def is_stable_baselines3_callback(obj: Any) -> bool:
    """Whether ``obj`` is a callback of the real ``stable_baselines3`` package (checked by class, no import)."""
    return any(
        klass.__name__ == "BaseCallback" and klass.__module__ == "stable_baselines3.common.callbacks"
        for klass in type(obj).__mro__
    )


class StableBaselines3Callback(RLCallback):
    """Runs a callback written for the real ``stable_baselines3`` package, such as wandb's ``WandbCallback``.

    Such callbacks subclass SB3's own ``BaseCallback``; they speak the same protocol as ``RLCallback``
    (``init_callback``, ``on_training_start``, ``update_locals``, ``on_step``, ...), so this forwards each call
    to it with the lit-sb3 model, its SB3 VecEnv view and its SB3 logger.
    """

    def __init__(self, callback: Any) -> None:
        super().__init__(getattr(callback, "verbose", 0))
        self.callback = callback

    def _init_callback(self) -> None:
        self.callback.init_callback(self.model)

    def _on_training_start(self) -> None:
        self.callback.on_training_start(self.locals, self.globals)

    def _on_rollout_start(self) -> None:
        self.callback.on_rollout_start()

    def update_child_locals(self, locals_: dict[str, Any]) -> None:
        self.callback.update_locals(locals_)

    def _on_step(self) -> bool:
        return bool(self.callback.on_step())

    def _on_rollout_end(self) -> None:
        self.callback.on_rollout_end()

    def _on_training_end(self) -> None:
        self.callback.on_training_end()


def _learn_locals(trainer: L.Trainer, model: Any) -> dict[str, Any]:
    """What SB3's ``learn`` has in its locals when it calls ``on_training_start``."""
    return {
        "self": model,
        "total_timesteps": int(getattr(trainer, "rl_total_timesteps", 0)),
        "log_interval": getattr(model, "log_interval", None),
        "tb_log_name": getattr(trainer, "run_name", type(model).__name__),
        "reset_num_timesteps": True,
        "callback": None,
    }


class EventCallback(RLCallback):
    """A callback that runs a child ``callback`` when an event happens (``_on_event``)."""

    def __init__(self, callback: RLCallback | None = None, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.callback = callback
        if callback is not None:
            callback.parent = self

    def init_callback(self, model: Any, trainer: L.Trainer | None = None) -> None:
        super().init_callback(model, trainer)
        if self.callback is not None:
            self.callback.init_callback(model, self.trainer)

    def _on_training_start(self) -> None:
        if self.callback is not None:
            self.callback.on_training_start(self.locals, self.globals)

    def _on_event(self) -> bool:
        return self.callback.on_step() if self.callback is not None else True

    def update_child_locals(self, locals_: dict[str, Any]) -> None:
        if self.callback is not None:
            self.callback.update_locals(locals_)


class CallbackList(RLCallback):
    """Several callbacks as one; training continues only if every one says so (each is called)."""

    def __init__(self, callbacks: Sequence[RLCallback]) -> None:
        super().__init__()
        self.callbacks = list(callbacks)

    def _init_callback(self) -> None:
        for callback in self.callbacks:
            callback.init_callback(self.model, self.trainer)
            callback.parent = self.parent

    def _on_training_start(self) -> None:
        for callback in self.callbacks:
            callback.on_training_start(self.locals, self.globals)

    def _on_rollout_start(self) -> None:
        for callback in self.callbacks:
            callback.on_rollout_start()

    def _on_step(self) -> bool:
        keep_training = True
        for callback in self.callbacks:
            keep_training = callback.on_step() and keep_training
        return keep_training

    def _on_rollout_end(self) -> None:
        for callback in self.callbacks:
            callback.on_rollout_end()

    def _on_training_end(self) -> None:
        for callback in self.callbacks:
            callback.on_training_end()

    def update_child_locals(self, locals_: dict[str, Any]) -> None:
        for callback in self.callbacks:
            callback.update_locals(locals_)


class ConvertCallback(RLCallback):
    """A function ``fn(locals_, globals_) -> bool`` called at every step (SB3's old-style callbacks)."""

    def __init__(
        self, callback: Callable[[dict[str, Any], dict[str, Any]], Any] | None, verbose: int = 0
    ) -> None:
        super().__init__(verbose)
        self.callback = callback

    def _on_step(self) -> bool:
        if self.callback is None:
            return True
        return self.callback(self.locals, self.globals)


FunctionCallback = ConvertCallback  # lit-sb3 0.1's name


def _is_global_zero(trainer: L.Trainer | None) -> bool:
    """Files are written by one process only under DDP."""
    return trainer is None or trainer.is_global_zero


class EvalCallback(EventCallback):
    """Evaluate every ``eval_freq`` calls; keep the best model and a record of every evaluation.

    Args:
        eval_env: env id, Env, SB3 VecEnv or SAME_STEP VectorEnv to evaluate on.
        callback_on_new_best: run when the mean return improves (e.g. StopTrainingOnRewardThreshold).
        callback_after_eval: run after every evaluation (e.g. StopTrainingOnNoModelImprovement).
        n_eval_episodes: episodes per evaluation.
        eval_freq: calls (vector-env steps) between evaluations.
        log_path: folder for ``evaluations.npz`` (arrays ``timesteps``, ``results``, ``ep_lengths`` and, with
            ``is_success`` infos, ``successes``; no pickle).
        best_model_save_path: folder for ``best_model.zip``.
        deterministic: evaluate the distribution's mode.
        render: render during evaluation.
        verbose: 1 prints each evaluation.
        warn: passed to ``evaluate_policy``.
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
        super().__init__(callback_after_eval, verbose)
        check_positive_int("n_eval_episodes", n_eval_episodes)
        self.callback_on_new_best = callback_on_new_best
        if callback_on_new_best is not None:
            callback_on_new_best.parent = self
        self.eval_env = eval_env
        self.n_eval_episodes = n_eval_episodes
        self.eval_freq = eval_freq
        self.log_path = Path(log_path) / "evaluations.npz" if log_path is not None else None
        self.best_model_save_path = Path(best_model_save_path) if best_model_save_path is not None else None
        self.deterministic = deterministic
        self.render = render
        self.warn = warn
        self.best_mean_reward = -np.inf
        self.last_mean_reward = -np.inf
        self.evaluations_timesteps: list[int] = []
        self.evaluations_results: list[list[float]] = []
        self.evaluations_length: list[list[int]] = []
        self.evaluations_successes: list[list[bool]] = []
        self._is_success_buffer: list[bool] = []

    @property
    def callback_after_eval(self) -> RLCallback | None:
        return self.callback

    def _init_callback(self) -> None:
        from lit_sb3_core.sb3.vec_env_views import find_vec_wrapper

        if (
            self.model.get_vec_normalize_env() is not None
            and find_vec_wrapper(self.eval_env, "VecNormalize") is None
        ):
            # As SB3 warns when the two envs differ in type; evaluate() then refuses.
            warnings.warn(_UNNORMALIZED_EVAL_ENV, UserWarning, stacklevel=2)
        if self.callback_on_new_best is not None:
            self.callback_on_new_best.init_callback(self.model, self.trainer)
        for path in (self.best_model_save_path, self.log_path.parent if self.log_path else None):
            if path is not None:
                path.mkdir(parents=True, exist_ok=True)

    def _on_step(self) -> bool:
        if self.eval_freq > 0 and self.n_calls % self.eval_freq == 0:
            return self.evaluate()
        return True

    def _log_success(self, locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
        """``evaluate_policy``'s per-env callback: the ``is_success`` of an episode that ended (SB3's)."""
        if locals_["done"]:
            success = locals_["info"].get("is_success")
            if success is not None:
                self._is_success_buffer.append(success)

    def evaluate(self) -> bool:
        """Run one evaluation now; returns whether training should continue."""
        from lit_sb3_core.engine.evaluation import evaluate_policy

        self._is_success_buffer = []
        if self.model.get_vec_normalize_env() is not None:
            _sync_normalization(self.model.get_vec_normalize_env(), self.eval_env)
        rewards, lengths = evaluate_policy(
            self.model,
            self.eval_env,
            n_eval_episodes=self.n_eval_episodes,
            deterministic=self.deterministic,
            render=self.render,
            return_episode_rewards=True,
            warn=self.warn,
            callback=self._log_success,
            use_masking=getattr(self, "use_masking", False),
        )
        self.evaluations_timesteps.append(self.num_timesteps)
        self.evaluations_results.append(list(rewards))
        self.evaluations_length.append(list(lengths))
        if self._is_success_buffer:
            self.evaluations_successes.append(list(self._is_success_buffer))
        if self.log_path is not None and _is_global_zero(self.trainer):
            arrays = {
                "timesteps": np.array(self.evaluations_timesteps),
                "results": np.array(self.evaluations_results),
                "ep_lengths": np.array(self.evaluations_length),
            }
            if self.evaluations_successes:
                arrays["successes"] = np.array(self.evaluations_successes)
            write_atomically(self.log_path, lambda handle: np.savez(handle, **arrays))  # type: ignore[arg-type]
        # Under DDP every rank evaluates; they agree on the averaged result so they take the same decisions.
        stats = torch.tensor(
            [np.mean(rewards), np.std(rewards), np.mean(lengths), np.std(lengths)], dtype=torch.float64
        )
        mean_reward, std_reward, mean_length, std_length = self.model.ranks.all_reduce(stats, "mean").tolist()
        self.last_mean_reward = mean_reward
        if self.verbose >= 1 and _is_global_zero(self.trainer):
            print(
                f"Eval num_timesteps={self.num_timesteps}, episode_reward={mean_reward:.2f} +/- {std_reward:.2f}\n"
                f"Episode length: {mean_length:.2f} +/- {std_length:.2f}"
            )
        logger = self.logger
        logger.record("eval/mean_reward", float(mean_reward))
        logger.record("eval/mean_ep_length", mean_length)
        if self._is_success_buffer:
            success_rate = float(np.mean(self._is_success_buffer))
            if self.verbose >= 1:
                print(f"Success rate: {100 * success_rate:.2f}%")
            logger.record("eval/success_rate", success_rate)
        logger.record("time/total_timesteps", self.num_timesteps, exclude="tensorboard")
        logger.dump(self.num_timesteps)
        keep_training = True
        if mean_reward > self.best_mean_reward:
            if self.verbose >= 1:
                print("New best mean reward!")
            self.best_mean_reward = mean_reward
            if self.best_model_save_path is not None and _is_global_zero(self.trainer):
                self.model.save(self.best_model_save_path / "best_model.zip")
            if self.callback_on_new_best is not None:
                keep_training = self.callback_on_new_best.on_step()
        if self.callback is not None:
            keep_training = self._on_event() and keep_training
        return keep_training


_UNNORMALIZED_EVAL_ENV = (
    "The training env is wrapped in VecNormalize but the EvalCallback's eval_env is not: wrap it the same way "
    "(VecNormalize(eval_env, training=False, norm_reward=False)) so it sees normalized observations."
)


def _sync_normalization(train: Any, evaluation: Any) -> None:
    """SB3's ``sync_envs_normalization``: the eval env's ``VecNormalize`` takes the training statistics."""
    from copy import deepcopy

    from lit_sb3_core.sb3.vec_env_views import find_vec_wrapper

    target = find_vec_wrapper(evaluation, "VecNormalize")
    if target is None:
        raise EvalEnvMismatchError(_UNNORMALIZED_EVAL_ENV)
    if train.norm_obs:
        target.obs_rms = deepcopy(train.obs_rms)
    target.ret_rms = deepcopy(train.ret_rms)


class MaskableEvalCallback(EvalCallback):
    """sb3-contrib's EvalCallback for MaskablePPO: evaluates with the env's action masks (``use_masking``)."""

    def __init__(self, *args: Any, use_masking: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.use_masking = use_masking


class CheckpointCallback(RLCallback):
    """Save a model file every ``save_freq`` calls: ``<save_path>/<name_prefix>_<steps>_steps.zip``.

    Args:
        save_freq: calls (vector-env steps) between saves.
        save_path: folder for the files.
        name_prefix: file name prefix.
        save_replay_buffer: also save the replay buffer (off-policy algorithms; SB3's ``.pkl`` name, a NumPy
            archive inside: no pickle).
        save_vecnormalize: also save the ``VecNormalize`` statistics, when the training env has one.
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
        check_positive_int("save_freq", save_freq)
        self.save_freq = save_freq
        self.save_path = Path(save_path)
        self.name_prefix = name_prefix
        self.save_replay_buffer = save_replay_buffer
        self.save_vecnormalize = save_vecnormalize

    def _init_callback(self) -> None:
        self.save_path.mkdir(parents=True, exist_ok=True)

    def _checkpoint_path(self, checkpoint_type: str = "", extension: str = "") -> Path:
        name = f"{self.name_prefix}_{checkpoint_type}{self.num_timesteps}_steps"
        return self.save_path / (f"{name}.{extension}" if extension else name)

    def _on_step(self) -> bool:
        if self.n_calls % self.save_freq != 0 or not _is_global_zero(self.trainer):
            return True
        path = self._checkpoint_path(extension="zip")
        self.model.save(path)
        if self.verbose >= 2:
            print(f"Saving model checkpoint to {path}")
        if self.save_replay_buffer and getattr(self.model, "replay_buffer", None) is not None:
            buffer_path = self.model.save_replay_buffer(
                self._checkpoint_path("replay_buffer_", extension="pkl")
            )
            if self.verbose >= 2:
                print(f"Saving model replay buffer checkpoint to {buffer_path}")
        get_vec_normalize = getattr(self.model, "get_vec_normalize_env", None)
        vec_normalize = get_vec_normalize() if self.save_vecnormalize and get_vec_normalize else None
        if vec_normalize is not None:
            vec_path = self._checkpoint_path("vecnormalize_", extension="pkl")
            vec_normalize.save(vec_path)
            if self.verbose >= 2:
                print(f"Saving model VecNormalize to {vec_path}")
        return True


class StopTrainingOnRewardThreshold(RLCallback):
    """Stop once the parent EvalCallback's best mean return reaches ``reward_threshold``."""

    def __init__(self, reward_threshold: float, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.reward_threshold = reward_threshold

    def _on_step(self) -> bool:
        if not isinstance(self.parent, EvalCallback):
            raise TypeError("StopTrainingOnRewardThreshold must be an EvalCallback's callback_on_new_best.")
        keep_training = bool(self.parent.best_mean_reward < self.reward_threshold)
        if not keep_training and self.verbose >= 1:
            print(
                f"Stopping training because the mean reward {self.parent.best_mean_reward:.2f} is above the "
                f"threshold {self.reward_threshold}"
            )
        return keep_training


class StopTrainingOnMaxEpisodes(RLCallback):
    """Stop after ``max_episodes`` episodes per environment (``max_episodes * n_envs`` in total)."""

    def __init__(self, max_episodes: int, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.max_episodes = max_episodes
        self._total_max_episodes = max_episodes
        self.n_episodes = 0

    def _init_callback(self) -> None:
        self._total_max_episodes = self.max_episodes * int(self.training_env.num_envs)

    def _on_step(self) -> bool:
        dones = self.locals.get("dones")
        if dones is not None:
            self.n_episodes += int(np.sum(dones))
        else:  # called once per iteration: count the env's finished episodes
            from lit_sb3_core.envs.episodes import EpisodeStatistics

            self.n_episodes = EpisodeStatistics(self.model.vector_env).count
        keep_training = self.n_episodes < self._total_max_episodes
        if not keep_training and self.verbose >= 1:
            print(
                f"Stopping training with a total of {self.num_timesteps} steps because the model reached "
                f"max_episodes={self.max_episodes}, by playing for {self.n_episodes} episodes"
            )
        return keep_training


class StopTrainingOnNoModelImprovement(RLCallback):
    """Stop when ``max_no_improvement_evals`` evaluations in a row (after ``min_evals``) did not improve."""

    def __init__(self, max_no_improvement_evals: int, min_evals: int = 0, verbose: int = 0) -> None:
        super().__init__(verbose)
        self.max_no_improvement_evals = max_no_improvement_evals
        self.min_evals = min_evals
        self.last_best_mean_reward = -np.inf
        self.no_improvement_evals = 0

    def _on_step(self) -> bool:
        if not isinstance(self.parent, EvalCallback):
            raise TypeError("StopTrainingOnNoModelImprovement must be an EvalCallback's callback_after_eval.")
        keep_training = True
        if self.n_calls > self.min_evals:
            if self.parent.best_mean_reward > self.last_best_mean_reward:
                self.no_improvement_evals = 0
            else:
                self.no_improvement_evals += 1
                if self.no_improvement_evals > self.max_no_improvement_evals:
                    keep_training = False
        self.last_best_mean_reward = self.parent.best_mean_reward
        if not keep_training and self.verbose >= 1:
            print(
                "Stopping training because there was no new best model in the last "
                f"{self.no_improvement_evals} evaluations"
            )
        return keep_training


class EveryNTimesteps(EventCallback):
    """Run ``callback`` each time another ``n_steps`` environment steps have passed."""

    def __init__(self, n_steps: int, callback: RLCallback) -> None:
        check_positive_int("n_steps", n_steps)
        super().__init__(callback)
        self.n_steps = n_steps
        self.last_time_trigger = 0

    def _on_step(self) -> bool:
        if self.num_timesteps - self.last_time_trigger >= self.n_steps:
            self.last_time_trigger = self.num_timesteps
            return self._on_event()
        return True


class LogEveryNTimesteps(EveryNTimesteps):
    """Write (and print) the latest metrics every ``n_steps`` environment steps (``model.dump_logs()``)."""

    def __init__(self, n_steps: int) -> None:
        super().__init__(n_steps, callback=ConvertCallback(self._log_data))
        self.dumps = 0

    def _log_data(self, _locals: dict[str, Any], _globals: dict[str, Any]) -> bool:
        if self.model.dump_logs(print_them=True):
            self.dumps += 1
        return True


class ProgressBarCallback(RLCallback):
    """A progress bar over the run's environment steps (tqdm; rich's look when rich is installed).

    ``learn(progress_bar=True)`` shows lit-sb3's own bar instead (Lightning's, with fps and return).
    """

    def __init__(self) -> None:
        super().__init__()
        self.pbar: Any = None

    def _on_training_start(self) -> None:
        total = self.locals["total_timesteps"] - self.model.num_timesteps
        try:
            from tqdm.rich import tqdm
        except ImportError:  # rich missing: tqdm's plain bar
            from tqdm import tqdm
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tqdm.rich is "experimental"
            self.pbar = tqdm(total=total)

    def _on_step(self) -> bool:
        self.pbar.update(self.training_env.num_envs)
        return True

    def _on_training_end(self) -> None:
        if self.pbar is not None:
            self.pbar.refresh()
            self.pbar.close()
            self.pbar = None
