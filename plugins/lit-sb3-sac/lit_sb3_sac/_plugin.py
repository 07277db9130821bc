"""Registers SAC with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "sac",
        "lit_sb3_sac.sac:SAC",
        description="Soft Actor-Critic (maximum entropy, automatic temperature), off-policy, Box actions",
    )
