"""``lit-sb3 evaluate MODEL.zip --env ID``: the mean ± std return of a saved model, as SB3 reports it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError, positive_int

__all__ = [
    "add_play_arguments",
    "check_model_path",
    "configure",
    "load_model_file",
    "parse_env_kwargs",
    "run_evaluate",
]


def add_play_arguments(parser: argparse.ArgumentParser, episodes: int) -> None:
    """Arguments ``evaluate`` and ``enjoy`` share."""
    parser.add_argument("model", help="model file written by model.save() or `lit-sb3 train --save`")
    parser.add_argument("--env", required=True, help="gymnasium environment id, e.g. CartPole-v1")
    parser.add_argument(
        "--episodes", type=positive_int, default=episodes, help=f"episodes to run (default {episodes})"
    )
    parser.add_argument("--stochastic", action="store_true", help="sample actions instead of taking the mode")
    parser.add_argument("--seed", type=int, default=0, help="seed of the environment (default 0)")
    parser.add_argument(
        "--env-kwargs",
        default=None,
        metavar="JSON",
        help="keyword arguments for gymnasium.make, as JSON: '{\"g\": 9.81}'",
    )


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run a saved model for whole episodes and print the mean and standard deviation of their returns. "
        "Any algorithm's model file loads: lit_sb3.load finds the algorithm from the file."
    )
    parser.epilog = "example: lit-sb3 evaluate ppo_cartpole.zip --env CartPole-v1 --episodes 20"
    add_play_arguments(parser, episodes=10)
    parser.add_argument("--n-envs", type=positive_int, default=1, help="parallel evaluation environments")


def run_evaluate(args: argparse.Namespace) -> int:
    from lit_sb3_core.engine.evaluation import evaluate_policy
    from lit_sb3_core.envs.make import make_vector_env

    check_model_path(args.model)
    env = make_vector_env(args.env, args.n_envs, env_kwargs=parse_env_kwargs(args.env_kwargs))
    try:
        model = load_model_file(args.model, env)  # refuses an env whose spaces differ from the model's
        env.reset(seed=args.seed)
        rewards, lengths = evaluate_policy(
            model,
            env,
            n_eval_episodes=args.episodes,
            deterministic=not args.stochastic,
            return_episode_rewards=True,
            warn=False,  # the env built above is the raw env: its episodes are the real ones
        )
    finally:
        env.close()
    import numpy as np

    name = type(model).__name__
    print(
        f"{name} on {args.env}: mean_reward={np.mean(rewards):.2f} +/- {np.std(rewards):.2f} "
        f"over {len(rewards)} episodes (episode length {np.mean(lengths):.1f} +/- {np.std(lengths):.1f}, "
        f"{'stochastic' if args.stochastic else 'deterministic'} actions)"
    )
    return 0


def load_model_file(path: str, env: Any = None) -> Any:
    """``lit_sb3_core.load(path, env)``, with the usual mistakes (a checkpoint, a missing file) explained."""
    from lit_sb3_core.engine.model_file import load

    check_model_path(path)
    return load(path, env=env)


def check_model_path(path: str) -> None:
    given = Path(path)
    if given.suffix == ".ckpt":
        raise CliError(
            f"{path!r} is a Lightning checkpoint, not a model file: evaluate it with "
            f"`lit-sb3 test --ckpt_path {path} --env ENV_ID`, or save a model file with model.save()."
        )
    if not given.exists() and not given.with_suffix(".zip").exists():
        raise CliError(
            f"No model file at {path!r}: pass the .zip written by model.save() or `lit-sb3 train --save`."
        )


def parse_env_kwargs(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    import json

    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"--env-kwargs must be a JSON object, e.g. '{{\"g\": 9.81}}': {exc}.") from None
    if not isinstance(value, dict):
        raise CliError(f"--env-kwargs must be a JSON object, got {text!r}.")
    return value
