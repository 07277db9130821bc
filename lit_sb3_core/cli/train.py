"""``lit-sb3 train``: rl-zoo3's ``train.py`` on lit-sb3 — tuned hyperparameters, periodic evaluation, the
zoo's log folder layout, checkpoints, continuing a run, W&B tracking, a final evaluation.

Every flag of rl-zoo3's train that has a meaning here is accepted under its rl-zoo3 name (``--eval-freq``,
``-f/--log-folder``, ``--hyperparams k:v``, ``-n``, ``-i``, ``--track``...), so the zoo's README commands run
with ``lit-sb3 train`` in place of ``python -m rl_zoo3.train``; the ones that have another home in lit-sb3
(hyperparameter search, config files) fail with a message naming it. The run folder is described in
``lit_sb3_core.cli.zoo_layout``. This module imports neither torch nor lightning until a run starts.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["REFUSED_ZOO_FLAGS", "configure_train", "run_train"]

# rl-zoo3 flags that lit-sb3 train does not take, and what to use instead.
_TUNE = (
    "hyperparameter search is its own command: lit-sb3 tune --algo ALGO --env ENV --trials N "
    "(see lit-sb3 tune --help)"
)
REFUSED_ZOO_FLAGS: dict[tuple[str, ...], str] = {
    ("-optimize", "--optimize-hyperparameters"): _TUNE,
    ("--n-trials",): _TUNE,
    ("--max-total-trials",): _TUNE,
    ("--n-jobs",): _TUNE,
    ("--sampler",): _TUNE,
    ("--pruner",): _TUNE,
    ("--n-startup-trials",): _TUNE,
    ("--n-evaluations",): _TUNE,
    ("--storage",): "lit-sb3 tune --storage URL (hyperparameter search)",
    ("--study-name",): "lit-sb3 tune --study-name NAME (hyperparameter search)",
    ("--trial-id",): _TUNE,
    ("--no-optim-plots",): _TUNE,
    ("--optimization-log-path",): _TUNE,
    ("-conf", "--conf-file"): (
        "a config file is LightningCLI's: lit-sb3 fit --config FILE (write one with --print_config), or pass "
        "values with --hyperparams KEY:VALUE"
    ),
    ("--gym-packages",): (
        "name the env with its module, --env my_package:MyEnv-v0 (gymnasium imports it), or register the env "
        "from a lit-sb3 plugin; lit-sb3 does not import modules named on the command line"
    ),
    ("--truncate-last-trajectory",): (
        "not needed: lit-sb3's HER buffer stores whole episodes and a saved buffer loads as it was"
    ),
}


def configure_train(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Train an algorithm with its tuned hyperparameters (rl-zoo3's, where the plugin ships them), evaluate "
        "it during training and at the end, and keep the run in rl-zoo3's layout: "
        "<log-folder>/<algo>/<env>_<N>/ with <env>.zip, best_model.zip, checkpoints, <env>/config.yml."
    )
    parser.epilog = (
        "examples:\n"
        "  lit-sb3 train --algo ppo --env CartPole-v1\n"
        "  lit-sb3 train --algo sac --env Pendulum-v1 --eval-freq 10000 --eval-episodes 10 --n-eval-envs 1\n"
        "  lit-sb3 train --algo ppo --env CartPole-v1 -n 20000 --hyperparams learning_rate:0.001 n_envs:4\n"
        "  lit-sb3 train --algo ppo --env CartPole-v1 -i logs/ppo/CartPole-v1_1/CartPole-v1.zip -n 5000\n"
        "  WANDB_MODE=offline lit-sb3 train --algo ppo --env CartPole-v1 --track"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add = parser.add_argument
    add("--algo", default="ppo", help="registered algorithm name (see `lit-sb3 algos`)")
    add("--env", default="CartPole-v1", help="gymnasium environment id")
    add(
        "-n",
        "--n-timesteps",
        "--steps",
        dest="steps",
        type=int,
        default=None,
        help="environment-step budget (default: the tuned n_timesteps, else 100000)",
    )
    add("--n-envs", type=int, default=None, help="parallel training environments (default: tuned)")
    add("--seed", type=int, default=0, help="random seed of the model and environments; -1: a random one")
    add(
        "-params",
        "--hyperparams",
        nargs="+",
        default=[],
        metavar="KEY:VALUE",
        help='override hyperparameters, e.g. learning_rate:0.001 n_envs:4 policy_kwargs:"dict(net_arch=[64])"',
    )
    add("--hp", nargs="+", default=[], metavar="KEY=VALUE", help=argparse.SUPPRESS)  # lit-sb3 0.1 spelling
    add("--no-tuned", action="store_true", help="ignore the algorithm's tuned hyperparameters")
    add(
        "--eval-freq",
        type=int,
        default=25_000,
        help="evaluate every N environment steps during training (<= 0: only at the end; default 25000)",
    )
    add("--eval-episodes", type=int, default=5, help="episodes per evaluation (default 5)")
    add("--n-eval-envs", type=int, default=1, help="environments for evaluation (default 1)")
    add("--save-freq", type=int, default=-1, help="save rl_model_<steps>_steps.zip every N environment steps")
    add(
        "--save-replay-buffer",
        action="store_true",
        help="also save the replay buffer (off-policy algorithms)",
    )
    add(
        "-f",
        "--log-folder",
        "--log-dir",
        dest="log_folder",
        default="logs",
        help="log folder: runs go to LOG_FOLDER/<algo>/<env>_<N>/ (default logs)",
    )
    add(
        "-tb",
        "--tensorboard-log",
        default="",
        metavar="DIR",
        help="TensorBoard events to DIR/<env>/<Algo>_<N> (default: inside the run folder)",
    )
    add("-i", "--trained-agent", default="", metavar="MODEL.zip", help="continue training this model file")
    add("--save", default=None, metavar="FILE", help="also write the trained model to FILE")
    add(
        "--env-kwargs",
        nargs="+",
        default=None,
        metavar="KEY:VALUE",
        help="keyword arguments for gymnasium.make",
    )
    add(
        "--eval-env-kwargs",
        nargs="+",
        default=None,
        metavar="KEY:VALUE",
        help="the same, for evaluation envs",
    )
    add(
        "--vec-env",
        choices=["dummy", "subproc", "sync", "async"],
        default="dummy",
        help="dummy/sync: envs in this process; subproc/async: one process each",
    )
    add("--device", default="auto", help="auto, cpu, cuda, gpu or mps")
    add(
        "--compile",
        choices=["auto", "on", "off"],
        default=None,
        help="run each gradient step as one torch.compile program: on, off, or auto (the default: on for "
        "budgets long enough to pay the compile back, see `compile_pays_after`; a continued model keeps its "
        "file's choice unless given)",
    )
    add(
        "--log-interval",
        type=int,
        default=-1,
        help="iterations between metric records (default: the algorithm's)",
    )
    add(
        "--verbose",
        type=int,
        default=1,
        help="0: quiet; 1: the run's settings and results; 2: every metric record",
    )
    add("-uuid", "--uuid", action="store_true", help="append a unique id to the run folder")
    add(
        "-P", "--progress", action="store_true", help="accepted for rl-zoo3; the progress bar is always shown"
    )
    add(
        "--threads",
        "--num-threads",
        dest="threads",
        type=int,
        default=1,
        help="torch CPU threads (1 is fastest for small networks; -1: torch's default)",
    )
    add(
        "--track", action="store_true", help="also log to Weights & Biases (WANDB_MODE=offline works offline)"
    )
    add("--wandb-project-name", default="sb3", help="W&B project (default sb3, as rl-zoo3)")
    add("--wandb-entity", default=None, help="W&B entity (team)")
    add("--wandb-group", default=None, help="W&B group")
    add("-tags", "--wandb-tags", nargs="+", default=[], help="W&B tags")
    for flags, instead in REFUSED_ZOO_FLAGS.items():
        add(*flags, nargs="*", action=_Refused, instead=instead, help=argparse.SUPPRESS)


class _Refused(argparse.Action):
    """An rl-zoo3 flag lit-sb3 train does not take: stop with the lit-sb3 way to do it."""

    def __init__(self, *args: Any, instead: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.instead = instead

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None
    ) -> None:
        parser.error(f"{option} is an rl-zoo3 option that lit-sb3 train does not take: {self.instead}.")


def run_train(args: argparse.Namespace) -> int:
    from lit_sb3_core.cli.zoo_run import ZooRun

    return ZooRun(args, command=" ".join(sys.argv)).run()
