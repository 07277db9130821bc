"""``sb3_contrib.ppo_mask.policies``: the maskable actor-critic policies (sb3-contrib's constructor signature)."""

from __future__ import annotations

from lit_sb3.common.maskable.policies import (
    MaskableActorCriticCnnPolicy,
    MaskableActorCriticPolicy,
    MaskableMultiInputActorCriticPolicy,
)

__all__ = ["CnnPolicy", "MlpPolicy", "MultiInputPolicy"]

MlpPolicy = MaskableActorCriticPolicy
CnnPolicy = MaskableActorCriticCnnPolicy
MultiInputPolicy = MaskableMultiInputActorCriticPolicy
