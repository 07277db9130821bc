"""Registers A2C with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "a2c",
        "lit_sb3_a2c.a2c:A2C",
        description="Advantage Actor-Critic (synchronous A3C), on-policy",
    )
