"""``lit-sb3 tune --algo ppo --env CartPole-v1``: hyperparameter search with Optuna, as rl-zoo3 does it.

Each trial samples hyperparameters from its algorithm family's space (on-policy or off-policy, restricted
to the names the algorithm's ``__init__`` accepts), trains for ``--steps`` environment steps, evaluates
``--evals`` times along the way and reports each mean return to Optuna, whose median pruner stops
unpromising trials early. The objective is the last evaluation's mean return.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError, positive_int_option
from lit_sb3_core.foundation.files import write_atomically

__all__ = ["configure", "run_tune", "sample_hyperparameters", "search_space_family"]

_GAMMAS = [0.9, 0.95, 0.98, 0.99, 0.995, 0.999, 0.9999]
_NET_ARCHS = {"tiny": [64], "small": [64, 64], "medium": [256, 256]}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Search hyperparameters with Optuna (TPE sampler, median pruner on intermediate evaluation returns) "
        "for any registered algorithm, then print the best ones and a command that trains with them."
    )
    parser.epilog = (
        "examples:\n"
        "  lit-sb3 tune --algo ppo --env CartPole-v1 --trials 50 --steps 50000\n"
        "  lit-sb3 tune --algo dqn --env CartPole-v1 --trials 20 --steps 20000 --save-config best.yaml\n"
        "  lit-sb3 tune --algo ppo --env CartPole-v1 --storage sqlite:///tune.db --study-name ppo  # resumable"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--algo", required=True, help="registered algorithm name (see `lit-sb3 algos`)")
    parser.add_argument("--env", required=True, help="gymnasium environment id")
    parser.add_argument("--trials", type=int, default=20, help="number of trials (default 20)")
    parser.add_argument(
        "--steps", type=int, default=20_000, help="environment steps per trial (default 20000)"
    )
    parser.add_argument(
        "--evals", type=int, default=4, help="evaluations per trial, reported to the pruner (default 4)"
    )
    parser.add_argument("--eval-episodes", type=int, default=5, help="episodes per evaluation (default 5)")
    parser.add_argument("--n-envs", type=int, default=1, help="parallel training environments (default 1)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the sampler and of every trial (default 0)"
    )
    parser.add_argument(
        "--hp",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="fixed hyperparameters (JSON values), not searched",
    )
    parser.add_argument("--no-pruning", action="store_true", help="run every trial to the end")
    parser.add_argument(
        "--storage",
        default=None,
        help="Optuna storage URL (e.g. sqlite:///tune.db) to keep or resume a study",
    )
    parser.add_argument("--study-name", default=None, help="study name in --storage (default <algo>_<env>)")
    parser.add_argument(
        "--timeout", type=float, default=None, help="stop starting trials after this many seconds"
    )
    parser.add_argument(
        "--save-config",
        default=None,
        metavar="FILE",
        help="write the best trial as a `lit-sb3 fit --config FILE`",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")


# --- search spaces ------------------------------------------------------------------------------------


def _on_policy_space(trial: Any) -> dict[str, Any]:
    """rl-zoo3's PPO/A2C space (sample_ppo_params, sample_a2c_params), merged."""
    return {
        "n_steps": trial.suggest_categorical("n_steps", [8, 16, 32, 64, 128, 256, 512, 1024, 2048]),
        "batch_size": trial.suggest_categorical("batch_size", [8, 16, 32, 64, 128, 256, 512]),
        "n_epochs": trial.suggest_categorical("n_epochs", [1, 5, 10, 20]),
        "gamma": trial.suggest_categorical("gamma", _GAMMAS),
        "gae_lambda": trial.suggest_categorical("gae_lambda", [0.8, 0.9, 0.92, 0.95, 0.98, 0.99, 1.0]),
        "learning_rate": trial.suggest_float("learning_rate", 1e-5, 1e-2, log=True),
        "ent_coef": trial.suggest_float("ent_coef", 1e-8, 0.1, log=True),
        "clip_range": trial.suggest_categorical("clip_range", [0.1, 0.2, 0.3, 0.4]),
        "vf_coef": trial.suggest_float("vf_coef", 0.0, 1.0),
        "max_grad_norm": trial.suggest_categorical(
            "max_grad_norm", [0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 2.0, 5.0]
        ),
    }


def _off_policy_space(trial: Any) -> dict[str, Any]:
    """rl-zoo3's SAC/TD3/DQN space (sample_sac_params, sample_td3_params, sample_dqn_params), merged."""
    train_freq = trial.suggest_categorical("train_freq", [1, 4, 8, 16, 32, 64])
    return {
        "learning_rate": trial.suggest_float("learning_rate", 1e-5, 1e-2, log=True),
        "batch_size": trial.suggest_categorical("batch_size", [16, 32, 64, 128, 256, 512]),
        "buffer_size": trial.suggest_categorical("buffer_size", [10_000, 100_000, 1_000_000]),
        "learning_starts": trial.suggest_categorical("learning_starts", [0, 100, 1000]),
        "gamma": trial.suggest_categorical("gamma", _GAMMAS),
        "tau": trial.suggest_categorical("tau", [0.001, 0.005, 0.01, 0.02, 0.05, 0.08, 1.0]),
        "train_freq": train_freq,
        "gradient_steps": train_freq,  # as rl-zoo3: one update per collected step
        "exploration_fraction": trial.suggest_float("exploration_fraction", 0.0, 0.5),
        "exploration_final_eps": trial.suggest_float("exploration_final_eps", 0.0, 0.2),
        "target_update_interval": trial.suggest_categorical("target_update_interval", [1, 1000, 5000, 10000]),
    }


_SPACES = {"on-policy": _on_policy_space, "off-policy": _off_policy_space}


def search_space_family(cls: type[Any]) -> str:
    """``"on-policy"`` or ``"off-policy"``: which default space fits ``cls``."""
    from lit_sb3_core.sdk.on_policy import OnPolicyAlgorithm

    if issubclass(cls, OnPolicyAlgorithm):
        return "on-policy"
    if "buffer_size" in inspect.signature(cls.__init__).parameters:
        return "off-policy"
    raise CliError(
        f"lit-sb3 tune has no default search space for {cls.__name__}: it is neither an OnPolicyAlgorithm nor "
        "an off-policy algorithm (no buffer_size argument)."
    )


def sample_hyperparameters(trial: Any, cls: type[Any], n_envs: int, fixed: dict[str, Any]) -> dict[str, Any]:
    """One trial's hyperparameters: the family's space, restricted to what ``cls`` accepts, minus ``fixed``."""
    accepted = set(inspect.signature(cls.__init__).parameters)
    space = _SPACES[search_space_family(cls)]
    sampled = {key: value for key, value in _RestrictedTrial(trial, accepted, fixed).sample(space).items()}
    if "policy_kwargs" in accepted and "policy_kwargs" not in fixed:
        net_arch = trial.suggest_categorical("net_arch", list(_NET_ARCHS))
        activation = trial.suggest_categorical("activation_fn", ["tanh", "relu"])
        sampled["policy_kwargs"] = {"net_arch": _NET_ARCHS[net_arch], "activation_fn": activation}
    if "batch_size" in sampled and "n_steps" in accepted and search_space_family(cls) == "on-policy":
        rollout = int(sampled.get("n_steps", fixed.get("n_steps", 2048))) * n_envs
        sampled["batch_size"] = min(sampled["batch_size"], rollout)  # a minibatch cannot exceed the rollout
    return sampled


class _RestrictedTrial:
    """Suggests only parameters the algorithm accepts and the user did not fix, so they show in the study."""

    def __init__(self, trial: Any, accepted: set[str], fixed: dict[str, Any]) -> None:
        self.trial, self.accepted, self.fixed = trial, accepted, fixed

    def sample(self, space: Any) -> dict[str, Any]:
        values = space(self)
        return {key: value for key, value in values.items() if key in self.accepted and key not in self.fixed}

    def _skip(self, name: str) -> bool:
        return name not in self.accepted or name in self.fixed

    def suggest_categorical(self, name: str, choices: list[Any]) -> Any:
        return choices[0] if self._skip(name) else self.trial.suggest_categorical(name, choices)

    def suggest_float(self, name: str, low: float, high: float, log: bool = False) -> float:
        return low if self._skip(name) else self.trial.suggest_float(name, low, high, log=log)


# --- running ------------------------------------------------------------------------------------------


def run_tune(args: argparse.Namespace) -> int:
    try:
        import optuna
    except ImportError:
        raise CliError("lit-sb3 tune needs optuna: pip install optuna (or 'lit-sb3-core[tune]').") from None
    import torch

    from lit_sb3_core.cli.zoo_layout import parse_key_values
    from lit_sb3_core.envs.make import make_env_by_id
    from lit_sb3_core.registry.registry import get_algo_class

    for name in ("trials", "steps", "evals", "eval_episodes", "n_envs", "threads"):
        positive_int_option(f"--{name.replace('_', '-')}", getattr(args, name))
    cls = get_algo_class(args.algo)
    family = search_space_family(cls)
    make_env_by_id(args.env, {}).close()  # an unknown id fails now, with its did-you-mean, not in trial 0
    fixed = parse_key_values(args.hp, "--hp", separators="=")
    torch.set_num_threads(args.threads)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # rl-zoo3 samples 5 random trials before TPE and prunes only against 5 finished ones; fewer for short
    # studies, so that pruning still happens there.
    startup = max(1, min(5, args.trials // 3))
    sampler = optuna.samplers.TPESampler(n_startup_trials=startup, seed=args.seed)
    pruner: Any = (
        optuna.pruners.NopPruner()
        if args.no_pruning
        else optuna.pruners.MedianPruner(n_startup_trials=startup, n_warmup_steps=args.evals // 3)
    )
    study = optuna.create_study(
        study_name=args.study_name or f"{cls.algo_name or args.algo}_{args.env}",
        storage=args.storage,
        load_if_exists=args.storage is not None,
        direction="maximize",
        sampler=sampler,
        pruner=pruner,
    )
    print(
        f"Tuning {cls.__name__} ({family} space) on {args.env}: {args.trials} trials of {args.steps} steps, "
        f"{args.evals} evaluations of {args.eval_episodes} episodes each."
    )
    study.optimize(
        lambda trial: _objective(trial, cls, args, fixed), n_trials=args.trials, timeout=args.timeout
    )
    return _report(study, cls, args, fixed)


def _objective(trial: Any, cls: type[Any], args: argparse.Namespace, fixed: dict[str, Any]) -> float:
    import optuna

    from lit_sb3_core.engine.datamodule import RLEnvDataModule
    from lit_sb3_core.engine.trainer import RLTrainer
    from lit_sb3_core.sdk.sb3_glue import quiet_lightning

    hyperparameters = {**sample_hyperparameters(trial, cls, args.n_envs, fixed), **fixed}
    trial.set_user_attr("hyperparameters", hyperparameters)
    evaluator = _make_evaluator(trial, args)
    datamodule = RLEnvDataModule(train_env=args.env, n_envs=args.n_envs, seed=args.seed)
    try:
        model = cls(**{**hyperparameters, "seed": args.seed})
        with quiet_lightning(0):
            trainer = RLTrainer(
                max_steps=args.steps,
                accelerator="cpu",
                devices=1,
                logger=False,
                callbacks=[evaluator],
                enable_checkpointing=False,
                enable_progress_bar=False,
            )
            trainer.fit(model, datamodule=datamodule)
    except (ValueError, AssertionError, RuntimeError) as exc:  # invalid combination or diverged (NaN)
        print(f"  trial {trial.number}: pruned, these hyperparameters failed: {type(exc).__name__}: {exc}")
        raise optuna.TrialPruned() from None
    finally:
        datamodule.close()
        evaluator.close()
    if evaluator.pruned:
        print(
            f"  trial {trial.number}: pruned at {evaluator.last_step} steps (mean return {evaluator.last_value:.2f})"
        )
        raise optuna.TrialPruned()
    value = evaluator.last_value if evaluator.reports else evaluator.evaluate(model)
    print(f"  trial {trial.number}: mean return {value:.2f}  {_short(hyperparameters)}")
    return value


def _make_evaluator(trial: Any, args: argparse.Namespace) -> Any:
    """A Lightning callback that evaluates every ``steps / evals`` environment steps and reports to Optuna.

    rl-zoo3's TrialEvalCallback; built here so importing this module (for ``--help``) loads no lightning.
    """
    from lightning.pytorch.callbacks import Callback

    from lit_sb3_core.engine.evaluation import evaluate_policy
    from lit_sb3_core.envs.make import make_vector_env

    class TrialEvaluation(Callback):
        def __init__(self) -> None:
            self.interval = max(1, args.steps // args.evals)
            self.next_eval = self.interval
            self.env = make_vector_env(args.env, 1)
            self.env.reset(seed=args.seed + 10_000)
            self.reports = 0
            self.last_value = -math.inf
            self.last_step = 0
            self.pruned = False

        def evaluate(self, model: Any) -> float:
            mean, _ = evaluate_policy(
                model, self.env, n_eval_episodes=args.eval_episodes, deterministic=True, warn=False
            )
            if not math.isfinite(float(mean)):
                raise ValueError(f"evaluation returned {mean}")
            return float(mean)

        def on_train_batch_end(
            self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int
        ) -> None:
            steps = int(pl_module.num_timesteps)
            if steps < self.next_eval:
                return
            self.next_eval = (steps // self.interval + 1) * self.interval
            self.last_value, self.last_step = self.evaluate(pl_module), steps
            trial.report(self.last_value, self.reports)
            self.reports += 1
            if trial.should_prune():
                self.pruned = True
                trainer.should_stop = True

        def close(self) -> None:
            self.env.close()

    return TrialEvaluation()


def _short(hyperparameters: dict[str, Any]) -> str:
    def text(value: Any) -> str:
        return f"{value:.4g}" if isinstance(value, float) else json.dumps(value)

    return " ".join(f"{key}={text(value)}" for key, value in sorted(hyperparameters.items()))


def _report(study: Any, cls: type[Any], args: argparse.Namespace, fixed: dict[str, Any]) -> int:
    import optuna

    states = [trial.state for trial in study.trials]
    complete = states.count(optuna.trial.TrialState.COMPLETE)
    pruned = states.count(optuna.trial.TrialState.PRUNED)
    print(f"Finished {len(study.trials)} trials: {complete} complete, {pruned} pruned.")
    if complete == 0:
        raise CliError(
            "no trial completed (all were pruned or failed): raise --steps or --trials, or try --no-pruning."
        )
    best = study.best_trial
    hyperparameters = best.user_attrs["hyperparameters"]
    print(f"Best trial: #{best.number}, mean return {best.value:.2f}")
    print("Best hyperparameters:")
    for key, value in sorted(hyperparameters.items()):
        print(f"  {key}: {json.dumps(value)}")
    name = cls.algo_name or args.algo
    options = " ".join(
        f"--model.{key} {_shell_value(value)}" for key, value in sorted(hyperparameters.items())
    )
    print(
        "Train with them:\n  lit-sb3 fit --model "
        f"{name} --data.train_env {args.env} --data.n_envs {args.n_envs} --trainer.max_steps {args.steps} {options}"
    )
    if args.save_config:
        _save_config(Path(args.save_config), cls, args, hyperparameters)
        print(f"Wrote {args.save_config}: lit-sb3 fit --config {args.save_config}")
    return 0


def _shell_value(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value
    return f"'{text}'" if any(c in text for c in " {}[]\"'") else text


def _save_config(
    path: Path, cls: type[Any], args: argparse.Namespace, hyperparameters: dict[str, Any]
) -> None:
    import yaml

    config = {
        "seed_everything": args.seed,
        "trainer": {"max_steps": args.steps},
        "model": {"class_path": f"{cls.__module__}.{cls.__qualname__}", "init_args": hyperparameters},
        "data": {"train_env": args.env, "n_envs": args.n_envs},
    }
    header = (
        f"# Best of `lit-sb3 tune --algo {args.algo} --env {args.env}`; run: lit-sb3 fit --config {path}\n"
    )
    data = (header + yaml.safe_dump(config, sort_keys=False)).encode("utf-8")
    write_atomically(path, lambda handle: handle.write(data))  # an existing config is replaced whole or kept
