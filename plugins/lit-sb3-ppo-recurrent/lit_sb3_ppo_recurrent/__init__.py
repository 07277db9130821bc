"""lit-sb3-ppo-recurrent: PPO with LSTM policies. Classes are imported lazily (torch loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "CnnLstmPolicy",
    "MaskVelocityWrapper",
    "MlpLstmPolicy",
    "MultiInputLstmPolicy",
    "RNNStates",
    "RecurrentActorCriticPolicy",
    "RecurrentPPO",
]

_LOCATIONS = {
    "RecurrentPPO": "lit_sb3_ppo_recurrent.ppo_recurrent",
    "MlpLstmPolicy": "lit_sb3_ppo_recurrent.policies",
    "CnnLstmPolicy": "lit_sb3_ppo_recurrent.policies",
    "MultiInputLstmPolicy": "lit_sb3_ppo_recurrent.policies",
    "RecurrentActorCriticPolicy": "lit_sb3_ppo_recurrent.policies",
    "RNNStates": "lit_sb3_ppo_recurrent.policies",
    "MaskVelocityWrapper": "lit_sb3_ppo_recurrent.envs",
}


def __getattr__(name: str) -> Any:
    if name in _LOCATIONS:
        import importlib

        return getattr(importlib.import_module(_LOCATIONS[name]), name)
    raise AttributeError(f"module 'lit_sb3_ppo_recurrent' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
