"""The error tree: built-in bases, clean messages, structured attributes, pickling."""

from __future__ import annotations

import inspect
import pickle

import pytest

from lit_sb3_core import errors
from lit_sb3_core.errors import (
    AmbiguousNameError,
    CliError,
    ConfigurationError,
    DuplicateNameError,
    EnvError,
    LitSb3Error,
    MissingPluginError,
    ModelFileError,
    PluginError,
    RegistrationError,
    RegistryError,
    TargetImportError,
    UnknownNameError,
)


@pytest.mark.parametrize(
    ("error", "bases"),
    [
        (CliError, (LitSb3Error,)),
        (RegistryError, (LitSb3Error,)),
        (UnknownNameError, (RegistryError, KeyError)),
        (AmbiguousNameError, (RegistryError, KeyError)),
        (RegistrationError, (RegistryError, ValueError)),
        (DuplicateNameError, (RegistrationError, ValueError)),
        (TargetImportError, (RegistryError, ImportError)),
        (MissingPluginError, (RegistryError, ImportError)),
        (PluginError, (LitSb3Error,)),
        (ConfigurationError, (LitSb3Error, ValueError)),
        (EnvError, (LitSb3Error, ValueError)),
        (ModelFileError, (LitSb3Error, ValueError)),
    ],
)
def test_the_tree(error: type[Exception], bases: tuple[type[Exception], ...]) -> None:
    assert all(issubclass(error, base) for base in bases)
    assert error.__doc__ and error.__name__ in errors.__doc__


def test_all_lists_every_error() -> None:
    defined = {
        name
        for name, value in vars(errors).items()
        if inspect.isclass(value) and issubclass(value, LitSb3Error)
    }
    assert set(errors.__all__) == defined


def test_unknown_name_message() -> None:
    error = UnknownNameError(
        "algorithm",
        "sacc",
        ["ppo", "sac"],
        distribution="lit-sb3-sac",
        problems=["x (lit-sb3-x 0.1): failed: boom"],
    )
    assert str(error) == (
        "Unknown algorithm 'sacc'. Did you mean 'sac'?\n"
        "'sacc' is provided by the first-party plugin lit-sb3-sac: pip install lit-sb3-sac\n"
        "Available algorithms: ppo, sac.\n"
        "Plugins that were not loaded (see `lit-sb3 plugins`):\n"
        "  - x (lit-sb3-x 0.1): failed: boom"
    )
    assert (error.kind, error.name, error.available, error.suggestions) == (
        "algorithm",
        "sacc",
        ["ppo", "sac"],
        ["sac"],
    )


def test_key_errors_print_without_quotes() -> None:
    try:
        raise UnknownNameError("callback", "x", [])
    except KeyError as error:
        assert str(error) == "Unknown callback 'x'.\nNo callbacks are registered."


def test_ambiguous_name_message() -> None:
    error = AmbiguousNameError("algorithm", "ppo", [("ppo", "lit-sb3-ppo"), ("fastppo", "")])
    assert str(error) == (
        "The algorithm name 'ppo' is ambiguous: it is provided by plugin 'ppo' (lit-sb3-ppo), "
        "plugin 'fastppo'. Ask for ppo/ppo or fastppo/ppo, "
        "or leave one plugin out with LIT_SB3_BLOCK_PLUGINS (one of ppo,fastppo)."
    )


def test_duplicate_name_message() -> None:
    assert "already registered by 'ppo'. Pass override=True" in str(
        DuplicateNameError("algorithm", "ppo", ["ppo"])
    )


@pytest.mark.parametrize(
    "error",
    [
        UnknownNameError("algorithm", "x", ["y"], problems=["p"]),
        AmbiguousNameError("algorithm", "x", [("a", ""), ("b", "")]),
        DuplicateNameError("algorithm", "x", ["a"]),
        TargetImportError("cannot import"),
        ConfigurationError("bad"),
    ],
)
def test_errors_survive_pickling(error: LitSb3Error) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error)
