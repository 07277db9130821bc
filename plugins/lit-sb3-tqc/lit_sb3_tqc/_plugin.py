"""Registers TQC with lit-sb3. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_algorithms(registry):
    registry.add(
        "tqc",
        "lit_sb3_tqc.tqc:TQC",
        description="Truncated Quantile Critics (SAC with truncated distributional critics), off-policy, Box actions",
    )
