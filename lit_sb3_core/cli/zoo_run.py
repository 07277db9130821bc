"""One ``lit-sb3 train`` run: hyperparameters, environments, loggers and callbacks, then fit and evaluate.

Kept apart from ``cli/train.py`` (the flags) because it imports torch and lightning.
"""

from __future__ import annotations

import argparse
import inspect
import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import Logger, TensorBoardLogger

from lit_sb3_core.cli.common import CliError
from lit_sb3_core.cli.zoo_layout import env_folder_name, latest_run_id, parse_key_values
from lit_sb3_core.engine.datamodule import RLEnvDataModule
from lit_sb3_core.engine.model_file import load_model
from lit_sb3_core.engine.trainer import RLTrainer
from lit_sb3_core.engine.tuned import split_tuned, tuned_key
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.files import next_run_id, write_atomically
from lit_sb3_core.registry.registry import get_algo_class

__all__ = ["EvaluationEnv", "EvaluationFiles", "ZooRun"]


class EvaluationFiles(Callback):
    """rl-zoo3's evaluation files from Lightning's validation loop: ``evaluations.npz`` (``timesteps``,
    ``results``, ``ep_lengths``, one row per evaluation) and ``best_model.zip`` whenever the mean improves."""

    def __init__(self, folder: Path, verbose: int = 1) -> None:
        self.folder = folder
        self.verbose = verbose
        self.best_mean_reward = -np.inf
        self.timesteps: list[int] = []
        self.results: list[list[float]] = []
        self.lengths: list[list[int]] = []

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.sanity_checking or trainer.state.fn != "fit" or not trainer.is_global_zero:
            return
        rewards, lengths = pl_module.last_evaluation_episodes
        self.timesteps.append(int(pl_module.num_timesteps))
        self.results.append([float(r) for r in rewards])
        self.lengths.append([int(n) for n in lengths])
        arrays: dict[str, Any] = {
            "timesteps": np.array(self.timesteps),
            "results": np.array(self.results),
            "ep_lengths": np.array(self.lengths),
        }
        write_atomically(self.folder / "evaluations.npz", lambda handle: np.savez(handle, **arrays))
        mean = float(np.mean(rewards))
        if self.verbose >= 1:
            print(
                f"Eval num_timesteps={pl_module.num_timesteps}, episode_reward={mean:.2f} +/- {np.std(rewards):.2f}"
            )
        if mean > self.best_mean_reward:
            self.best_mean_reward = mean
            pl_module.save(self.folder / "best_model.zip")
            if self.verbose >= 1:
                print("New best mean reward!")


class ZooRun:
    """Everything one ``lit-sb3 train`` invocation does, in the order rl-zoo3 does it."""

    def __init__(self, args: argparse.Namespace, command: str) -> None:
        self.args = args
        self.command = command
        if args.seed < 0:
            args.seed = int(np.random.SeedSequence().generate_state(1)[0] >> 1)
        self.cls = get_algo_class(args.algo)
        self.algo = self.cls.algo_name or args.algo.lower()
        self.env_name = env_folder_name(args.env)
        agent = Path(args.trained_agent) if args.trained_agent else None
        if agent is not None and (agent.suffix != ".zip" or not agent.is_file()):
            raise CliError(f"-i/--trained-agent must be a model .zip file, got {args.trained_agent!r}.")

    # hyperparameters ---------------------------------------------------------------------------------
    def hyperparameters(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any]]:
        """(model, data, trainer) arguments and the flat dict saved as config.yml."""
        args = self.args
        table = {} if args.no_tuned else dict(getattr(self.cls, "tuned_hyperparameters", {}) or {})
        key = tuned_key(table, args.env)  # Atari ids take the "atari" entry
        tuned = dict(table[key]) if key else {}
        self.tuned_source = f"tuned for {key}" if key else "defaults"
        overrides = {
            **parse_key_values(args.hyperparams, "--hyperparams"),
            **parse_key_values(args.hp, "--hp", separators="="),
        }
        split = split_tuned(self.cls, tuned)
        try:
            extra = split_tuned(self.cls, overrides)
        except ConfigurationError:
            takes = sorted(set(inspect.signature(self.cls.__init__).parameters) - {"self", "env", "kwargs"})
            unknown = [
                k for k in overrides if k not in takes and k not in ("n_envs", "n_timesteps", "normalize")
            ]
            raise CliError(
                f"--hyperparams names {', '.join(unknown)}, which {self.cls.__name__} does not take; it takes "
                f"{', '.join(takes)}, and the run settings n_envs, n_timesteps, normalize."
            ) from None
        for part in ("model", "data", "trainer"):
            split[part].update(extra[part])
        if args.n_envs:
            split["data"]["n_envs"] = args.n_envs
        split["data"].setdefault("n_envs", 1)
        if args.steps:
            split["trainer"]["max_steps"] = args.steps
        split["trainer"].setdefault("max_steps", 100_000)
        saved = {**tuned, **overrides, "n_timesteps": split["trainer"]["max_steps"]}
        saved["n_envs"] = split["data"]["n_envs"]
        return split["model"], split["data"], split["trainer"], saved

    # folders -----------------------------------------------------------------------------------------
    def make_run_folder(self) -> Path:
        algo_folder = Path(self.args.log_folder) / self.algo
        suffix = f"_{uuid.uuid4()}" if self.args.uuid else ""
        run = algo_folder / f"{self.env_name}_{latest_run_id(algo_folder, self.args.env) + 1}{suffix}"
        (run / self.env_name).mkdir(parents=True, exist_ok=False)
        return run

    def save_config(self, run: Path, saved: dict[str, Any]) -> None:
        params = run / self.env_name
        _write_text(params / "config.yml", yaml.safe_dump(_plain(saved), sort_keys=True))
        _write_text(params / "args.yml", yaml.safe_dump(_plain(vars(self.args)), sort_keys=True))
        _write_text(params / "command.txt", self.command + "\n")

    def loggers(self, run: Path) -> list[Logger]:
        args = self.args
        if args.tensorboard_log:
            root = Path(args.tensorboard_log) / self.env_name
            name = self.cls.__name__
            tensorboard = TensorBoardLogger(
                save_dir=str(root),
                name="",
                version=f"{name}_{next_run_id(root, name)}",
                default_hp_metric=False,
            )
        else:
            tensorboard = TensorBoardLogger(save_dir=str(run), name="", version="", default_hp_metric=False)
        loggers: list[Logger] = [tensorboard]
        if args.track:
            loggers.append(self.wandb_logger(run))
        return loggers

    def wandb_logger(self, run: Path) -> Logger:
        import importlib.util

        if importlib.util.find_spec("wandb") is None:
            raise CliError("--track needs wandb: pip install wandb (or pip install 'lit-sb3-core[loggers]').")
        from lightning.pytorch.loggers import WandbLogger

        args = self.args
        return WandbLogger(
            name=f"{args.env}__{self.algo}__{args.seed}__{run.name}",
            project=args.wandb_project_name,
            entity=args.wandb_entity,
            group=args.wandb_group,
            tags=list(args.wandb_tags),
            save_dir=str(run.resolve()),  # wandb resolves relative folders against its first run's cwd
            config={"command": self.command},
        )

    # the run -----------------------------------------------------------------------------------------
    def make_model(self, model_kwargs: dict[str, Any]) -> Any:
        args = self.args
        common = {"seed": args.seed, "verbose": 1 if args.verbose >= 2 else 0}
        takes_compile = "compile" in inspect.signature(self.cls.__init__).parameters
        if args.compile == "on" and not takes_compile:
            raise CliError(
                f"--compile on: {self.cls.__name__} has no compiled update; use --compile off or auto."
            )
        if not args.trained_agent:
            if takes_compile and "compile" not in model_kwargs:  # --hyperparams compile:... wins
                model_kwargs = {**model_kwargs, "compile": _COMPILE_CHOICES[args.compile or "auto"]}
            return self.cls(**{**model_kwargs, **common, "device": args.device})
        path = Path(args.trained_agent)
        overrides = split_tuned(self.cls, parse_key_values(args.hyperparams, "--hyperparams"))["model"]
        if takes_compile and args.compile and "compile" not in overrides:  # else the file's choice
            overrides["compile"] = _COMPILE_CHOICES[args.compile]
        model = load_model(path, expected_cls=self.cls, **overrides)
        buffer = path.parent / "replay_buffer.npz"
        if buffer.is_file() and hasattr(model, "load_replay_buffer"):
            print(f"Loading the replay buffer from {buffer}")
            model.load_replay_buffer(buffer)
        return model

    def callbacks(self, run: Path, n_envs: int) -> list[Callback]:
        from lit_sb3_core.sb3.callbacks import CheckpointCallback

        callbacks: list[Callback] = []
        if self.args.eval_freq > 0:
            callbacks.append(EvaluationFiles(run, verbose=self.args.verbose))
        if self.args.save_freq > 0:
            # SB3's CheckpointCallback counts vector-env steps: as rl-zoo3, divide by the number of envs.
            save_freq = max(self.args.save_freq // n_envs, 1)
            callbacks.append(CheckpointCallback(save_freq, run, name_prefix="rl_model", verbose=2))
        return callbacks

    def run(self) -> int:
        args = self.args
        if args.threads > 0:
            torch.set_num_threads(args.threads)
        model_kwargs, data_kwargs, trainer_kwargs, saved = self.hyperparameters()
        run = self.make_run_folder()
        print(f"========== {args.env} ==========")
        print(f"Seed: {args.seed}")
        steps = trainer_kwargs.pop("max_steps")
        n_envs = data_kwargs["n_envs"]
        print(
            f"Training {self.cls.__name__} ({self.tuned_source}) on {args.env} for {steps} steps with "
            f"{n_envs} env(s)."
        )
        shown = {k: v for k, v in saved.items() if k not in ("n_timesteps", "n_envs")}
        if shown:
            print("Hyperparameters: " + ", ".join(f"{k}={v!r}" for k, v in sorted(shown.items())))
        model = self.make_model(model_kwargs)
        if args.trained_agent:
            print(f"Continuing {args.trained_agent} from {model.num_timesteps} steps.")
            steps += model.num_timesteps
        if getattr(model, "compile_choice", False) == "auto":
            threshold = model.compile_pays_after
            print(
                "Compile: auto, "
                + (
                    f"the update compiles for budgets from {threshold:,} steps (--compile on/off to choose)."
                    if threshold is not None
                    else f"{self.cls.__name__}'s update runs eagerly (no compiled update measured to pay back)."
                )
            )
        env_kwargs = parse_key_values(args.env_kwargs, "--env-kwargs")
        eval_env: Any = args.env  # built with env_kwargs, as the training envs
        if args.eval_env_kwargs:
            eval_env = EvaluationEnv(args.env, parse_key_values(args.eval_env_kwargs, "--eval-env-kwargs"))
        datamodule = RLEnvDataModule(
            train_env=args.env,
            val_env=eval_env if args.eval_freq > 0 else None,
            test_env=eval_env,
            env_kwargs=env_kwargs,
            seed=args.seed,
            n_eval_envs=args.n_eval_envs,
            vectorization="async" if args.vec_env in ("subproc", "async") else "sync",
            **data_kwargs,
        )
        self.save_config(run, saved)
        print(f"Log path: {run}")
        trainer = RLTrainer(
            max_steps=steps,
            logger=self.loggers(run),
            callbacks=self.callbacks(run, n_envs),
            eval_every_n_steps=max(args.eval_freq, 1),
            n_eval_episodes=args.eval_episodes,
            default_root_dir=str(run),
            enable_progress_bar=True,
            enable_checkpointing=False,
            log_every_n_steps=args.log_interval if args.log_interval > 0 else None,
            accelerator=_accelerator(args.device),
            devices=1,
        )
        try:
            trainer.fit(model, datamodule=datamodule)
        finally:
            final = run / f"{self.env_name}.zip"
            if model.num_timesteps > 0:
                model.save(final)  # also after Ctrl+C, as rl-zoo3
                print(f"Saving to {final}")
                if args.save_replay_buffer and hasattr(model, "save_replay_buffer"):
                    model.save_replay_buffer(run / "replay_buffer.npz")
        print(f"Final evaluation over {args.eval_episodes} episodes (deterministic actions):")
        trainer.test(model, datamodule=datamodule, n_eval_episodes=args.eval_episodes)
        if args.save:
            model.save(args.save)
            print(f"Saved the model to {args.save}")
        print(f"TensorBoard logs: tensorboard --logdir {trainer.loggers[0].log_dir}")
        datamodule.close()
        if args.track:
            import wandb

            wandb.finish()  # Lightning's WandbLogger leaves the run open for the process
        return 0


class EvaluationEnv:
    """An env factory with its own keyword arguments (``--eval-env-kwargs``): the datamodule's ``env_kwargs``
    are the training envs' and are ignored here."""

    def __init__(self, env_id: str, kwargs: dict[str, Any]) -> None:
        self.env_id, self.kwargs = env_id, dict(kwargs)

    def __call__(self, **_training_kwargs: Any) -> Any:
        from lit_sb3_core.envs.make import make_env_by_id

        return make_env_by_id(self.env_id, self.kwargs)


# lit-sb3 train --compile: the model's compile argument (compile_choice.py).
_COMPILE_CHOICES: dict[str, bool | str] = {"auto": "auto", "on": True, "off": False}


def _accelerator(device: str) -> str:
    key = str(device).split(":")[0].lower()
    mapping = {"auto": "auto", "cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "mps": "mps"}
    if key not in mapping:
        raise CliError(f"--device {device!r}: use auto, cpu, cuda (gpu) or mps.")
    return mapping[key]


def _write_text(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (``lit-sb3 enjoy`` and rl-zoo3 read these files back)."""
    data = text.encode("utf-8")
    write_atomically(path, lambda handle: handle.write(data))


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    """JSON-able values only (what config.yml and args.yml hold)."""
    return json.loads(json.dumps(values, default=str))
