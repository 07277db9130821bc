"""The checks every plugin passes, whatever it registers: it is installed, discoverable, cheap and valid.

:class:`PluginConformance` is the base of the algorithm, policy and callback kits. It also enforces the
kit's one rule for subclasses: an inherited check is skipped only by naming it in ``skip`` with a reason.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import subprocess
import sys
from typing import Any, ClassVar

import pytest

__all__ = ["ENTRY_POINT_GROUP", "HEAVY_MODULES", "PluginConformance"]

ENTRY_POINT_GROUP = "lit_sb3"
HEAVY_MODULES = ("torch", "lightning", "gymnasium")
"""What a plugin's entry-point module must not import: every installed plugin is imported on discovery."""


def _canonical(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


class PluginConformance:
    """Inherited checks for any lit-sb3 plugin. Subclasses set the class attributes below.

    Attributes:
        distribution: the plugin's distribution name (``"lit-sb3-ppo"``).
        entry_point: the entry-point name in group ``lit_sb3``; by default the only entry point
            ``distribution`` declares in that group.
        skip: ``{check name: reason}`` for inherited checks that cannot apply to this plugin. A check
            is skipped only with a non-empty reason, and only a check that exists may be named.
    """

    distribution: ClassVar[str] = ""
    entry_point: ClassVar[str | None] = None
    skip: ClassVar[dict[str, str]] = {}
    required_attributes: ClassVar[tuple[str, ...]] = ("distribution",)
    """Attributes a concrete subclass must set (the kits list theirs)."""

    # set-up ---------------------------------------------------------------------------------------------
    @pytest.fixture(autouse=True)
    def _conformance_setup(self, request: pytest.FixtureRequest) -> None:
        self.check_configuration()
        reason = self.skip.get(request.function.__name__)
        if reason:
            pytest.skip(reason)
        import torch

        torch.set_num_threads(1)

    @classmethod
    def check_names(cls) -> list[str]:
        """The inherited and own checks of this class (its ``test_*`` methods)."""
        return sorted(name for name in dir(cls) if name.startswith("test_") and callable(getattr(cls, name)))

    def check_configuration(self) -> None:
        """Refuse a subclass that misses required attributes or skips a check without a (valid) reason."""
        name = type(self).__name__
        missing = [attribute for attribute in self.required_attributes if not getattr(self, attribute, None)]
        if missing:
            raise TypeError(f"{name} must set {', '.join(missing)} (see {type(self).__mro__[1].__name__}).")
        if not isinstance(self.skip, dict):
            raise TypeError(
                f"{name}.skip must be a dict {{check name: reason}}, got {type(self.skip).__name__}."
            )
        checks = self.check_names()
        for check, reason in self.skip.items():
            if check not in checks:
                raise TypeError(
                    f"{name}.skip names {check!r}, which is not a check of {name}; the checks are "
                    f"{', '.join(checks)}."
                )
            if not isinstance(reason, str) or not reason.strip():
                raise TypeError(f"{name}.skip[{check!r}] needs a reason, got {reason!r}.")

    # helpers --------------------------------------------------------------------------------------------
    def default_entry_point(self) -> str | None:
        """The entry-point name when ``entry_point`` is not set (the kits may narrow it)."""
        return None

    def plugin_entry_point(self) -> importlib.metadata.EntryPoint:
        """This plugin's entry point, found among the installed distributions."""
        points = list(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP))
        mine = [
            ep
            for ep in points
            if ep.dist is not None and _canonical(ep.dist.name) == _canonical(self.distribution)
        ]
        name = self.entry_point or self.default_entry_point()
        if name is None:
            if len(mine) == 1:
                return mine[0]
            found = ", ".join(ep.name for ep in mine) or "none"
            raise AssertionError(
                f"{self.distribution} declares {len(mine)} entry points in group {ENTRY_POINT_GROUP!r} "
                f"({found}): {'install it (pip install -e .)' if not mine else 'set entry_point to one'}."
            )
        named = [ep for ep in points if ep.name == name]
        assert named, (
            f"no entry point {name!r} in group {ENTRY_POINT_GROUP!r}: is {self.distribution} installed "
            f"(pip install -e .), and does its pyproject.toml declare [project.entry-points.{ENTRY_POINT_GROUP}] "
            f'{name} = "<package>._plugin"?'
        )
        from_mine = [ep for ep in named if ep in mine]
        origins = sorted({ep.dist.name for ep in named if ep.dist is not None})
        assert from_mine, f"entry point {name!r} comes from {origins}, not from {self.distribution}"
        return from_mine[0]

    def plugin_info(self) -> Any:
        """What discovery recorded for this plugin (``lit_sb3_core.PluginInfo``)."""
        from lit_sb3_core import list_plugins

        name = self.plugin_entry_point().name
        mine = [info for info in list_plugins() if info.name == name]
        assert mine, f"discovery did not find the plugin {name!r} of {self.distribution}"
        return mine[0]

    # discovery ------------------------------------------------------------------------------------------
    def test_entry_point_installed(self) -> None:
        self.plugin_entry_point()

    def test_plugin_loaded_without_errors(self) -> None:
        from lit_sb3_core import list_plugins

        mine = [
            info for info in list_plugins() if _canonical(info.distribution) == _canonical(self.distribution)
        ]
        assert mine, f"{self.distribution} is not among the discovered plugins"
        for info in mine:
            assert info.status == "loaded", f"{info.name}: {info.status}: {info.error}"

    def test_plugin_module_imports_nothing_heavy(self) -> None:
        module = self.plugin_entry_point().module
        code = (
            f"import sys, importlib; importlib.import_module({module!r}); "
            f"print(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        assert out.returncode == 0, f"importing {module} failed:\n{out.stderr}"
        assert out.stdout.strip() == "[]", (
            f"the plugin module {module} imports {out.stdout.strip()}: register import strings "
            "('package.module:Class') and import the classes only in the modules they name."
        )

    def test_hooks_match_specs(self) -> None:
        import pluggy

        from lit_sb3_core import hookspecs

        point = self.plugin_entry_point()
        plugin = point.load()
        specs = {
            name: function
            for name, function in vars(hookspecs).items()
            if hasattr(function, f"{hookspecs.PROJECT_NAME}_spec")
        }
        hooks = {
            name: getattr(plugin, name)
            for name in dir(plugin)
            if name.startswith(f"{hookspecs.PROJECT_NAME}_") and callable(getattr(plugin, name))
        }
        assert hooks, f"{point.value} implements no hook; the hooks are {', '.join(sorted(specs))}"
        unknown = sorted(set(hooks) - set(specs))
        assert not unknown, (
            f"{point.value} implements unknown hook(s) {', '.join(unknown)} (a typo?); the hooks are "
            f"{', '.join(sorted(specs))}"
        )
        for name, hook in hooks.items():
            accepted = set(inspect.signature(specs[name]).parameters)
            extra = sorted(set(inspect.signature(hook).parameters) - accepted)
            assert not extra, (
                f"{point.value}:{name} takes {extra}, which the hook does not pass; it passes {sorted(accepted)}"
            )
        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        manager.register(plugin, name=f"conformance-{point.name}")
        manager.check_pending()
