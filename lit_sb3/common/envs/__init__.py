"""SB3's and sb3-contrib's sample environments (``common.envs``), for tests and examples."""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "IdentityEnv": "lit_sb3.common.envs.identity_env",
    "IdentityEnvBox": "lit_sb3.common.envs.identity_env",
    "IdentityEnvMultiBinary": "lit_sb3.common.envs.identity_env",
    "IdentityEnvMultiDiscrete": "lit_sb3.common.envs.identity_env",
    "FakeImageEnv": "lit_sb3.common.envs.identity_env",
    "SimpleMultiObsEnv": "lit_sb3.common.envs.multi_input_envs",
    "BitFlippingEnv": "lit_sb3.common.envs.bit_flipping_env",
    "InvalidActionEnvDiscrete": "lit_sb3.common.envs.invalid_actions_env",
    "InvalidActionEnvMultiDiscrete": "lit_sb3.common.envs.invalid_actions_env",
    "InvalidActionEnvMultiBinary": "lit_sb3.common.envs.invalid_actions_env",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lit_sb3.common.envs' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
