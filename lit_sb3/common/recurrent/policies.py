"""``sb3_contrib.common.recurrent.policies``: the LSTM actor-critic policies with sb3-contrib's signature."""

from __future__ import annotations

from lit_sb3._sb3_style import RECURRENT_ORDER, sb3_signature
from lit_sb3_ppo_recurrent import policies as _plugin

__all__ = [
    "RecurrentActorCriticCnnPolicy",
    "RecurrentActorCriticPolicy",
    "RecurrentMultiInputActorCriticPolicy",
]

RecurrentActorCriticPolicy = sb3_signature(
    _plugin.RecurrentActorCriticPolicy, RECURRENT_ORDER, "RecurrentActorCriticPolicy", __name__
)
RecurrentActorCriticCnnPolicy = sb3_signature(
    _plugin.RecurrentActorCriticCnnPolicy, RECURRENT_ORDER, "RecurrentActorCriticCnnPolicy", __name__
)
RecurrentMultiInputActorCriticPolicy = sb3_signature(
    _plugin.RecurrentMultiInputActorCriticPolicy,
    RECURRENT_ORDER,
    "RecurrentMultiInputActorCriticPolicy",
    __name__,
)
