"""CPU time of short calls, for the in-process micro-benchmarks (fast_matmul.py, bf16_autocast.py)."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["alternating_thread_times"]


def alternating_thread_times(
    runs: dict[str, Callable[[], object]], repeats: int, calls: int, warmup: int
) -> dict[str, list[float]]:
    """Seconds of this thread's CPU time per call of each run, one value per repeat.

    Each run is called ``warmup`` times first; then the runs take turns, ``calls`` calls each per repeat, so
    load from other processes favours none of them (``time.thread_time`` does not count it at all).
    """
    for run in runs.values():
        for _ in range(warmup):
            run()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.thread_time()
            for _ in range(calls):
                run()
            times[name].append((time.thread_time() - start) / calls)
    return times
