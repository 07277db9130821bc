"""``lit-sb3 fit|validate|test``: LightningCLI with RLTrainer, RLEnvDataModule and any registered algorithm.

LightningCLI (jsonargparse) does the parsing, configs, ``--print_config`` and the saved ``config.yaml``.
What lit-sb3 adds happens before it parses, on the argument list, so every LightningCLI feature keeps
working and ``--print_config`` shows the resolved values:

* registry names where a class path is expected: ``--model ppo`` becomes ``--model lit_sb3_ppo.ppo.PPO``
  (class names such as ``PPO`` also work, in configs too, since every registered class is imported);
* ``--zoo ENV_ID``: the algorithm's tuned hyperparameters become defaults (a config placed first, so
  later configs and options override them);
* ``validate``/``test`` need no step budget, and a lit-sb3 checkpoint names its own algorithm, so
  ``lit-sb3 test --ckpt_path run.ckpt --env CartPole-v1`` needs no ``--model``.
"""

from __future__ import annotations

import importlib
import json
import pickle
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit_sb3_core.cli.common import CliError

if TYPE_CHECKING:
    from lightning.pytorch.cli import LightningArgumentParser

__all__ = ["SUBCOMMANDS", "prepare_args", "run_lightning"]

SUBCOMMANDS = ("fit", "validate", "test")

_DESCRIPTIONS = {
    "fit": "Train an algorithm on an environment until trainer.max_steps environment steps.",
    "validate": "Evaluate a model on the validation environment (whole episodes).",
    "test": "Evaluate a model on the test environment (whole episodes).",
}
_EPILOG = """\
lit-sb3 additions:
  --model NAME          a registry name (see `lit-sb3 algos`), a class name (PPO) or a class path
  --zoo ENV_ID          start from the algorithm's tuned hyperparameters for ENV_ID (rl-zoo3's):
                        n_envs -> data, n_timesteps -> trainer.max_steps, the rest -> model;
                        also sets data.train_env. Later options and configs override them.
  --model.help NAME     the algorithm's own options
  --threads N           torch CPU threads (default 1: fastest for small networks)

examples:
  lit-sb3 fit --model ppo --data.train_env CartPole-v1 --trainer.max_steps 100000
  lit-sb3 fit --model ppo --zoo CartPole-v1
  lit-sb3 fit --config examples/configs/ppo_cartpole.yaml --print_config
  lit-sb3 test --ckpt_path lightning_logs/ppo_CartPole-v1_1/checkpoints/last.ckpt --env CartPole-v1
"""
# ckpt_path values Lightning resolves itself (fit resumes from the last/best checkpoint of the run).
_SPECIAL_CKPT = {"last", "best", "hpc", "registry"}


def run_lightning(subcommand: str, argv: list[str]) -> int:
    """Run ``lit-sb3 <subcommand> <argv>``; returns the exit status."""
    args, threads = _pop_option(list(argv), "--threads")
    _set_threads(threads)
    _import_registered_algorithms()
    _make_cli(subcommand, prepare_args(subcommand, args))
    return 0


def _set_threads(value: str | None) -> None:
    """Torch CPU threads: 1 unless asked (small RL networks run fastest on one thread)."""
    try:
        threads = int(value) if value is not None else 1
    except ValueError:
        threads = 0
    if threads < 1:
        raise CliError(f"--threads expects a positive integer, got {value!r}.")
    import torch

    torch.set_num_threads(threads)


def _make_cli(subcommand: str, args: list[str]) -> Any:
    from lightning.pytorch.cli import LightningCLI, SaveConfigCallback

    from lit_sb3_core.engine.datamodule import RLEnvDataModule
    from lit_sb3_core.engine.trainer import RLTrainer
    from lit_sb3_core.sdk.algorithm import RLAlgorithm

    class RLCLI(LightningCLI):
        """LightningCLI wired for RL: the env-step budget, registry-named algorithms, seeds, run names."""

        @staticmethod
        def subcommands() -> dict[str, set[str]]:
            # predict returns actions for one observation: not a command-line task.
            return {name: skip for name, skip in LightningCLI.subcommands().items() if name in SUBCOMMANDS}

        def parse_arguments(self, parser: LightningArgumentParser, args: Any) -> None:
            # Lightning warns when args and sys.argv are both set; the lit-sb3 command always passes args.
            self.config = parser.parse_args(args)

        def _parse_ckpt_path(self) -> None:
            # Replaces Lightning's version, which merges the checkpoint's hyperparameters without a class
            # path (so subclass mode falls back to the base class); lit-sb3 checkpoints name their algorithm.
            _merge_checkpoint_hparams(self)

        def before_instantiate_classes(self) -> None:
            assert self.subcommand is not None  # set once the command line is parsed
            _check_and_link(self.config[self.subcommand], self.subcommand)

    return RLCLI(
        model_class=RLAlgorithm,
        datamodule_class=RLEnvDataModule,
        trainer_class=RLTrainer,
        subclass_mode_model=True,
        # fit saves the resolved config beside its logs; evaluation runs have nothing new to save.
        save_config_callback=SaveConfigCallback if subcommand == "fit" else None,
        save_config_kwargs={"overwrite": True},
        seed_everything_default=0,
        auto_configure_optimizers=False,  # algorithms build their own optimizers
        load_from_checkpoint_support=False,  # keeps hparams the plain constructor arguments
        parser_kwargs={
            name: {"description": _DESCRIPTIONS[name], "epilog": _EPILOG, "prog": f"lit-sb3 {name}"}
            for name in SUBCOMMANDS
        },
        args=[subcommand, *args],
    )


# --- before parsing -----------------------------------------------------------------------------------


def prepare_args(subcommand: str, argv: list[str]) -> list[str]:
    """``argv`` with registry names resolved and lit-sb3 defaults (``--zoo``, eval budget) prepended.

    Raises:
        CliError: an unknown algorithm, a missing config file, a malformed ``--zoo``.
    """
    if subcommand not in SUBCOMMANDS:
        raise CliError(f"unknown subcommand {subcommand!r}; use one of {', '.join(SUBCOMMANDS)}.")
    args, zoo_env = _pop_option(list(argv), "--zoo")
    for _, config in _option_indices(args, ("--config", "-c")):
        _read_config(config)  # a missing file is named now, not after a page of usage
    args = _resolve_model_options(args)
    defaults: dict[str, Any] = {}
    if subcommand != "fit":
        # RLTrainer needs a budget (evaluation takes no training steps) and evaluation writes no checkpoints.
        defaults["trainer"] = {"max_steps": 1, "enable_checkpointing": False}
        ckpt = _option_indices(args, ("--ckpt_path",))
        if ckpt and not _wants_help(args) and _model_class_path(args) is None:
            # The checkpoint names its algorithm; its hyperparameters are merged after parsing.
            defaults["model"] = {"class_path": resolve_algorithm(_checkpoint_state(ckpt[-1][1])["algo"])}
    if zoo_env is not None:
        if _wants_help(args):
            zoo_env = None
        else:
            class_path = _model_class_path(args)
            if class_path is None:
                raise CliError(
                    "--zoo needs the algorithm: add --model NAME (see `lit-sb3 algos`), e.g. "
                    f"`lit-sb3 {subcommand} --model ppo --zoo {zoo_env}`."
                )
            _merge(defaults, _zoo_config(class_path, zoo_env))
    if defaults:
        args = ["--config", json.dumps(defaults), *args]
    return args


def _wants_help(args: list[str]) -> bool:
    return any(arg in ("-h", "--help") or arg.split("=")[0].endswith(".help") for arg in args)


def _pop_option(args: list[str], name: str) -> tuple[list[str], str | None]:
    """Remove every ``name VALUE`` / ``name=VALUE`` from ``args``; returns the rest and the last value."""
    rest: list[str] = []
    value: str | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == name:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise CliError(f"{name} expects a value, e.g. {name} CartPole-v1.")
            value = args[i + 1]
            i += 2
            continue
        if arg.startswith(name + "="):
            value = arg.partition("=")[2]
        else:
            rest.append(arg)
        i += 1
    return rest, value


def _option_indices(args: list[str], names: tuple[str, ...]) -> list[tuple[int, str]]:
    """``(index of the value, value)`` for each ``NAME VALUE`` / ``NAME=VALUE`` in ``args``."""
    found = []
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                found.append((i + 1, args[i + 1]))
            elif arg.startswith(name + "="):
                found.append((i, arg[len(name) + 1 :]))
    return found


def _resolve_model_options(args: list[str]) -> list[str]:
    """Registry names after ``--model``, ``--model.class_path`` or ``--model.help`` become class paths."""
    args = list(args)
    for index, value in _option_indices(args, ("--model", "--model.class_path", "--model.help")):
        resolved = resolve_algorithm(value)
        if resolved != value:
            args[index] = args[index][: len(args[index]) - len(value)] + resolved
    return args


def resolve_algorithm(value: str) -> str:
    """A registry or class name as the class path jsonargparse imports; other values are returned as given.

    Raises:
        UnknownNameError: ``value`` looks like a name (no dots) and no plugin registers it.
    """
    value = value.strip()
    if "." in value or value.startswith(("{", "[")) or value.lower() in ("null", "none", ""):
        return value
    from lit_sb3_core.errors import UnknownNameError
    from lit_sb3_core.registry.registry import _all_algo_specs, algo_spec

    try:
        return algo_spec(value).target.replace(":", ".")
    except UnknownNameError:
        by_class = {spec.target for spec in _all_algo_specs() if spec.class_name == value}
        if len(by_class) == 1:
            return by_class.pop().replace(":", ".")
        raise


def _model_class_path(args: list[str]) -> str | None:
    """The model's class path from the options, else from the config files they name."""
    found = _option_indices(args, ("--model", "--model.class_path"))
    if found:
        return found[-1][1]
    class_path = None
    for _, config in _option_indices(args, ("--config", "-c")):
        model = _read_config(config).get("model")
        if isinstance(model, str):
            class_path = model
        elif isinstance(model, dict) and isinstance(model.get("class_path"), str):
            class_path = model["class_path"]
    return resolve_algorithm(class_path) if class_path is not None else None


def _read_config(text_or_path: str) -> dict[str, Any]:
    import yaml

    path = Path(text_or_path)
    try:
        is_file = path.is_file()
    except OSError:  # a config given inline can be too long for a file name
        is_file = False
    inline = not is_file and (text_or_path.lstrip().startswith("{") or "\n" in text_or_path)
    if not is_file and not inline:
        raise CliError(f"No config file at {text_or_path!r} (--config).")
    try:
        loaded = yaml.safe_load(path.read_text() if is_file else text_or_path)
    except yaml.YAMLError as exc:
        raise CliError(f"The config {text_or_path!r} is not valid YAML: {exc}") from None
    return loaded if isinstance(loaded, dict) else {}


def _zoo_config(class_path: str, env_id: str) -> dict[str, Any]:
    from lit_sb3_core.engine.tuned import tuned_hyperparameters

    tuned = tuned_hyperparameters(_import_class(class_path), env_id)
    return {
        "model": {"class_path": class_path, "init_args": tuned["model"]},
        "data": {"train_env": env_id, **tuned["data"]},
        "trainer": tuned["trainer"],
    }


def _import_class(class_path: str) -> type:
    module, _, name = class_path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise CliError(f"cannot import the model class {class_path!r}: {exc}.") from None


def _merge(target: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


def _import_registered_algorithms() -> None:
    """Import every registered class, so jsonargparse resolves class names and lists them in ``--help``."""
    from lit_sb3_core.errors import LitSb3Error
    from lit_sb3_core.registry.plugins import LitSb3PluginWarning
    from lit_sb3_core.registry.registry import _all_algo_specs, get_algo_class

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LitSb3PluginWarning)  # `lit-sb3 plugins` reports them
        for spec in _all_algo_specs():
            try:
                get_algo_class(f"{spec.plugin}/{spec.name}")
            except LitSb3Error:
                pass  # a broken plugin fails only when it is asked for, with its own message


# --- after parsing ------------------------------------------------------------------------------------


def _merge_checkpoint_hparams(cli: Any) -> None:
    """Load ``ckpt_path``'s algorithm and hyperparameters into the model config."""
    subcommand = cli.config.get("subcommand")
    config = cli.config[subcommand]
    ckpt_path = config.get("ckpt_path")
    if not ckpt_path or str(ckpt_path) in _SPECIAL_CKPT:
        return
    checkpoint = _read_checkpoint(str(ckpt_path))
    state = _checkpoint_state(str(ckpt_path), checkpoint)
    class_path = resolve_algorithm(str(state["algo"]))
    given = config.get("model")
    given_path = given.get("class_path") if given is not None and hasattr(given, "get") else None
    if given_path and _import_class(given_path) is not _import_class(class_path):
        raise CliError(
            f"{str(ckpt_path)!r} holds a {state['algo']!r} model, but --model is {given_path}. "
            "Drop --model (the checkpoint names its algorithm) or pass that algorithm's checkpoint."
        )
    hparams = dict(checkpoint.get("hyper_parameters") or {})
    model = {"class_path": class_path, "init_args": hparams}
    cli.config = cli.parser.parse_object({subcommand: {"model": model}}, cli.config)


def _read_checkpoint(ckpt_path: str) -> dict[str, Any]:
    if not Path(ckpt_path).is_file():
        raise CliError(f"No checkpoint file at {ckpt_path!r} (--ckpt_path).")
    import torch

    try:
        checkpoint = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise CliError(f"{ckpt_path!r} is not a readable Lightning checkpoint: {exc}") from None
    return checkpoint if isinstance(checkpoint, dict) else {}


def _checkpoint_state(ckpt_path: str, checkpoint: dict[str, Any] | None = None) -> dict[str, Any]:
    """The checkpoint's ``lit_sb3`` entry (algorithm, counters, spaces)."""
    checkpoint = _read_checkpoint(ckpt_path) if checkpoint is None else checkpoint
    state = checkpoint.get("lit_sb3")
    if not isinstance(state, dict) or not state.get("algo"):
        raise CliError(
            f"{ckpt_path!r} was not written by a lit-sb3 algorithm (it has no 'lit_sb3' entry). "
            "Model files from model.save() are evaluated with `lit-sb3 evaluate MODEL.zip --env ID`."
        )
    return state


def _check_and_link(config: Any, subcommand: str) -> None:
    """Refuse a run without an algorithm; give the model the run's seed and the run a descriptive name."""
    model = config.get("model")
    if model is None:
        raise CliError(
            f"no algorithm given: add --model NAME (see `lit-sb3 algos`), e.g. `lit-sb3 {subcommand} --model ppo "
            "--data.train_env CartPole-v1 --trainer.max_steps 100000`, or a config with a model section."
        )
    init_args = model.get("init_args")
    seed = config.get("seed_everything")
    if (
        init_args is not None
        and init_args.get("seed") is None
        and not isinstance(seed, bool)
        and seed is not None
    ):
        init_args["seed"] = int(seed)  # the environments are seeded from the model's seed
    trainer = config.get("trainer")
    train_env = config.get("data").get("train_env") if config.get("data") is not None else None
    if trainer is not None and trainer.get("run_name") == "run" and isinstance(train_env, str):
        algo = getattr(_import_class(model["class_path"]), "algo_name", "") or "run"
        trainer["run_name"] = f"{algo}_{train_env.replace('/', '-')}"
