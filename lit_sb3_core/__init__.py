"""lit-sb3 core: the trainer, the environment datamodule, the registry and the SDK for algorithm plugins.

Everything here is exported lazily (PEP 562), so ``import lit_sb3_core`` stays free of torch, lightning and
gymnasium: plugin discovery and ``lit-sb3 algos`` must be cheap, and the heavy modules load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from lit_sb3_core import _legacy_paths
from lit_sb3_core._version import __version__

# Moved import paths keep working for a release: 0.1 paths until 0.3, paths from before 0.2's engine cut until 0.4.
_legacy_paths.install()

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # engine
    "RLTrainer": "lit_sb3_core.engine.trainer",
    "RLEnvDataModule": "lit_sb3_core.engine.datamodule",
    "evaluate_policy": "lit_sb3_core.engine.evaluation",
    "load": "lit_sb3_core.sdk.loading",
    "tuned_hyperparameters": "lit_sb3_core.engine.tuned",
    # registry
    "make_algo": "lit_sb3_core.registry.registry",
    "get_algo_class": "lit_sb3_core.registry.registry",
    "algo_spec": "lit_sb3_core.registry.registry",
    "list_algos": "lit_sb3_core.registry.registry",
    "register_algo": "lit_sb3_core.registry.registry",
    "make_callback": "lit_sb3_core.registry.registry",
    "list_callbacks": "lit_sb3_core.registry.registry",
    "list_plugins": "lit_sb3_core.registry.registry",
    "get_buffer_class": "lit_sb3_core.registry.registry",
    "list_buffers": "lit_sb3_core.registry.registry",
    "AlgoSpec": "lit_sb3_core.registry.registry",
    "PluginInfo": "lit_sb3_core.registry.plugins",
    # plugin authoring
    "hookimpl": "lit_sb3_core.hookspecs",
    "RLAlgorithm": "lit_sb3_core.sdk.algorithm",
    "OnPolicyAlgorithm": "lit_sb3_core.sdk.on_policy",
    "ActorCriticPolicy": "lit_sb3_core.nets.actor_critic",
    "OffPolicyAlgorithm": "lit_sb3_core.sdk.off_policy",
    "OffPolicyPolicy": "lit_sb3_core.nets.off_policy_policies",
    "ReplayBuffer": "lit_sb3_core.data.replay_buffer",
    "DictReplayBuffer": "lit_sb3_core.data.replay_buffer",
    "NormalActionNoise": "lit_sb3_core.data.noise",
    "OrnsteinUhlenbeckActionNoise": "lit_sb3_core.data.noise",
    # SB3's callbacks
    "EvalCallback": "lit_sb3_core.sb3.callbacks",
    "CheckpointCallback": "lit_sb3_core.sb3.callbacks",
    "StopTrainingOnRewardThreshold": "lit_sb3_core.sb3.callbacks",
    "StopTrainingOnMaxEpisodes": "lit_sb3_core.sb3.callbacks",
    "StopTrainingOnNoModelImprovement": "lit_sb3_core.sb3.callbacks",
    "EveryNTimesteps": "lit_sb3_core.sb3.callbacks",
    "LogEveryNTimesteps": "lit_sb3_core.sb3.callbacks",
    "CallbackList": "lit_sb3_core.sb3.callbacks",
    # errors
    "LitSb3Error": "lit_sb3_core.errors",
    # The ``lit-sb3`` command as a function: ``cli_main(["fit", "--config", "run.yaml"])`` returns its status.
    "cli_main": "lit_sb3_core.cli.main:main",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'lit_sb3_core' has no attribute {name!r}")
    module, _, attribute = module.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
