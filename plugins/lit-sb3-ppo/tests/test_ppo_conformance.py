"""PPO passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestPPOConformance(AlgorithmConformance):
    algo_name = "ppo"
    distribution = "lit-sb3-ppo"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 64, "batch_size": 64, "n_epochs": 2}
    learn_steps = 256
