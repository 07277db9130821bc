"""REINFORCE passes the lit-sb3 conformance kit: discovery, every declared space, files, checkpoints, seeds."""

from __future__ import annotations

from typing import Any, ClassVar

from lit_sb3_core.testing import AlgorithmConformance


class TestREINFORCEConformance(AlgorithmConformance):
    algo_name = "reinforce"
    distribution = "lit-sb3-reinforce"
    env_ids = ("CartPole-v1", "Pendulum-v1")  # Discrete and Box actions
    algo_kwargs: ClassVar[dict[str, Any]] = {"n_steps": 64}
    learn_steps = 256
