"""``stable_baselines3.common.type_aliases``: SB3's type names, and ``TrainFreq`` / ``TrainFrequencyUnit``.

``TrainFreq(4, TrainFrequencyUnit.STEP)`` is accepted as ``train_freq`` (the unit is a string enum, so it is
stored as ``"step"``). The sample tuples are lit-sb3's (``RolloutBatch``, ``ReplaySamples`` and their Dict
subclasses); their fields are named as lit-sb3's buffers return them.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, NamedTuple, Protocol, SupportsFloat, Union

import gymnasium as gym
import numpy as np
import torch as th

from lit_sb3_core.data.replay_buffer import DictReplaySamples, ReplaySamples
from lit_sb3_core.data.rollout_buffer import RolloutBatch
from lit_sb3_core.sb3.buffers import DictRolloutBatch
from lit_sb3_core.sb3.own_loop import RolloutReturn
from lit_sb3_core.sb3.vec_env import VecEnv

__all__ = [
    "AtariResetReturn",
    "AtariStepReturn",
    "DictReplayBufferSamples",
    "DictRolloutBufferSamples",
    "GymEnv",
    "GymObs",
    "GymResetReturn",
    "GymStepReturn",
    "MaybeCallback",
    "OptimizerStateDict",
    "PolicyPredictor",
    "PyTorchObs",
    "ReplayBufferSamples",
    "RolloutBufferSamples",
    "RolloutReturn",
    "Schedule",
    "TensorDict",
    "TrainFreq",
    "TrainFrequencyUnit",
]

GymEnv = Union[gym.Env, VecEnv]  # noqa: UP007 -- a runtime alias, as SB3 defines it
GymObs = Union[tuple, dict[str, Any], np.ndarray, int]  # noqa: UP007
GymResetReturn = tuple[GymObs, dict]
AtariResetReturn = tuple[np.ndarray, dict[str, Any]]
GymStepReturn = tuple[GymObs, float, bool, bool, dict]
AtariStepReturn = tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]
TensorDict = dict[str, th.Tensor]
OptimizerStateDict = dict[str, Any]
MaybeCallback = Any  # None, a callable, a callback or a list of callbacks
PyTorchObs = Union[th.Tensor, TensorDict]  # noqa: UP007
Schedule = Callable[[float], float]
RolloutBufferSamples = RolloutBatch
DictRolloutBufferSamples = DictRolloutBatch
ReplayBufferSamples = ReplaySamples
DictReplayBufferSamples = DictReplaySamples


class TrainFrequencyUnit(StrEnum):
    STEP = "step"
    EPISODE = "episode"


class TrainFreq(NamedTuple):
    frequency: int
    unit: TrainFrequencyUnit


class PolicyPredictor(Protocol):
    """Anything with SB3's ``predict`` (a model or a policy)."""

    def predict(
        self,
        observation: np.ndarray | dict[str, np.ndarray],
        state: tuple[np.ndarray, ...] | None = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, tuple[np.ndarray, ...] | None]: ...
