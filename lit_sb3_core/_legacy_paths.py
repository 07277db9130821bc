"""Import paths of lit-sb3 0.1 that moved in 0.2, kept working for one release with a DeprecationWarning.

0.1 had a flat core (``lit_sb3_core.policies``, ``lit_sb3_core.off_policy``, ...); 0.2 layers it into
sub-packages and gives plugin authors one surface, :mod:`lit_sb3_core.sdk`. A finder on ``sys.meta_path``
answers the old module names with the new modules, so a plugin written against 0.1 (and a 0.1 model file
that names ``lit_sb3_core.torch_layers:NatureCNN``) still works. Delete this module in 0.3.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["MOVED_MODULES", "install"]

# old module -> the modules that now hold its names (searched in order)
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "lit_sb3_core.algorithms": ("lit_sb3_core.sdk.algorithm", "lit_sb3_core.sdk.on_policy"),
    "lit_sb3_core.on_policy": ("lit_sb3_core.sdk.on_policy",),
    "lit_sb3_core.off_policy": ("lit_sb3_core.sdk.off_policy",),
    "lit_sb3_core.callbacks": ("lit_sb3_core.sdk.callbacks",),
    "lit_sb3_core.policies": ("lit_sb3_core.nets.actor_critic",),
    "lit_sb3_core.off_policy_policies": ("lit_sb3_core.nets.off_policy",),
    "lit_sb3_core.torch_layers": ("lit_sb3_core.nets.torch_layers",),
    "lit_sb3_core.distributions": ("lit_sb3_core.nets.distributions",),
    "lit_sb3_core.buffers": ("lit_sb3_core.data.rollout_buffer",),
    "lit_sb3_core.replay_buffers": ("lit_sb3_core.data.replay_buffer",),
    "lit_sb3_core.noise": ("lit_sb3_core.data.noise",),
    "lit_sb3_core.normalization": ("lit_sb3_core.data.normalization",),
    "lit_sb3_core.schedules": ("lit_sb3_core.foundation.schedules",),
    "lit_sb3_core.spaces": ("lit_sb3_core.foundation.spaces",),
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, targets: Sequence[str]) -> None:
        self.targets = tuple(targets)

    def create_module(self, spec: Any) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        warnings.warn(
            f"{module.__name__} was moved in lit-sb3 0.2 and this path goes away in 0.3: import from "
            f"lit_sb3_core.sdk (its implementation now lives in {' and '.join(self.targets)}).",
            DeprecationWarning,
            stacklevel=2,
        )
        names: dict[str, Any] = {}
        public: list[str] = []
        for target in reversed(self.targets):  # the first target wins a name both define
            moved = importlib.import_module(target)
            names.update({k: v for k, v in vars(moved).items() if not k.startswith("__")})
            public = [*getattr(moved, "__all__", []), *public]
        module.__dict__.update(names)
        module.__all__ = list(dict.fromkeys(public))  # type: ignore[attr-defined]


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        targets = MOVED_MODULES.get(fullname)
        if targets is None:
            return None
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(targets))


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import lit_sb3_core`` does this)."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_FINDER)
