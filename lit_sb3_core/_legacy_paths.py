"""Import paths that moved, kept working for one release with a DeprecationWarning that names the new home.

0.1 had a flat core (``lit_sb3_core.policies``, ``lit_sb3_core.off_policy``, ...); 0.2 layers it into
sub-packages and gives plugin authors one surface, :mod:`lit_sb3_core.sdk` (``MOVED_MODULES``, gone in 0.3).
0.2 also cuts ``engine/`` by role into ``envs/`` (the environment stack), ``sb3/`` (everything SB3-shaped) and
``engine/`` (Lightning), and renames modules whose basename was taken twice (``MOVED_BY_ENGINE_CUT``: the
paths from before the cut, kept a release longer, gone in 0.4). A finder on ``sys.meta_path`` answers the
old module names with the new modules, so a plugin written against an older release (and a model file that
names ``lit_sb3_core.torch_layers:NatureCNN``) still works.
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

__all__ = ["MOVED_BY_ENGINE_CUT", "MOVED_MODULES", "install"]

# old module -> the modules that now hold its names (searched in order)
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "lit_sb3_core.algorithms": ("lit_sb3_core.sdk.algorithm", "lit_sb3_core.sdk.on_policy"),
    "lit_sb3_core.on_policy": ("lit_sb3_core.sdk.on_policy",),
    "lit_sb3_core.off_policy": ("lit_sb3_core.sdk.off_policy",),
    "lit_sb3_core.callbacks": ("lit_sb3_core.sb3.callbacks",),
    "lit_sb3_core.policies": ("lit_sb3_core.nets.actor_critic",),
    "lit_sb3_core.off_policy_policies": ("lit_sb3_core.nets.off_policy_policies",),
    "lit_sb3_core.torch_layers": ("lit_sb3_core.nets.torch_layers",),
    "lit_sb3_core.distributions": ("lit_sb3_core.nets.distributions",),
    "lit_sb3_core.buffers": ("lit_sb3_core.data.rollout_buffer",),
    "lit_sb3_core.replay_buffers": ("lit_sb3_core.data.replay_buffer",),
    "lit_sb3_core.noise": ("lit_sb3_core.data.noise",),
    "lit_sb3_core.normalization": ("lit_sb3_core.data.normalization",),
    "lit_sb3_core.schedules": ("lit_sb3_core.foundation.schedules",),
    "lit_sb3_core.spaces": ("lit_sb3_core.foundation.spaces",),
}

# 0.2 module -> the module that holds its names since 0.3 (issue 23: the engine cut by role)
MOVED_BY_ENGINE_CUT: dict[str, str] = {
    "lit_sb3_core.engine.vector_envs": "lit_sb3_core.envs.vector_envs",
    "lit_sb3_core.engine.envs": "lit_sb3_core.envs.make",
    "lit_sb3_core.engine.guards": "lit_sb3_core.envs.guards",
    "lit_sb3_core.engine.atari": "lit_sb3_core.envs.atari",
    "lit_sb3_core.engine.envpool_env": "lit_sb3_core.envs.envpool_env",
    "lit_sb3_core.engine.episodes": "lit_sb3_core.envs.episodes",
    "lit_sb3_core.engine.sb3_vec_env": "lit_sb3_core.sb3.vec_env",
    "lit_sb3_core.engine.vec_env_views": "lit_sb3_core.sb3.vec_env_views",
    "lit_sb3_core.engine.sb3_files": "lit_sb3_core.sb3.model_zip",
    "lit_sb3_core.engine.sb3_logger": "lit_sb3_core.sb3.logger",
    "lit_sb3_core.sdk.sb3_files": "lit_sb3_core.sb3.file_hooks",
    "lit_sb3_core.sdk.sb3_attributes": "lit_sb3_core.sb3.attributes",
    "lit_sb3_core.sdk.sb3_logging": "lit_sb3_core.sb3.model_logger",
    "lit_sb3_core.engine.export": "lit_sb3_core.engine.exporters",
    "lit_sb3_core.nets.off_policy": "lit_sb3_core.nets.off_policy_policies",
    "lit_sb3_core.foundation.names": "lit_sb3_core.foundation.first_party",
    "lit_sb3_core.sdk.callbacks": "lit_sb3_core.sb3.callbacks",
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, targets: Sequence[str], message: str) -> None:
        self.targets = tuple(targets)
        self.message = message

    def create_module(self, spec: Any) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        warnings.warn(self.message.format(name=module.__name__), DeprecationWarning, stacklevel=2)
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
        if fullname in MOVED_BY_ENGINE_CUT:
            new = MOVED_BY_ENGINE_CUT[fullname]
            message = (
                f"{{name}} was moved by lit-sb3 0.2's engine cut and this path goes away in 0.4: import from {new} "
                "(plugins: from lit_sb3_core.sdk)."
            )
            return importlib.util.spec_from_loader(fullname, _MovedModuleLoader((new,), message))
        targets = MOVED_MODULES.get(fullname)
        if targets is None:
            return None
        message = (
            "{name} was moved in lit-sb3 0.2 and this path goes away in 0.3: import from lit_sb3_core.sdk "
            f"(its implementation now lives in {' and '.join(targets)})."
        )
        return importlib.util.spec_from_loader(fullname, _MovedModuleLoader(targets, message))


_FINDER = _MovedModuleFinder()


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (``import lit_sb3_core`` does this)."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_FINDER)
