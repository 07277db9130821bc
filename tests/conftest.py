"""Shared fixtures: a fresh plugin registry, and fake plugin distributions installed on a temporary path."""

from __future__ import annotations

import importlib
import importlib.metadata
import itertools
import os
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from lit_sb3_core.registry import plugins as _plugins

REPO_ROOT = Path(__file__).resolve().parents[1]
_PLUGIN_ENV = (_plugins.ALLOW_ENV, _plugins.BLOCK_ENV, _plugins.TRACE_ENV)
_counter = itertools.count()


@pytest.fixture
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Forget discovery before and after the test, with the plugin environment variables unset."""
    for variable in _PLUGIN_ENV:
        monkeypatch.delenv(variable, raising=False)
    _plugins._reset_for_tests()
    yield
    _plugins._reset_for_tests()


class FakePlugins:
    """Writes real ``*.dist-info`` directories with ``lit_sb3`` entry points, plus their modules.

    ``MODULE`` in a plugin's source is replaced by its (unique) module name, so targets can point to
    classes defined in the same file: ``registry.add("alpha", "MODULE:Alpha")``.
    """

    ALPHA = """
from lit_sb3_core.hookspecs import hookimpl

class Alpha:
    def __init__(self, **kwargs):
        self.kwargs = kwargs

@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add("alpha", "MODULE:Alpha", description="The first fake algorithm")
"""
    """Source of a well-behaved plugin registering algorithm ``alpha`` (class ``Alpha``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.modules: list[str] = []

    def add(
        self,
        name: str,
        source: str = "",
        *,
        requires: Sequence[str] = ("lit-sb3-core>=0.2,<0.3",),
        distribution: str | None = None,
        version: str = "0.1.0",
        entry_point: str | None = None,
    ) -> str:
        """Install plugin ``name`` (entry-point name); returns its module name."""
        module = f"lit_sb3_fake_{name}_{next(_counter)}"
        self.modules.append(module)
        distribution = distribution or f"lit-sb3-{name}"
        (self.root / f"{module}.py").write_text(textwrap.dedent(source).replace("MODULE", module))
        dist_info = self.root / f"{module}-{version}.dist-info"
        dist_info.mkdir()
        metadata = ["Metadata-Version: 2.1", f"Name: {distribution}", f"Version: {version}"]
        metadata += [f"Requires-Dist: {requirement}" for requirement in requires]
        (dist_info / "METADATA").write_text("\n".join(metadata) + "\n")
        (dist_info / "entry_points.txt").write_text(f"[lit_sb3]\n{name} = {entry_point or module}\n")
        importlib.invalidate_caches()
        return module

    def subprocess_env(self) -> dict[str, str]:
        """Environment for a child Python that sees the source tree and these plugins."""
        return _subprocess_env(self.root)


@pytest.fixture
def fake_plugins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> Iterator[FakePlugins]:
    """A directory on ``sys.path`` to install fake plugin distributions into.

    Discovery sees only the entry points installed here (and core), not the plugins installed in the
    environment, so tests do not depend on what else is installed.
    """
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    find_all = _plugins._entry_points
    monkeypatch.setattr(
        _plugins, "_entry_points", lambda: [point for point in find_all() if _installed_under(point, root)]
    )
    fake = FakePlugins(root)
    yield fake
    for module in fake.modules:
        sys.modules.pop(module, None)


def _installed_under(point: importlib.metadata.EntryPoint, root: Path) -> bool:
    return point.dist is not None and Path(str(point.dist.locate_file(""))) == root


@pytest.fixture
def child_env() -> dict[str, str]:
    """Environment for a child Python that sees the source tree, without plugin variables."""
    return _subprocess_env()


def _subprocess_env(*paths: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _PLUGIN_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), *map(str, paths)])
    return env


@pytest.fixture(autouse=True)
def _one_torch_thread() -> None:
    """Small networks train fastest, and most reproducibly, on one thread (and CI has two cores)."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)
