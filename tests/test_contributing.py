"""Every code block of CONTRIBUTING.md and docs/sdk.md runs (or matches the file it quotes).

CONTRIBUTING.md is followed in a fresh virtual environment (``_plugin_venv``, shared with
test_plugin_template.py), in a temporary folder, block by block:

- ``bash``: run in order with ``cd`` carried over; ``pip install`` gets ``--no-index --no-build-isolation``
  (offline), ``python -m build`` becomes ``pip wheel --no-deps`` when ``build`` is not installed, and blocks
  preceded by ``<!-- not run: reason -->`` are skipped (only install-from-PyPI and upload blocks are).
- ``python``/``toml`` whose first line is ``# <file>``: written to that file (TOML is parsed and checked);
  when the file exists in this repository, the block must match it instead.
- other ``python``: run as a script with the venv's interpreter.
- ``text``: not code.

docs/sdk.md has only Python blocks; they run here in order as one script, in a temporary directory.
"""

from __future__ import annotations

import functools
import re
import sys
import textwrap
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tomllib
from _plugin_venv import REPO_ROOT, PluginVenv, shared_plugin_venv

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)
NOT_RUN = re.compile(r"<!--\s*not run:\s*(.*?)\s*-->\s*$")
FILE_HEADER = re.compile(r"#\s*(\S+\.(?:py|toml))\s*$")
OFFLINE_PIP = "python -m pip install --no-index --no-build-isolation --disable-pip-version-check"


@dataclass
class Block:
    lang: str
    code: str
    line: int
    not_run: str | None = None
    path: str | None = None
    body: str = field(default="", repr=False)

    @property
    def where(self) -> str:
        return f"the {self.lang} block at line {self.line}"


def blocks(markdown: Path) -> list[Block]:
    """The fenced blocks of ``markdown``, with the reason they are not run and the file they name."""
    text = markdown.read_text()
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rpartition("\n")[2]
        reason = NOT_RUN.search(before)
        block = Block(match.group(1), match.group(2), line, reason.group(1) if reason else None)
        first, _, rest = block.code.partition("\n")
        header = FILE_HEADER.fullmatch(first.strip()) if block.lang in ("python", "toml") else None
        block.path, block.body = (header.group(1), rest) if header else (None, block.code)
        found.append(block)
    return found


def test_every_block_is_a_known_kind_and_only_publishing_is_not_run() -> None:
    contributing = blocks(REPO_ROOT / "CONTRIBUTING.md")
    assert {b.lang for b in contributing} == {"bash", "python", "toml", "text"}
    not_run = [(b.lang, b.not_run, b.code.strip()) for b in contributing if b.not_run]
    assert not_run == [
        ("bash", "installs from PyPI", "python -m pip install build twine"),
        ("bash", "uploads to PyPI", "python -m twine upload dist/*"),
    ]
    sdk = blocks(REPO_ROOT / "docs" / "sdk.md")
    assert len(sdk) >= 4 and {b.lang for b in sdk} == {"python"} and not any(b.not_run for b in sdk)


def test_the_layout_map_names_every_core_package() -> None:
    """CONTRIBUTING's layout map lists exactly the packages (and public top-level modules) of lit_sb3_core."""
    layout = next(
        b for b in blocks(REPO_ROOT / "CONTRIBUTING.md") if b.lang == "text" and "lit_sb3_core/" in b.code
    )
    listed = {
        match.group(1)
        for line in layout.code.splitlines()
        if (match := re.match(r"^  (\w+/|\w+\.py)\s", line))
    }
    core = REPO_ROOT / "lit_sb3_core"
    packages = {f"{d.name}/" for d in core.iterdir() if (d / "__init__.py").is_file()}
    assert {name for name in listed if name.endswith("/")} == packages
    for module in (name for name in listed if name.endswith(".py")):
        assert (core / module).is_file(), (
            f"CONTRIBUTING's layout names lit_sb3_core/{module}, which does not exist"
        )


# What an algorithm written from docs/sdk.md may import from core: the plugin surface, plus the user API
# that the page uses to try its classes out (registering one in-process, building and loading it).
SDK_PAGE_MODULES = {
    "lit_sb3_core.sdk",
    "lit_sb3_core.hookspecs",
    "lit_sb3_core.errors",
    "lit_sb3_core.testing",
}
SDK_PAGE_USER_API = {"load", "make_algo", "register_algo"}


def test_the_sdk_page_uses_only_the_sdk() -> None:
    """A plugin written from docs/sdk.md alone needs no core name outside the SDK, and no private member."""
    import ast

    script = "\n\n".join(block.code for block in blocks(REPO_ROOT / "docs" / "sdk.md"))
    tree = ast.parse(script)
    outside: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            outside += [
                a.name for a in node.names if a.name.startswith("lit_sb3") and a.name not in SDK_PAGE_MODULES
            ]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("lit_sb3"):
            if node.module == "lit_sb3_core":
                outside += [f"lit_sb3_core.{a.name}" for a in node.names if a.name not in SDK_PAGE_USER_API]
            elif node.module not in SDK_PAGE_MODULES:
                outside.append(str(node.module))
    assert not outside, f"docs/sdk.md imports {outside}: use the names lit_sb3_core.sdk exports"
    private = sorted(
        {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and node.attr.startswith("_")
        }
        - {"__init__", "__name__"}
    )
    assert not private, f"docs/sdk.md uses private members {private}: document public ones"


def test_the_sdk_page_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None) -> None:
    import torch

    torch.set_num_threads(1)  # before the page imports torch itself: small networks, two shared cores
    monkeypatch.chdir(tmp_path)
    script = "\n\n".join(block.code for block in blocks(REPO_ROOT / "docs" / "sdk.md"))
    module = type(sys)("lit_sb3_sdk_page")  # classes need a module: model files store import paths
    monkeypatch.setitem(sys.modules, module.__name__, module)
    code = compile(script, str(REPO_ROOT / "docs" / "sdk.md"), "exec")
    exec(code, module.__dict__)
    assert (tmp_path / "one_step_ac.zip").is_file()


# CONTRIBUTING.md ------------------------------------------------------------------------------------
@dataclass
class Walkthrough:
    venv: PluginVenv
    root: Path
    cwd: Path
    outputs: list[tuple[Block, str]] = field(default_factory=list)

    @functools.cached_property
    def has_build(self) -> bool:
        probe = "import importlib.util; print(importlib.util.find_spec('build') is not None)"
        return self.venv.run(["python", "-c", probe], cwd=self.root).stdout.strip() == "True"

    def bash(self, block: Block) -> None:
        code = re.sub(r"^(?:python -m )?pip install\b", OFFLINE_PIP, block.code, flags=re.MULTILINE)
        if not self.has_build:
            code = re.sub(
                r"^python -m build\s*$",
                f"{OFFLINE_PIP.replace(' install ', ' wheel ')} --no-deps -w dist .",
                code,
                flags=re.MULTILINE,
            )
        state = self.root / ".cwd"
        script = f"set -euo pipefail\ncd {self.cwd}\n{code}\npwd > {state}\n"
        done = self.venv.run(script, cwd=self.cwd, shell=True, timeout=600, extra_env={"COLUMNS": "200"})
        self.cwd = Path(state.read_text().strip())
        self.outputs.append((block, done.stdout))

    def write(self, block: Block) -> None:
        assert block.path is not None
        repo_file = REPO_ROOT / block.path
        if "/" in block.path and repo_file.is_file():
            quoted_matches(block, repo_file)
            return
        target = self.cwd / block.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body if block.lang == "toml" else block.code)
        if block.lang == "toml":
            check_pyproject(tomllib.loads(block.body), block)

    def python(self, block: Block) -> None:
        script = self.cwd / f"block_{block.line}.py"
        script.write_text(block.code)
        done = self.venv.run(["python", str(script)], cwd=self.cwd, timeout=600)
        self.outputs.append((block, done.stdout))


def quoted_matches(block: Block, repo_file: Path) -> None:
    """A block that quotes a repository file must still say what the file says."""
    if block.lang == "toml":
        quoted, actual = tomllib.loads(block.body), tomllib.loads(repo_file.read_text())
        assert_subset(quoted, actual, f"{block.where} ({block.path})")
    else:
        assert textwrap.dedent(block.body).strip() in repo_file.read_text(), (
            f"{block.where} quotes {block.path}, which no longer contains it"
        )


def assert_subset(quoted: object, actual: object, where: str) -> None:
    if isinstance(quoted, dict):
        assert isinstance(actual, dict), where
        for key, value in quoted.items():
            assert key in actual, f"{where}: {key!r} is not in the file"
            assert_subset(value, actual[key], f"{where}.{key}")
    else:
        assert quoted == actual, f"{where}: {quoted!r} != {actual!r}"


def check_pyproject(data: dict, block: Block) -> None:
    project = data["project"]
    name = project["name"]
    assert name.startswith("lit-sb3-"), f"{block.where}: name distributions lit-sb3-<name>"
    assert any(re.fullmatch(r"lit-sb3-core>=0\.\d+,<0\.\d+", dep) for dep in project["dependencies"])
    entry_points = project["entry-points"]["lit_sb3"]
    package = name.replace("-", "_")
    assert all(value.startswith(f"{package}.") for value in entry_points.values()), entry_points


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Walkthrough]:
    venv = shared_plugin_venv(tmp_path_factory)
    root = tmp_path_factory.mktemp("contributing")
    run = Walkthrough(venv, root, root)
    for block in blocks(REPO_ROOT / "CONTRIBUTING.md"):
        if block.not_run or block.lang == "text":
            continue
        if block.path is not None:
            run.write(block)
        elif block.lang == "bash":
            run.bash(block)
        elif block.lang == "python":
            run.python(block)
        else:
            raise AssertionError(f"{block.where} has no file header and cannot be run")
    yield run


def output_of(run: Walkthrough, command: str) -> str:
    return next(out for block, out in run.outputs if command in block.code)


def test_the_walkthrough_builds_an_installed_plugin(walkthrough: Walkthrough) -> None:
    project = walkthrough.root / "lit-sb3-vpg"
    assert walkthrough.cwd == project
    row = next(
        line for line in output_of(walkthrough, "lit-sb3 algos").splitlines() if line.split()[:1] == ["vpg"]
    )
    assert row.split()[:4] == ["vpg", "VPG", "vpg", "lit-sb3-vpg"], row


def test_the_walkthrough_plugin_passes_the_conformance_kit(walkthrough: Walkthrough) -> None:
    from lit_sb3_core.testing import AlgorithmConformance

    summary = output_of(walkthrough, "python -m pytest").strip().splitlines()[-1]
    assert re.fullmatch(rf"{len(AlgorithmConformance.check_names())} passed in .*", summary), summary


def test_the_users_snippet_trained_and_saved_a_model(walkthrough: Walkthrough) -> None:
    assert (walkthrough.root / "lit-sb3-vpg" / "vpg_cartpole.zip").is_file()


def test_the_built_wheel_declares_the_entry_point(walkthrough: Walkthrough) -> None:
    (wheel,) = (walkthrough.root / "lit-sb3-vpg" / "dist").glob("lit_sb3_vpg-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        entry_points = archive.read("lit_sb3_vpg-0.1.0.dist-info/entry_points.txt").decode()
    assert "[lit_sb3]\nvpg = lit_sb3_vpg._plugin" in entry_points
    assert {"lit_sb3_vpg/vpg.py", "lit_sb3_vpg/_plugin.py", "lit_sb3_vpg/py.typed"} <= set(names)
