"""``stable_baselines3.common.policies``: the actor-critic policies with SB3's constructor signature.

``ActorCriticPolicy(observation_space, action_space, lr_schedule, net_arch=..., ...)`` can be subclassed as
SB3's documentation shows (override ``_build_mlp_extractor``, read ``self.features_dim``); it is lit-sb3's
``ActorCriticPolicy`` underneath. ``BasePolicy``/``BaseModel`` are the base every lit-sb3 policy shares
(``predict``, ``save``/``load``, ``set_training_mode``, ``obs_to_tensor``).
"""

from __future__ import annotations

from lit_sb3._sb3_style import ACTOR_CRITIC_ORDER, sb3_signature
from lit_sb3_core.nets import actor_critic as _core
from lit_sb3_core.nets.off_policy_policies import ContinuousCritic
from lit_sb3_core.nets.policy_api import PolicyAPI

__all__ = [
    "ActorCriticCnnPolicy",
    "ActorCriticPolicy",
    "BaseModel",
    "BasePolicy",
    "ContinuousCritic",
    "MultiInputActorCriticPolicy",
]

BaseModel = BasePolicy = PolicyAPI
ActorCriticPolicy = sb3_signature(_core.ActorCriticPolicy, ACTOR_CRITIC_ORDER, "ActorCriticPolicy", __name__)
ActorCriticCnnPolicy = sb3_signature(
    _core.ActorCriticCnnPolicy, ACTOR_CRITIC_ORDER, "ActorCriticCnnPolicy", __name__
)
MultiInputActorCriticPolicy = sb3_signature(
    _core.MultiInputActorCriticPolicy, ACTOR_CRITIC_ORDER, "MultiInputActorCriticPolicy", __name__
)
