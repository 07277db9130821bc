"""``stable_baselines3.common.callbacks``: SB3's callbacks, called after every environment step.

They are Lightning callbacks too (``lit_sb3_core.sb3.callbacks``), so they also go to
``RLTrainer(callbacks=[...])``. ``BaseCallback`` is ``lit_sb3_core.sdk.RLCallback``.
"""

from __future__ import annotations

from lit_sb3_core.sb3.callbacks import (
    BaseCallback,
    CallbackList,
    CheckpointCallback,
    ConvertCallback,
    EvalCallback,
    EventCallback,
    EveryNTimesteps,
    LogEveryNTimesteps,
    ProgressBarCallback,
    StopTrainingOnMaxEpisodes,
    StopTrainingOnNoModelImprovement,
    StopTrainingOnRewardThreshold,
)

__all__ = [
    "BaseCallback",
    "CallbackList",
    "CheckpointCallback",
    "ConvertCallback",
    "EvalCallback",
    "EventCallback",
    "EveryNTimesteps",
    "LogEveryNTimesteps",
    "ProgressBarCallback",
    "StopTrainingOnMaxEpisodes",
    "StopTrainingOnNoModelImprovement",
    "StopTrainingOnRewardThreshold",
]
