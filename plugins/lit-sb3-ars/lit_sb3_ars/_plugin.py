"""Registers ARS with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "ars",
        "lit_sb3_ars.ars:ARS",
        description="Augmented Random Search (derivative-free, linear or MLP policies)",
    )
