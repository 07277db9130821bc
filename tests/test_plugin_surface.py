"""Plugins use the SDK's public surface only (issue 15, CONTRIBUTING's compatibility policy).

For every plugin under ``plugins/``, ``examples/plugin-template`` and ``examples/plugins/*``, every ``.py``
file is parsed (nothing is imported) and checked for two things:

* **Imports.** Package code may import from core only ``lit_sb3_core.sdk``, ``lit_sb3_core.hookspecs`` and
  ``lit_sb3_core.errors``; test code (files under ``tests/``) may also import ``lit_sb3_core.testing`` and the
  user API (``lit_sb3_core`` itself and ``lit_sb3``). Function-level imports count too.
* **Underscore members.** No plugin reads, writes or overrides a single-underscore member that a core class
  defines (a method, a class attribute or a ``self._x`` assignment under ``lit_sb3_core/``): those may change
  in any release. A plugin's own private names must not collide with them either, since a collision would
  silently replace the core's member in a subclass.

The checks run over deliberately bad samples too, so the test itself can fail.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "lit_sb3_core"

# Exactly these modules: their submodules (``lit_sb3_core.sdk.algorithm``) are where the names happen to live.
PACKAGE_IMPORTS = ("lit_sb3_core.sdk", "lit_sb3_core.hookspecs", "lit_sb3_core.errors")
# Tests may add the conformance kit (with its submodules) and the user API (the two top-level packages).
TEST_KIT = "lit_sb3_core.testing"
TEST_USER_API = ("lit_sb3_core", "lit_sb3")
# ...and SB3's documented module paths on the facade (``lit_sb3.common.env_util.make_vec_env``): users import
# them as SB3 lays them out, so a plugin's SB3-compatibility tests may too (public segments only).
TEST_SB3_MODULES = "lit_sb3.common"

# SB3's documented override points of BaseCallback: RLCallback keeps SB3's names, so that SB3 callbacks
# port unchanged (docs/sdk.md). Overriding these is the intended use, not a reach into internals.
SB3_OVERRIDE_POINTS = frozenset(
    {
        "_on_step",
        "_init_callback",
        "_on_training_start",
        "_on_training_end",
        "_on_rollout_start",
        "_on_rollout_end",
    }
)
# SB3's underscored methods that its users call on a model, which lit-sb3 provides as SB3 does (SB3's own loop:
# ``_setup_learn`` before ``collect_rollouts``).
SB3_USER_METHODS = frozenset({"_setup_learn"})
# (file, name): accesses to underscore members of *reference* objects that merely share a name with a core
# member. Each entry says whose member it is.
REFERENCE_OBJECT_ACCESSES: dict[tuple[str, str], str] = {
    (
        "plugins/lit-sb3-ppo-recurrent/tests/test_recurrent_policies.py",
        "_get_samples",
    ): "sb3-contrib's RecurrentRolloutBuffer, the reference the test compares against",
}


def plugin_roots() -> list[Path]:
    roots = [*sorted((ROOT / "plugins").glob("lit-sb3-*")), ROOT / "examples" / "plugin-template"]
    roots += sorted(path for path in (ROOT / "examples" / "plugins").glob("*") if path.is_dir())
    return [root for root in roots if (root / "pyproject.toml").exists()]


def python_files(root: Path) -> list[Path]:
    return sorted(
        path for path in root.rglob("*.py") if ".venv" not in path.parts and "build" not in path.parts
    )


def is_test_file(path: Path, root: Path) -> bool:
    parts = path.relative_to(root).parts
    return "tests" in parts or path.name.startswith("test_") or path.name == "conftest.py"


@cache
def core_private_names() -> frozenset[str]:
    """Single-underscore names core classes define: methods, class attributes and ``self._x`` assignments."""
    names: set[str] = set()
    for path in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                names.update(_class_private_names(node))
    return frozenset(name for name in names if _single_underscore(name))


def _class_private_names(cls: ast.ClassDef) -> set[str]:
    found: set[str] = set()
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add(statement.name)
        elif isinstance(statement, ast.Assign):
            found.update(t.id for t in statement.targets if isinstance(t, ast.Name))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            found.add(statement.target.id)
    for node in ast.walk(cls):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            found.add(node.attr)
    return found


def _single_underscore(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@dataclass(frozen=True)
class Violation:
    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


def check_source(source: str, relative: str, *, test_code: bool) -> list[Violation]:
    """Every violation of the two rules in one file's source (``relative``: its path from the repo root)."""
    tree = ast.parse(source, filename=relative)
    allowed = (*PACKAGE_IMPORTS, "lit_sb3_core.testing") if test_code else PACKAGE_IMPORTS
    private = core_private_names()
    methods = {
        id(statement)
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef)
        for statement in cls.body
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    found: list[Violation] = []
    for node in ast.walk(tree):
        for module in _imported_core_modules(node):
            if not _import_allowed(module, test_code):
                where = "test code" if test_code else "plugin code"
                found.append(
                    Violation(
                        relative,
                        node.lineno,
                        f"imports {module}; {where} may import from core only {', '.join(allowed)}"
                        + (" and the user API (lit_sb3_core, lit_sb3)" if test_code else ""),
                    )
                )
        name = _touched_private_name(node, methods)
        if name is None or name not in private or name in SB3_OVERRIDE_POINTS | SB3_USER_METHODS:
            continue
        if (relative, name) in REFERENCE_OBJECT_ACCESSES:
            continue
        verb = "overrides" if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else "uses"
        found.append(
            Violation(
                relative,
                node.lineno,
                f"{verb} {name}, an underscore member of a core class: use the SDK's public name "
                "(docs/sdk.md), or rename a plugin-private name that collides with it",
            )
        )
    return found


def _import_allowed(module: str, test_code: bool) -> bool:
    if module in PACKAGE_IMPORTS:
        return True
    if not test_code:
        return False
    sb3_module = (module == TEST_SB3_MODULES or module.startswith(TEST_SB3_MODULES + ".")) and not any(
        part.startswith("_") for part in module.split(".")
    )
    return module in TEST_USER_API or module == TEST_KIT or module.startswith(TEST_KIT + ".") or sb3_module


def _imported_core_modules(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        modules = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        modules = [node.module]
    else:
        return []
    return [m for m in modules if m.split(".")[0] in ("lit_sb3_core", "lit_sb3")]


def _touched_private_name(node: ast.AST, methods: set[int]) -> str | None:
    """The underscore name an attribute access (``obj._x``) or a method definition (``def _x``) touches."""
    if isinstance(node, ast.Attribute) and _single_underscore(node.attr):
        return node.attr
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _single_underscore(node.name):
        return node.name if id(node) in methods else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "setattr")
    ):
        if (
            len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            return node.args[1].value if _single_underscore(node.args[1].value) else None
    return None


def check_file(path: Path, root: Path) -> list[Violation]:
    return check_source(path.read_text(), str(path.relative_to(ROOT)), test_code=is_test_file(path, root))


ROOTS = plugin_roots()


def test_every_plugin_is_checked() -> None:
    names = {root.name for root in ROOTS}
    assert len([n for n in names if n.startswith("lit-sb3-")]) >= 14 and "plugin-template" in names, names
    assert all(python_files(root) for root in ROOTS)


@pytest.mark.parametrize("root", ROOTS, ids=lambda root: root.name)
def test_plugins_use_only_the_public_sdk(root: Path) -> None:
    violations = [v for path in python_files(root) for v in check_file(path, root)]
    assert not violations, "\n".join(map(str, violations))


def test_core_private_names_are_collected() -> None:
    names = core_private_names()
    # a method, a self._x assignment and a class attribute of core classes
    assert {"_lightning_steps_are_plain", "_learn_datamodule", "_plain_steps"} <= names
    assert "n_updates" not in names and "__init__" not in names


BAD_PLUGIN = """
from lit_sb3_core.sdk import OnPolicyAlgorithm
from lit_sb3_core.sdk.algorithm import RLAlgorithm
from lit_sb3_core.testing import check_algorithm


class Bad(OnPolicyAlgorithm):
    def _lightning_steps_are_plain(self):
        return True

    def train_on_rollout(self):
        import lit_sb3_core.engine.trainer
        self._plain_steps = True
        return {"n": getattr(self, "_learn_datamodule")}


def helper(model):
    return model._evaluation
"""

BAD_TEST = """
import lit_sb3
from lit_sb3_core import evaluate_policy
from lit_sb3_core.testing import check_algorithm
from lit_sb3_core.cli.main import main


class Reference:
    def _on_step(self):  # an SB3 override point: allowed
        return True


def test_it(model):
    assert model._n_calls_seen is None  # a plugin-private name no core class defines: allowed
    assert model._plain_steps
"""


def test_a_bad_plugin_fails_the_check() -> None:
    found = [str(v) for v in check_source(textwrap.dedent(BAD_PLUGIN), "bad/bad.py", test_code=False)]
    expected = [
        ":3: imports lit_sb3_core.sdk.algorithm",
        ":4: imports lit_sb3_core.testing",
        ":8: overrides _lightning_steps_are_plain",
        ":12: imports lit_sb3_core.engine.trainer",
        ":13: uses _plain_steps",
        ":14: uses _learn_datamodule",
        ":18: uses _evaluation",
    ]
    for fragment in expected:
        assert any(fragment in line for line in found), (fragment, found)
    assert len(found) == len(expected), found


def test_a_bad_test_file_fails_the_check() -> None:
    found = [str(v) for v in check_source(textwrap.dedent(BAD_TEST), "bad/tests/test_bad.py", test_code=True)]
    assert len(found) == 2, found
    assert ":5: imports lit_sb3_core.cli.main" in found[0] or ":5: imports lit_sb3_core.cli.main" in found[1]
    assert any(":15: uses _plain_steps" in line for line in found), found
