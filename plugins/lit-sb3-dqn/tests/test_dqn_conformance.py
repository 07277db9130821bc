"""DQN passes the conformance kit exactly as a third-party plugin would use it."""

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestDQNConformance(AlgorithmConformance):
    algo_name = "dqn"
    distribution = "lit-sb3-dqn"
    env_ids = ("CartPole-v1", "FrozenLake-v1")
    algo_kwargs: ClassVar[dict[str, Any]] = {
        "learning_starts": 50,
        "buffer_size": 1000,
        "target_update_interval": 100,
        "policy_kwargs": {"net_arch": [32, 32]},
    }
    learn_steps = 256
