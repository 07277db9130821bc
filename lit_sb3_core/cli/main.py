"""The ``lit-sb3`` command: train, evaluate, watch, plot and tune agents; list algorithms and plugins.

Listing commands import neither torch nor lightning, so they answer in a fraction of a second: each
command's implementation lives in its own ``_cli_<name>`` module, imported only when that command runs. To
add a subcommand, write a :class:`Command` and append it to :data:`COMMANDS`; a command that parses its own
arguments (LightningCLI's ``fit``/``validate``/``test``) sets ``raw`` and receives the remaining argv
untouched. Bad input (an unknown algorithm, env id or file) is reported in one line, without a traceback.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from lit_sb3_core._version import __version__

__all__ = ["COMMANDS", "Command", "build_parser", "main"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class Command:
    """One subcommand.

    Attributes:
        name: What the user types after ``lit-sb3``.
        help: One line for ``lit-sb3 --help``.
        run: Called with the parsed arguments; returns the exit status.
        configure: Adds the subcommand's arguments to its parser.
        raw: If set, called with the argv after the command name instead of parsing it here.
    """

    name: str
    help: str
    run: Callable[[argparse.Namespace], int] | None = None
    configure: Callable[[argparse.ArgumentParser], None] = field(default=lambda parser: None)
    raw: Callable[[list[str]], int] | None = None


def _run_algos(args: argparse.Namespace) -> int:
    from lit_sb3_core.registry.registry import _all_algo_specs

    specs = [spec for spec in _quietly(_all_algo_specs) if _matches(spec.name, args.pattern)]
    rows = [
        [
            spec.name + (f" ({', '.join(spec.aliases)})" if spec.aliases else ""),
            spec.class_name,
            spec.plugin,
            spec.distribution,
            spec.version,
            spec.description,
        ]
        for spec in specs
    ]
    _print_table(
        "Algorithms",
        ["name", "class", "plugin", "distribution", "version", "description"],
        rows,
        "no algorithms",
    )
    _note_unloaded_plugins()
    return 0


def _run_plugins(args: argparse.Namespace) -> int:
    from lit_sb3_core.registry.registry import list_plugins

    rows = [
        [info.name, info.distribution, info.version, info.status, ", ".join(info.provides), info.error or ""]
        for info in _quietly(list_plugins)
    ]
    _print_table(
        "Plugins", ["name", "distribution", "version", "status", "provides", "error"], rows, "no plugins"
    )
    return 0


def _configure_algos(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pattern", nargs="?", default="*", help="shell-style filter on names, e.g. 'ppo*'")


def _configure_train(parser: argparse.ArgumentParser) -> None:
    from lit_sb3_core.cli.train import configure_train

    configure_train(parser)


def _run_train(args: argparse.Namespace) -> int:
    from lit_sb3_core.cli.train import run_train

    return run_train(args)


def _lightning(subcommand: str) -> Callable[[list[str]], int]:
    def run(argv: list[str]) -> int:
        from lit_sb3_core.cli.lightning import run_lightning

        return run_lightning(subcommand, argv)

    return run


def _lazy(module: str, function: str) -> Callable[..., int]:
    """A command function imported from ``lit_sb3_core.<module>`` on first call (keeps startup light)."""

    def call(*args: Any) -> int:
        import importlib

        return getattr(importlib.import_module(f"lit_sb3_core.{module}"), function)(*args)

    return call


def _configure_lazy(module: str) -> Callable[[argparse.ArgumentParser], None]:
    return _configure_lazy_named(module, "configure")


def _configure_lazy_named(module: str, function: str) -> Callable[[argparse.ArgumentParser], None]:
    def configure(parser: argparse.ArgumentParser) -> None:
        import importlib

        getattr(importlib.import_module(f"lit_sb3_core.{module}"), function)(parser)

    return configure


COMMANDS: list[Command] = [
    Command(
        "fit",
        "train with LightningCLI: configs, --print_config, --zoo ENV tuned defaults",
        raw=_lightning("fit"),
    ),
    Command(
        "validate",
        "evaluate a checkpoint on the validation env with LightningCLI",
        raw=_lightning("validate"),
    ),
    Command("test", "evaluate a checkpoint on the test env with LightningCLI", raw=_lightning("test")),
    Command(
        "train",
        "train an algorithm on an environment, then evaluate it",
        run=_run_train,
        configure=_configure_train,
    ),
    Command(
        "evaluate",
        "mean ± std return of a saved model over N episodes",
        run=_lazy("cli.evaluate", "run_evaluate"),
        configure=_configure_lazy("cli.evaluate"),
    ),
    Command(
        "enjoy",
        "watch a saved model or a train run play (window, --video DIR, or --no-render)",
        run=_lazy("cli.enjoy", "run_enjoy"),
        configure=_configure_lazy("cli.enjoy"),
    ),
    Command(
        "record-video",
        "record a saved model or a train run playing, as one mp4 of N steps",
        run=_lazy("cli.enjoy", "run_record_video"),
        configure=_configure_lazy_named("cli.enjoy", "configure_record_video"),
    ),
    Command(
        "export",
        "export a saved model's policy to ONNX, TorchScript or torch.export (raw obs in, actions out)",
        run=_lazy("cli.export", "run_export"),
        configure=_configure_lazy("cli.export"),
    ),
    Command(
        "plot",
        "learning curves (mean ± std over runs) from TensorBoard or CSV logs",
        run=_lazy("cli.plot", "run_plot"),
        configure=_configure_lazy("cli.plot"),
    ),
    Command(
        "tune",
        "search hyperparameters with Optuna (pruning on evaluation returns)",
        run=_lazy("cli.tune", "run_tune"),
        configure=_configure_lazy("cli.tune"),
    ),
    Command(
        "doctor",
        "versions of core, plugins and dependencies; plugins that failed",
        run=_lazy("cli.doctor", "run_doctor"),
    ),
    Command("algos", "list the registered algorithms", run=_run_algos, configure=_configure_algos),
    Command("plugins", "list the discovered plugins, loaded or not, and their errors", run=_run_plugins),
]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every command in :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="lit-sb3",
        description="Stable-Baselines3-style reinforcement learning on PyTorch Lightning.",
        epilog="Run `lit-sb3 COMMAND --help` for a command's options and examples (docs/cli.md has them all).",
    )
    parser.add_argument("--version", action="version", version=f"lit-sb3-core {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        sub = subparsers.add_parser(command.name, help=command.help, add_help=command.raw is None)
        command.configure(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lit-sb3`` console script; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    commands = {command.name: command for command in COMMANDS}
    first = commands.get(args_list[0]) if args_list else None
    if first is not None and first.raw is not None:
        return _guarded(first.name, first.raw, args_list[1:])

    parser = build_parser()
    args = parser.parse_args(args_list)
    run = commands[args.command].run if args.command is not None else None
    if run is None:
        parser.print_help()
        return 0
    return _guarded(args.command, run, args)


def _guarded(name: str, run: Callable[[Any], int], args: Any) -> int:
    """Run a command; bad input is reported in one line (exit status 2), bugs keep their traceback."""
    from lit_sb3_core.cli.common import is_user_error, report_error

    try:
        return run(args)
    except Exception as error:
        if is_user_error(error):
            return report_error(name, error)
        raise


# --- output -------------------------------------------------------------------------------------------


def _quietly(function: Callable[[], list[_T]]) -> list[_T]:
    """Run discovery without warnings: the tables and the footnote already report unloaded plugins."""
    from lit_sb3_core.registry.plugins import LitSb3PluginWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LitSb3PluginWarning)
        return function()


def _matches(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern.lower())


def _note_unloaded_plugins() -> None:
    from lit_sb3_core.registry.registry import list_plugins

    skipped = [info.name for info in list_plugins() if info.status in ("failed", "incompatible")]
    if skipped:
        print(
            f"note: {len(skipped)} plugin(s) could not be loaded ({', '.join(skipped)}); "
            "see `lit-sb3 plugins`.",
            file=sys.stderr,
        )


_STYLES = {"loaded": "green", "failed": "red", "incompatible": "red", "blocked": "yellow"}


def _print_table(title: str, headers: list[str], rows: list[list[str]], empty: str) -> None:
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console()
    if not console.is_terminal:
        # Piped output: never wrap or cut cells, so the lines can be grepped.
        console = Console(width=10_000, no_color=True)
    if not rows:
        console.print(f"{title}: {empty}.")
        return
    table = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left")
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        # Text, not markup: plugin errors may contain square brackets.
        table.add_row(*(Text(cell, style=_STYLES.get(cell, "")) for cell in row))
    console.print(table)
