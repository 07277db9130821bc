"""Compatibility facade: ``from lit_sb3 import PPO, RLTrainer, RLEnvDataModule, make_algo``.

Everything :mod:`lit_sb3_core` exports is re-exported, and Stable-Baselines3 class names (``PPO``,
``SAC``, ``MaskablePPO``, ..., and ``HerReplayBuffer``) resolve through the plugin registry. All of it is
lazy (PEP 562): importing this package loads neither torch, lightning, gymnasium nor the plugins; a name
loads on first use. A class whose plugin is not installed raises ``ImportError`` with the ``pip install``
line.
"""

from __future__ import annotations

from typing import Any

import lit_sb3_core
from lit_sb3_core import __version__ as __version__
from lit_sb3_core.foundation.first_party import FIRST_PARTY, SB3_BUFFER_CLASS_NAMES, SB3_CLASS_NAMES

# Built from core's list so the two never drift apart; a test checks every name resolves.
__all__ = [*lit_sb3_core.__all__, *SB3_CLASS_NAMES, *SB3_BUFFER_CLASS_NAMES]


def HER(*args: Any, **kwargs: Any) -> Any:
    """SB3 < 1.1's ``HER`` algorithm, since replaced by ``HerReplayBuffer``: says so and how to use it."""
    raise ImportError(
        "HER is not an algorithm any more (since Stable-Baselines3 1.1): it is a replay buffer, used as "
        "SAC('MultiInputPolicy', env, replay_buffer_class=HerReplayBuffer). See the HER plugin's "
        "documentation (plugins/lit-sb3-her/README.md) or SB3's at https://stable-baselines3.readthedocs.io/"
    )


def __getattr__(name: str) -> Any:
    if name in lit_sb3_core.__all__:
        value = getattr(lit_sb3_core, name)
        globals()[name] = value
        return value
    if name in SB3_BUFFER_CLASS_NAMES:
        from lit_sb3_core.errors import UnknownNameError
        from lit_sb3_core.registry.registry import get_buffer_class

        registry_name = SB3_BUFFER_CLASS_NAMES[name]
        try:
            return get_buffer_class(registry_name)
        except UnknownNameError:
            distribution = FIRST_PARTY[registry_name]
            raise ImportError(
                f"{name} is provided by the plugin {distribution}, which is not installed: "
                f"pip install {distribution}"
            ) from None
    if name in SB3_CLASS_NAMES or name[:1].isupper():
        from lit_sb3_core.errors import MissingPluginError
        from lit_sb3_core.registry.registry import resolve_sb3_class_name

        try:
            # Not cached: the registry caches the class, and stays the single source of truth.
            return resolve_sb3_class_name(name)
        except MissingPluginError as error:
            if name in SB3_CLASS_NAMES:
                raise
            raise AttributeError(f"module 'lit_sb3' has no attribute {name!r}. {error}") from None
    raise AttributeError(f"module 'lit_sb3' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(__all__))
