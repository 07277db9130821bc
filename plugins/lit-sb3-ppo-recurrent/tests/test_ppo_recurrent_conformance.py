"""RecurrentPPO passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestRecurrentPPOConformance(AlgorithmConformance):
    algo_name = "recurrent_ppo"
    distribution = "lit-sb3-ppo-recurrent"
    env_ids = ("CartPole-v1", "Pendulum-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "n_steps": 32,
        "batch_size": 64,
        "n_epochs": 2,
        "policy_kwargs": {"lstm_hidden_size": 16},
    }
    learn_steps = 256
