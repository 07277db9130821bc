"""WideMlpPolicy passes the policy conformance kit, and is the network it says it is."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from lit_sb3_core import make_algo
from lit_sb3_core.testing import PolicyConformance


class TestWideMlpPolicyConformance(PolicyConformance):
    algo_name = "ppo"
    policy_alias = "WideMlpPolicy"
    distribution = "lit-sb3-wide-policy"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}
    policy_kwargs: ClassVar[dict[str, Any]] = {"width": 32}


def test_width_and_heads_come_from_policy_kwargs() -> None:
    model = make_algo("ppo", policy="WideMlpPolicy", env="CartPole-v1", policy_kwargs={"width": 48})
    linear, norm = model.policy.features_extractor.net[1], model.policy.features_extractor.net[2]
    assert (linear.in_features, linear.out_features) == (4, 48)
    assert isinstance(norm, nn.LayerNorm)
    assert model.policy.mlp_extractor.latent_dim_pi == 64  # the default head: dict(pi=[64], vf=[64])
    assert model.hparams["policy_kwargs"] == {"width": 48}
