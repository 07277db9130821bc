"""Registers CrossQ with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "crossq",
        "lit_sb3_crossq.crossq:CrossQ",
        description="CrossQ (SAC with Batch Renorm, no target networks), off-policy, Box actions",
    )
