"""SB3's ``common.vec_env``: the ``VecEnv`` API and its wrappers, over gymnasium's vector envs.

Names load on first use, so ``from lit_sb3.common.vec_env import DummyVecEnv`` does not import torch
(``VecNormalize`` and the image wrappers do).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "AsyncEval": "lit_sb3.common.vec_env.async_eval",
    "VecEnv": "lit_sb3.common.vec_env.base_vec_env",
    "VecEnvWrapper": "lit_sb3.common.vec_env.base_vec_env",
    "CloudpickleWrapper": "lit_sb3.common.vec_env.base_vec_env",
    "DummyVecEnv": "lit_sb3.common.vec_env.dummy_vec_env",
    "SubprocVecEnv": "lit_sb3.common.vec_env.subproc_vec_env",
    "StackedObservations": "lit_sb3.common.vec_env.stacked_observations",
    "VecFrameStack": "lit_sb3.common.vec_env.vec_frame_stack",
    "VecNormalize": "lit_sb3.common.vec_env.vec_normalize",
    "VecTransposeImage": "lit_sb3.common.vec_env.vec_transpose",
    "VecMonitor": "lit_sb3.common.vec_env.vec_monitor",
    "VecCheckNan": "lit_sb3.common.vec_env.vec_check_nan",
    "VecExtractDictObs": "lit_sb3.common.vec_env.vec_extract_dict_obs",
    "VecVideoRecorder": "lit_sb3.common.vec_env.vec_video_recorder",
    "unwrap_vec_wrapper": "lit_sb3.common.vec_env.util",
    "unwrap_vec_normalize": "lit_sb3.common.vec_env.util",
    "is_vecenv_wrapped": "lit_sb3.common.vec_env.util",
    "sync_envs_normalization": "lit_sb3.common.vec_env.util",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lit_sb3.common.vec_env' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
