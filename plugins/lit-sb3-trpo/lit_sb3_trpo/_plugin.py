"""Registers TRPO with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "trpo",
        "lit_sb3_trpo.trpo:TRPO",
        description="Trust Region Policy Optimization (conjugate gradient + line search), on-policy",
    )
