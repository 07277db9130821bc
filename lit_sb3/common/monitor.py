"""``stable_baselines3.common.monitor``: SB3's ``Monitor`` and its results files (``lit_sb3_core.sb3.monitor``).

The algorithms wrap an env they are given (an id, an ``Env`` or a factory) in ``Monitor`` as SB3's do, so the
class lives in the core; this is SB3's module name for it.
"""

from lit_sb3_core.sb3.monitor import (
    LoadMonitorResultsError,
    Monitor,
    ResultsWriter,
    get_monitor_files,
    load_results,
)

__all__ = ["LoadMonitorResultsError", "Monitor", "ResultsWriter", "get_monitor_files", "load_results"]
