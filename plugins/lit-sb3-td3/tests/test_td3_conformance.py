"""TD3 passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestTD3Conformance(AlgorithmConformance):
    algo_name = "td3"
    distribution = "lit-sb3-td3"
    env_ids = ("Pendulum-v1", "MountainCarContinuous-v0")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "learning_starts": 50,
        "buffer_size": 1000,
        "batch_size": 64,
        "action_noise": {"type": "normal", "sigma": 0.1},
        "policy_kwargs": {"net_arch": [32, 32]},
    }
    learn_steps = 256
    stochastic_policy = False  # a deterministic policy: predict ignores `deterministic`, as in SB3
