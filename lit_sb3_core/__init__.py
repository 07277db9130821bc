"""lit-sb3 core: the trainer, the environment datamodule, the registry and the SDK for algorithm plugins.

Everything here is exported lazily (PEP 562), so ``import lit_sb3_core`` stays free of torch, lightning and
gymnasium: plugin discovery and ``lit-sb3 algos`` must be cheap, and the heavy modules load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from lit_sb3_core._version import __version__

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # engine
    "RLTrainer": "lit_sb3_core._trainer",
    "RLEnvDataModule": "lit_sb3_core._datamodule",
    "evaluate_policy": "lit_sb3_core._evaluation",
    "load": "lit_sb3_core._model_file",
    "tuned_hyperparameters": "lit_sb3_core._tuned",
    # registry
    "make_algo": "lit_sb3_core._registry",
    "get_algo_class": "lit_sb3_core._registry",
    "algo_spec": "lit_sb3_core._registry",
    "list_algos": "lit_sb3_core._registry",
    "register_algo": "lit_sb3_core._registry",
    "make_callback": "lit_sb3_core._registry",
    "list_callbacks": "lit_sb3_core._registry",
    "list_plugins": "lit_sb3_core._registry",
    "AlgoSpec": "lit_sb3_core._registry",
    "PluginInfo": "lit_sb3_core._plugins",
    # plugin authoring
    "hookimpl": "lit_sb3_core.hookspecs",
    "RLAlgorithm": "lit_sb3_core.algorithms",
    "OnPolicyAlgorithm": "lit_sb3_core.algorithms",
    "ActorCriticPolicy": "lit_sb3_core.policies",
    "OffPolicyAlgorithm": "lit_sb3_core.off_policy",
    "OffPolicyPolicy": "lit_sb3_core.off_policy_policies",
    "ReplayBuffer": "lit_sb3_core.replay_buffers",
    "DictReplayBuffer": "lit_sb3_core.replay_buffers",
    "NormalActionNoise": "lit_sb3_core.noise",
    "OrnsteinUhlenbeckActionNoise": "lit_sb3_core.noise",
    # SB3's callbacks
    "EvalCallback": "lit_sb3_core.callbacks",
    "CheckpointCallback": "lit_sb3_core.callbacks",
    "StopTrainingOnRewardThreshold": "lit_sb3_core.callbacks",
    "StopTrainingOnMaxEpisodes": "lit_sb3_core.callbacks",
    "StopTrainingOnNoModelImprovement": "lit_sb3_core.callbacks",
    "EveryNTimesteps": "lit_sb3_core.callbacks",
    "LogEveryNTimesteps": "lit_sb3_core.callbacks",
    "CallbackList": "lit_sb3_core.callbacks",
    # errors
    "LitSb3Error": "lit_sb3_core.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lit_sb3_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
