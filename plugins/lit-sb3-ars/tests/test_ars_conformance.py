"""ARS passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestARSConformance(AlgorithmConformance):
    algo_name = "ars"
    distribution = "lit-sb3-ars"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    # Non-zero MLP weights, so predictions and the save/load round trip compare real numbers.
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "n_delta": 2,
        "zero_policy": False,
        "policy_kwargs": {"net_arch": [8]},
    }
    learn_steps = 256
    stochastic_policy = False  # a deterministic policy: predict ignores `deterministic`, as in SB3
