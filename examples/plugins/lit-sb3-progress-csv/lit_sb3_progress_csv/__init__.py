"""lit-sb3-progress-csv: the ``ProgressCSV`` callback, imported lazily (lightning loads on first use)."""

from __future__ import annotations

from typing import Any

__all__ = ["ProgressCSV"]


def __getattr__(name: str) -> Any:
    if name == "ProgressCSV":
        from lit_sb3_progress_csv.callback import ProgressCSV

        return ProgressCSV
    raise AttributeError(f"module 'lit_sb3_progress_csv' has no attribute {name!r}")
