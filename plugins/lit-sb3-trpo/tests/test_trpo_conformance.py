"""TRPO passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestTRPOConformance(AlgorithmConformance):
    algo_name = "trpo"
    distribution = "lit-sb3-trpo"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "n_steps": 64,
        "batch_size": 32,
        "n_critic_updates": 2,
        "cg_max_steps": 5,
    }
    learn_steps = 256
