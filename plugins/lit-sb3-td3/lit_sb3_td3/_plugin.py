"""Registers TD3 with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "td3",
        "lit_sb3_td3.td3:TD3",
        description="Twin Delayed DDPG (clipped double-Q, delayed policy updates), off-policy, Box actions",
    )
