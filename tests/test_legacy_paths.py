"""0.1's flat module paths keep importing, with a DeprecationWarning that names the new home."""

from __future__ import annotations

import subprocess
import sys

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
