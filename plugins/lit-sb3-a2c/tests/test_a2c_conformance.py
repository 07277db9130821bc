"""A2C passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestA2CConformance(AlgorithmConformance):
    algo_name = "a2c"
    distribution = "lit-sb3-a2c"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 8, "ent_coef": 0.01}
    learn_steps = 256
