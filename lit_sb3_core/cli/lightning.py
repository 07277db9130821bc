"""``lit-sb3 fit|validate|test``: LightningCLI with RLTrainer, RLEnvDataModule and any registered algorithm.

LightningCLI (jsonargparse) does the parsing, configs, ``--print_config`` and the saved ``config.yaml``.
What lit-sb3 adds happens before it parses, on the argument list, so every LightningCLI feature keeps
working and ``--print_config`` shows the resolved values:

* registry names where a class path is expected: ``--model ppo`` becomes ``--model lit_sb3_ppo.ppo.PPO``
  (class names such as ``PPO`` also work, in configs too, since every registered class is imported);
* ``--zoo ENV_ID``: the algorithm's tuned hyperparameters become defaults (a config placed first, so
  later configs and options override them);
* ``validate``/``test`` need no step budget, and a lit-sb3 checkpoint names its own algorithm, so
  ``lit-sb3 test --ckpt_path run.ckpt --env CartPole-v1`` needs no ``--model``;
* names from configs and flags resolve through the allow-list: ``--model`` must be a registered algorithm
  (or its class path), and jsonargparse may import class paths (callbacks, loggers, wrappers) only from
  lit-sb3, its registered plugins, Lightning's callbacks/loggers/strategies/plugins/profilers, torch's
  ``nn`` and ``optim`` and gymnasium's wrappers, plus packages named with ``--allow-import PKG``. Importing a
  module runs its code, so a config cannot name an arbitrary one.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lit_sb3_core.cli.common import CliError, positive_int_option

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
  --allow-import PKG    let configs and options name classes from package PKG (your own callbacks or
                        wrappers); repeatable. Other packages are refused before anything is imported.

examples:
  lit-sb3 fit --model ppo --data.train_env CartPole-v1 --trainer.max_steps 100000
  lit-sb3 fit --model ppo --zoo CartPole-v1
  lit-sb3 fit --config examples/configs/ppo_cartpole.yaml --print_config
  lit-sb3 test --ckpt_path lightning_logs/ppo_CartPole-v1_1/checkpoints/last.ckpt --env CartPole-v1
"""
# ckpt_path values Lightning resolves itself (fit resumes from the last/best checkpoint of the run).
_SPECIAL_CKPT = {"last", "best", "hpc", "registry"}


# Packages a config may name classes from (besides lit-sb3 and its registered plugins).
_IMPORTABLE = (
    "lightning.pytorch.callbacks",
    "lightning.pytorch.loggers",
    "lightning.pytorch.strategies",
    "lightning.pytorch.plugins",
    "lightning.pytorch.profilers",
    "lightning.pytorch.accelerators",
    "lightning.fabric.plugins",
    "torch.nn",
    "torch.optim",
    "gymnasium.wrappers",
)


def run_lightning(subcommand: str, argv: list[str]) -> int:
    """Run ``lit-sb3 <subcommand> <argv>``; returns the exit status."""
    args, threads = _pop_option(list(argv), "--threads")
    args, allowed = _pop_all(args, "--allow-import")
    _set_threads(threads)
    _import_registered_algorithms()
    with _import_policy(allowed):
        _make_cli(subcommand, prepare_args(subcommand, args))
    return 0


@contextmanager
def _import_policy(extra: list[str]) -> Iterator[None]:
    """jsonargparse may import class paths only from the allowed packages while the command runs."""
    from jsonargparse import set_parsing_settings

    for entry in extra:
        if not all(part.isidentifier() for part in entry.split(".")):
            raise CliError(f"--allow-import expects a package name such as my_package, got {entry!r}.")
    allowed = sorted({"lit_sb3_core", "lit_sb3", *_IMPORTABLE, *_plugin_packages(), *extra})
    settings = _jsonargparse_settings()
    saved = (
        {key: settings[key] for key in ("import_path_verdicts", "import_paths_enforced")} if settings else {}
    )
    set_parsing_settings(import_path_denylist=["*"], import_path_allowlist=allowed)
    try:
        yield
    finally:
        if settings:
            settings.update(saved)


def _jsonargparse_settings() -> dict[str, Any] | None:
    """jsonargparse's global settings, to put the import policy back after the command (tests run many)."""
    try:
        from jsonargparse._common import parsing_settings
    except ImportError:  # pragma: no cover - another jsonargparse layout: the policy then stays set
        return None
    return parsing_settings


def _plugin_packages() -> set[str]:
    """Top-level packages of every registered target (the plugins' own code)."""
    from lit_sb3_core.registry.plugins import entries

    kinds = (
        "algorithm",
        "policy",
        "callback",
        "buffer",
        "activation",
        "features_extractor",
        "optimizer",
        "schedule",
    )
    return {entry.target.partition(":")[0].split(".")[0] for kind in kinds for entry in entries(kind)}


def _pop_all(args: list[str], name: str) -> tuple[list[str], list[str]]:
    """Remove every ``name VALUE`` / ``name=VALUE``; returns the rest and all the values."""
    values: list[str] = []
    while True:
        args, value = _pop_option(args, name)
        if value is None:
            return args, values
        values.append(value)


def _set_threads(value: str | None) -> None:
    """Torch CPU threads: 1 unless asked (small RL networks run fastest on one thread)."""
    threads = 1 if value is None else positive_int_option("--threads", value)
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
    """A registry name, class name or class path as the class path jsonargparse imports.

    A class path must be a registered algorithm's (or a subclass of ``RLAlgorithm`` from a module this
    program has already imported): nothing else is imported.

    Raises:
        UnknownNameError: ``value`` looks like a name (no dots) and no plugin registers it.
        CliError: ``value`` is a class path that is not allowed.
    """
    value = value.strip()
    if value.startswith(("{", "[")) or value.lower() in ("null", "none", ""):
        return value
    if "." in value:
        cls = _algorithm_class(value, "--model")
        return f"{cls.__module__}.{cls.__qualname__}"
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
    return _algorithm_class(class_path, "model.class_path")


def _algorithm_class(class_path: str, field: str) -> type:
    """The algorithm class at ``class_path``, through the allow-list (registered algorithms only)."""
    from lit_sb3_core.errors import DisallowedNameError
    from lit_sb3_core.registry.names import resolve_named_class
    from lit_sb3_core.sdk.algorithm import RLAlgorithm

    try:
        return resolve_named_class("algorithm", class_path, field=field, base=RLAlgorithm)
    except DisallowedNameError as exc:
        raise CliError(f"{exc} (See `lit-sb3 algos` for the registered algorithms.)") from None


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
    from lit_sb3_core.engine.file_checks import check_named_classes

    check_named_classes(_import_class(class_path), hparams, str(ckpt_path), "hyper_parameters.")
    model = {"class_path": class_path, "init_args": hparams}
    cli.config = cli.parser.parse_object({subcommand: {"model": model}}, cli.config)


def _read_checkpoint(ckpt_path: str) -> dict[str, Any]:
    """The checkpoint, read as every lit-sb3 path reads one (same refusals as ``load_from_checkpoint``)."""
    from lit_sb3_core.engine.checkpoint_io import read_checkpoint

    try:
        return read_checkpoint(ckpt_path, map_location="cpu")
    except FileNotFoundError:
        raise CliError(f"No checkpoint file at {ckpt_path!r} (--ckpt_path).") from None


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
