"""Registers QR-DQN with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "qrdqn",
        "lit_sb3_qrdqn.qrdqn:QRDQN",
        description="Quantile Regression DQN (distributional, quantile Huber loss), off-policy, Discrete",
    )
