"""SB3's ``common.vec_env.base_vec_env``: the ``VecEnv`` API (defined in lit-sb3's core, which accepts any
``VecEnv`` wherever it takes an environment)."""

from __future__ import annotations

from typing import Any

import cloudpickle
from gymnasium.vector.utils import CloudpickleWrapper as _GymnasiumCloudpickleWrapper

from lit_sb3_core.sb3.vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
    VecEnvWrapper,
    tile_images,
)

__all__ = [
    "CloudpickleWrapper",
    "VecEnv",
    "VecEnvIndices",
    "VecEnvObs",
    "VecEnvStepReturn",
    "VecEnvWrapper",
    "tile_images",
]


class CloudpickleWrapper(_GymnasiumCloudpickleWrapper):
    """Gymnasium's ``CloudpickleWrapper`` (lambdas and closures survive pickling to worker processes), with
    SB3's attribute name ``var`` for the wrapped object."""

    def __init__(self, var: Any) -> None:
        super().__init__(var)

    @property
    def var(self) -> Any:
        return self.fn

    def __getstate__(self) -> bytes:
        return cloudpickle.dumps(self.fn)
