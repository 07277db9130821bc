"""Registers PPO with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "ppo",
        "lit_sb3_ppo.ppo:PPO",
        description="Proximal Policy Optimization (clipped surrogate objective), on-policy",
    )
