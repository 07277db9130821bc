"""``sb3_contrib.common.maskable.policies``: the maskable actor-critic policies with sb3-contrib's signature."""

from __future__ import annotations

from lit_sb3._sb3_style import MASKABLE_ORDER, sb3_signature
from lit_sb3_ppo_mask import policies as _plugin

__all__ = [
    "MaskableActorCriticCnnPolicy",
    "MaskableActorCriticPolicy",
    "MaskableMultiInputActorCriticPolicy",
]

MaskableActorCriticPolicy = sb3_signature(
    _plugin.MaskableActorCriticPolicy, MASKABLE_ORDER, "MaskableActorCriticPolicy", __name__
)
MaskableActorCriticCnnPolicy = sb3_signature(
    _plugin.MaskableActorCriticCnnPolicy, MASKABLE_ORDER, "MaskableActorCriticCnnPolicy", __name__
)
MaskableMultiInputActorCriticPolicy = sb3_signature(
    _plugin.MaskableMultiInputActorCriticPolicy,
    MASKABLE_ORDER,
    "MaskableMultiInputActorCriticPolicy",
    __name__,
)
