"""Registers DDPG with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "ddpg",
        "lit_sb3_ddpg.ddpg:DDPG",
        description="Deep Deterministic Policy Gradient (TD3 without its tricks), off-policy, Box actions",
    )
