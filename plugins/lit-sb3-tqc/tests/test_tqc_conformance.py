"""TQC passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestTQCConformance(AlgorithmConformance):
    algo_name = "tqc"
    distribution = "lit-sb3-tqc"
    env_ids = ("Pendulum-v1", "MountainCarContinuous-v0")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "learning_starts": 50,
        "buffer_size": 1000,
        "batch_size": 64,
        "policy_kwargs": {"net_arch": [32, 32], "n_quantiles": 10},
    }
    learn_steps = 256
