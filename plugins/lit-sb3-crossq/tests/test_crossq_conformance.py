"""CrossQ passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestCrossQConformance(AlgorithmConformance):
    algo_name = "crossq"
    distribution = "lit-sb3-crossq"
    env_ids = ("Pendulum-v1", "MountainCarContinuous-v0")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "learning_starts": 50,
        "buffer_size": 1000,
        "batch_size": 64,
        "policy_kwargs": {"net_arch": [32, 32]},
    }
    learn_steps = 256
