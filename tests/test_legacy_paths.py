"""0.1's flat module paths keep importing, with a DeprecationWarning that names the new home."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import lit_sb3_core._legacy_paths as legacy


@pytest.mark.parametrize("old", sorted(legacy.MOVED_MODULES))
def test_an_old_path_imports_with_a_warning_naming_the_sdk(old: str) -> None:
    # a fresh interpreter: the warning is raised once, when the module is first imported
    code = (
        "import warnings, importlib, json\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        f"    module = importlib.import_module({old!r})\n"
        "print(json.dumps([str(w.message) for w in caught if w.category is DeprecationWarning]))\n"
        "print(json.dumps(sorted(module.__all__)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    messages, names = (line for line in out.splitlines()[-2:])
    assert old in messages and "lit_sb3_core.sdk" in messages and "0.3" in messages
    assert names != "[]"


def test_old_names_are_the_new_objects() -> None:
    with pytest.warns(DeprecationWarning):
        from lit_sb3_core.algorithms import OnPolicyAlgorithm, RLAlgorithm  # type: ignore[attr-defined]
    from lit_sb3_core import sdk

    assert RLAlgorithm is sdk.RLAlgorithm and OnPolicyAlgorithm is sdk.OnPolicyAlgorithm


def test_a_01_model_file_class_string_still_resolves() -> None:
    from lit_sb3_core.sdk import NatureCNN, resolve_class

    with pytest.warns(DeprecationWarning):
        assert resolve_class("lit_sb3_core.torch_layers:NatureCNN") is NatureCNN


def test_every_0_2_path_imports_in_one_interpreter_with_a_warning_naming_its_new_home() -> None:
    # one fresh interpreter for all of them: each warning is raised once, when its module is first imported
    code = (
        "import warnings, importlib, json\n"
        "from lit_sb3_core._legacy_paths import MOVED_BY_ENGINE_CUT\n"
        "out = {}\n"
        "for old, new in MOVED_BY_ENGINE_CUT.items():\n"
        "    with warnings.catch_warnings(record=True) as caught:\n"
        "        warnings.simplefilter('always')\n"
        "        module = importlib.import_module(old)\n"
        "    target = importlib.import_module(new)\n"
        "    same = all(getattr(module, n) is getattr(target, n) for n in target.__all__)\n"
        "    messages = [str(w.message) for w in caught if w.category is DeprecationWarning]\n"
        "    out[old] = [messages, same, sorted(module.__all__) == sorted(target.__all__)]\n"
        "print(json.dumps(out))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    results = json.loads(out.splitlines()[-1])
    assert set(results) == set(legacy.MOVED_BY_ENGINE_CUT)
    for old, (messages, same, same_names) in results.items():
        new = legacy.MOVED_BY_ENGINE_CUT[old]
        assert any(old in m and new in m and "0.4" in m for m in messages), (old, messages)
        assert same and same_names, old


def test_0_2_names_are_the_new_objects() -> None:
    with pytest.warns(DeprecationWarning, match=r"lit_sb3_core\.envs\.atari"):
        from lit_sb3_core.engine.atari import AtariWrapper  # type: ignore[import-not-found]
    from lit_sb3_core.envs.atari import AtariWrapper as new

    assert AtariWrapper is new


def test_a_0_2_model_file_class_string_still_resolves() -> None:
    from lit_sb3_core.nets.off_policy_policies import ContinuousCritic
    from lit_sb3_core.sdk import resolve_class

    with pytest.warns(DeprecationWarning):
        assert resolve_class("lit_sb3_core.nets.off_policy:ContinuousCritic") is ContinuousCritic


def test_the_moves_point_at_modules_that_exist_and_leave_nothing_behind() -> None:
    import importlib.util

    for old, new in legacy.MOVED_BY_ENGINE_CUT.items():
        assert importlib.util.find_spec(new) is not None, new
        package, _, name = old.rpartition(".")
        assert not (Path(importlib.import_module(package).__path__[0]) / f"{name}.py").exists(), old
