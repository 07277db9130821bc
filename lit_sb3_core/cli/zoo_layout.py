"""rl-zoo3's experiment layout and command-line value syntax, for ``lit-sb3 train``, ``enjoy`` and
``record-video``.

A run of ``lit-sb3 train --algo ppo --env CartPole-v1 -f logs`` lives in ``logs/ppo/CartPole-v1_<N>/`` (N one
more than the largest run there), as rl-zoo3 lays it out:

    CartPole-v1.zip                  the final model (normalization statistics inside, as in every model file)
    best_model.zip, evaluations.npz  the best model and every evaluation (--eval-freq)
    rl_model_<steps>_steps.zip       checkpoints (--save-freq)
    replay_buffer.npz                off-policy replay buffer (--save-replay-buffer)
    CartPole-v1/config.yml           the hyperparameters used (tuned values with the overrides applied)
    CartPole-v1/args.yml             the command's arguments;  CartPole-v1/command.txt  the command line
    events.out.tfevents.*            TensorBoard (and metrics of the other loggers)

Nothing here imports torch or lightning.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError

__all__ = [
    "env_folder_name",
    "find_model",
    "latest_run_id",
    "parse_key_values",
    "parse_value",
]


def env_folder_name(env_id: str) -> str:
    """The env id as a folder name: ``ns/Env-v0`` or ``module:Env-v0`` are not portable names."""
    return re.sub(r"[^\w.-]+", "-", env_id)


def latest_run_id(algo_folder: Path, env_id: str) -> int:
    """The largest N among ``<algo_folder>/<env>_<N>`` (0 when there is none), as rl-zoo3 counts."""
    pattern = re.compile(rf"^{re.escape(env_folder_name(env_id))}_(\d+)$")
    found = [int(m.group(1)) for p in algo_folder.glob("*_*") if p.is_dir() and (m := pattern.match(p.name))]
    return max(found, default=0)


def find_model(
    folder: str | Path,
    algo: str,
    env_id: str,
    exp_id: int = 0,
    load_best: bool = False,
    load_checkpoint: int | None = None,
    load_last_checkpoint: bool = False,
) -> tuple[Path, Path]:
    """``(model file, run folder)`` of a ``lit-sb3 train`` run, chosen as rl-zoo3's enjoy chooses.

    Args:
        folder: the log folder given to ``train -f``.
        algo: the algorithm's folder name (its registry name).
        env_id: the environment id.
        exp_id: run number; 0: the latest; -1: the models lie in ``<folder>/<algo>`` directly.
        load_best: ``best_model.zip`` (written by ``--eval-freq``) instead of the final model.
        load_checkpoint: ``rl_model_<N>_steps.zip`` (written by ``--save-freq``).
        load_last_checkpoint: the checkpoint with the most steps.
    """
    algo_folder = Path(folder) / algo
    env_name = env_folder_name(env_id)
    if exp_id == 0:
        exp_id = latest_run_id(algo_folder, env_id)
        if exp_id == 0:
            runs = (
                sorted(p.name for p in algo_folder.glob("*_*") if p.is_dir()) if algo_folder.is_dir() else []
            )
            raise CliError(
                f"no run of {algo} on {env_id} in {algo_folder}/ (looked for {env_name}_<N>/"
                + (f"; found {', '.join(runs)}" if runs else "")
                + f"): train one with `lit-sb3 train --algo {algo} --env {env_id} -f {folder}`."
            )
    run = algo_folder / f"{env_name}_{exp_id}" if exp_id > 0 else algo_folder
    if not run.is_dir():
        raise CliError(f"the run folder {run}/ does not exist: check --exp-id and -f/--folder.")
    if load_best:
        path = run / "best_model.zip"
        hint = "best_model.zip is written when training evaluates (train --eval-freq N)"
    elif load_checkpoint is not None:
        path = run / f"rl_model_{load_checkpoint}_steps.zip"
        steps = sorted(_checkpoint_steps(run))
        hint = f"checkpoints there: {', '.join(map(str, steps))}" if steps else "train with --save-freq N"
    elif load_last_checkpoint:
        steps = sorted(_checkpoint_steps(run))
        if not steps:
            raise CliError(f"no checkpoint (rl_model_<N>_steps.zip) in {run}/: train with --save-freq N.")
        path, hint = run / f"rl_model_{steps[-1]}_steps.zip", ""
    else:
        path = run / f"{env_name}.zip"
        hint = "the final model is written when training ends"
    if not path.is_file():
        raise CliError(f"no model file {path}: {hint}.")
    return path, run


def _checkpoint_steps(run: Path) -> list[int]:
    pattern = re.compile(r"^rl_model_(\d+)_steps\.zip$")
    return [int(m.group(1)) for p in run.glob("rl_model_*_steps.zip") if (m := pattern.match(p.name))]


# values on the command line ------------------------------------------------------------------------------
_TORCH_NN = ("nn", "th.nn", "torch.nn")


def parse_value(text: str, flag: str = "--hyperparams") -> Any:
    """A value as rl-zoo3 users write them, parsed without running code.

    JSON and Python literals (``0.01``, ``True``, ``[64, 64]``, ``{'a': 1}``), ``dict(key=value, ...)``,
    ``nn.ReLU`` (becomes ``"torch.nn:ReLU"``, resolved through the registry); anything else is a string
    (``lin_0.001``, ``MlpPolicy``). rl-zoo3 evaluates these as Python; lit-sb3 never executes them.
    """
    text = text.strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return text
    try:
        return _literal(tree.body)
    except ValueError as exc:
        if isinstance(tree.body, ast.Name):
            return text  # a bare word: a string such as MlpPolicy
        raise CliError(
            f"{flag}: cannot read {text!r} ({exc}); write literals, dict(key=value), lists, or class names such "
            "as nn.ReLU (values are parsed, never executed)."
        ) from None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        if node.args or any(k.arg is None for k in node.keywords):
            raise ValueError("dict() takes key=value pairs only")
        return {k.arg: _literal(k.value) for k in node.keywords}
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Attribute):
        dotted = _dotted(node)
        module, _, name = dotted.rpartition(".")
        if module in _TORCH_NN:
            return f"torch.nn:{name}"
        raise ValueError(f"unknown name {dotted}")
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(f"{ast.unparse(node)} is not a literal") from None


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise ValueError(f"{ast.unparse(node)} is not a name")


def parse_key_values(pairs: list[str] | None, flag: str, separators: str = ":") -> dict[str, Any]:
    """``["learning_rate:0.01", "n_envs:4"]`` -> ``{"learning_rate": 0.01, "n_envs": 4}`` (rl-zoo3's form)."""
    values: dict[str, Any] = {}
    for pair in pairs or []:
        cut = min((pair.find(sep) for sep in separators if sep in pair), default=-1)
        if cut <= 0:
            raise CliError(f"{flag} expects KEY{separators[0]}VALUE pairs, got {pair!r}.")
        values[pair[:cut]] = parse_value(pair[cut + 1 :], flag)
    return values
