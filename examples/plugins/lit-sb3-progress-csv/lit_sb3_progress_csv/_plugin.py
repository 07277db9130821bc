"""Registers the ``progress_csv`` callback. Imports nothing heavy: discovery stays cheap."""

from lit_sb3_core.hookspecs import hookimpl


@hookimpl
def lit_sb3_register_callbacks(registry):
    registry.add(
        "progress_csv",
        "lit_sb3_progress_csv.callback:ProgressCSV",
        description="write timesteps and the mean training return to a CSV file; optionally stop at a return",
    )
