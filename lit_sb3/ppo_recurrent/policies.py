"""``sb3_contrib.ppo_recurrent.policies``: the LSTM actor-critic policies (sb3-contrib's constructor signature)."""

from __future__ import annotations

from lit_sb3.common.recurrent.policies import (
    RecurrentActorCriticCnnPolicy,
    RecurrentActorCriticPolicy,
    RecurrentMultiInputActorCriticPolicy,
)

__all__ = ["CnnLstmPolicy", "MlpLstmPolicy", "MultiInputLstmPolicy"]

MlpLstmPolicy = RecurrentActorCriticPolicy
CnnLstmPolicy = RecurrentActorCriticCnnPolicy
MultiInputLstmPolicy = RecurrentMultiInputActorCriticPolicy
