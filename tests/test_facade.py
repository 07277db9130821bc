"""The ``lit_sb3`` facade: lazy re-exports, SB3 class names, and an import that loads nothing heavy."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import lit_sb3
import lit_sb3_core
from lit_sb3_core.foundation.first_party import SB3_BUFFER_CLASS_NAMES, SB3_CLASS_NAMES

HEAVY = ("torch", "lightning", "gymnasium")


def modules_loaded_by(code: str, env: dict[str, str]) -> set[str]:
    """Top-level module names present in ``sys.modules`` after running ``code`` in a fresh interpreter."""
    probe = f"{code}\nimport sys\nprint(' '.join(sorted({{name.split('.')[0] for name in sys.modules}})))"
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    return set(result.stdout.split())


def test_import_lit_sb3_loads_nothing_heavy(child_env) -> None:
    loaded = modules_loaded_by("import lit_sb3", child_env)
    assert "lit_sb3" in loaded
    assert not loaded & {*HEAVY, "pluggy", "rich"}


def test_discovery_and_listing_load_nothing_heavy(child_env) -> None:
    """Every installed plugin module must register import strings only (DESIGN §2)."""
    code = "import lit_sb3\nlit_sb3.list_algos()\nlit_sb3.list_plugins()\nlit_sb3.make_algo  # noqa"
    assert not modules_loaded_by(code, child_env) & set(HEAVY)


def test_all_lists_the_core_exports_and_the_sb3_names() -> None:
    assert set(lit_sb3_core.__all__) <= set(lit_sb3.__all__)
    assert set(SB3_CLASS_NAMES) <= set(lit_sb3.__all__)
    assert set(SB3_BUFFER_CLASS_NAMES) <= set(lit_sb3.__all__)
    assert len(lit_sb3.__all__) == len(set(lit_sb3.__all__))
    assert set(dir(lit_sb3)) >= set(lit_sb3.__all__)
    assert lit_sb3.__version__ == lit_sb3_core.__version__


@pytest.mark.parametrize(
    "name",
    sorted(
        name
        for name, target in lit_sb3_core._EXPORTS.items()
        if importlib.util.find_spec(target.partition(":")[0])
    ),
)
def test_core_names_are_the_same_objects(name: str) -> None:
    assert getattr(lit_sb3, name) is getattr(lit_sb3_core, name)


def test_sb3_class_names_come_from_the_registry(fake_plugins) -> None:
    fake_plugins.add(
        "fakeppo",
        """
        from lit_sb3_core import hookimpl

        class PPO:
            pass

        @hookimpl
        def lit_sb3_register_algorithms(registry):
            registry.add("ppo", "MODULE:PPO")
        """,
    )
    assert lit_sb3.PPO is lit_sb3.get_algo_class("ppo")
    from lit_sb3 import PPO

    assert PPO is lit_sb3.PPO


def test_a_missing_plugin_raises_import_error_with_the_install_line(fake_plugins) -> None:
    with pytest.raises(
        ImportError,
        match="SAC is provided by the plugin lit-sb3-sac, which is not installed: pip install lit-sb3-sac",
    ):
        from lit_sb3 import SAC  # noqa: F401


def test_sb3_buffer_names_come_from_the_registry(fake_plugins) -> None:
    fake_plugins.add(
        "fakeher",
        """
        from lit_sb3_core import hookimpl

        class HerReplayBuffer:
            pass

        @hookimpl
        def lit_sb3_register_buffers(registry):
            registry.add("her", "MODULE:HerReplayBuffer")
        """,
    )
    from lit_sb3 import HerReplayBuffer

    assert HerReplayBuffer.__name__ == "HerReplayBuffer"
    assert HerReplayBuffer is lit_sb3_core.registry.registry.get_buffer_class("her")


def test_a_missing_buffer_plugin_raises_import_error_with_the_install_line(fake_plugins) -> None:
    with pytest.raises(ImportError, match="pip install lit-sb3-her"):
        from lit_sb3 import HerReplayBuffer  # noqa: F401


def test_other_names_are_attribute_errors(fake_plugins) -> None:
    fake_plugins.add("alpha", fake_plugins.ALPHA)
    assert lit_sb3.Alpha.__name__ == "Alpha"  # a third-party plugin's class, by its class name
    assert not hasattr(lit_sb3, "NoSuchAlgorithm")
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        lit_sb3.no_such_thing  # noqa: B018
