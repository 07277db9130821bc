"""Registers DQN with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "dqn",
        "lit_sb3_dqn.dqn:DQN",
        description="Deep Q-Network (epsilon-greedy, target network, Huber loss), off-policy, Discrete",
    )
