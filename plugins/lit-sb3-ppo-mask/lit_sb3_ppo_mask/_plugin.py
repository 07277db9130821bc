"""Registers MaskablePPO with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "maskable_ppo",
        "lit_sb3_ppo_mask.ppo_mask:MaskablePPO",
        description="PPO with invalid action masking (Discrete, MultiDiscrete, MultiBinary), on-policy",
    )
