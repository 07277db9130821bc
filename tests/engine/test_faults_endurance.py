"""Long runs keep memory flat: a CI-sized run of benchmarks/endurance.py with a generous bound.

Memory is measured after ``gc.collect()``: resident memory (MB) and live, gc-tracked Python objects. A leak
of a tensor or a record per iteration would add hundreds of objects over these runs; the bounds allow for
allocator and cache warm-up and the measurement's own bookkeeping. No wall-clock assertions.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

MAX_RSS_GROWTH_MB = 30.0
MAX_OBJECT_GROWTH = 200


def _endurance() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "endurance.py"
    spec = importlib.util.spec_from_file_location("lit_sb3_endurance", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


endurance = _endurance()


def _assert_flat(name: str, samples: list) -> None:
    grew = endurance.growth(samples)
    summary = f"{name}: {grew} over samples {[(s.steps, round(s.rss_mb, 1), s.objects) for s in samples]}"
    print(summary)
    assert grew.steps > 0
    assert grew.rss_mb < MAX_RSS_GROWTH_MB, summary
    assert grew.objects < MAX_OBJECT_GROWTH, summary


def _available(algo: str) -> None:
    from lit_sb3 import get_algo_class

    try:
        get_algo_class(algo)
    except (KeyError, ImportError) as exc:
        pytest.skip(f"{algo} is not installed: {exc}")


def test_a_long_ppo_fit_keeps_memory_flat() -> None:
    _assert_flat("ppo fit", endurance.run_fit("ppo", 6_144, 384))


def test_a_long_off_policy_fit_keeps_memory_flat() -> None:
    # SAC where its plugin is installed, DQN otherwise (the same OffPolicyAlgorithm loop and replay buffer).
    try:
        _available("sac")
        algo, steps = "sac", 2_000
    except pytest.skip.Exception:
        algo, steps = "dqn", 4_000
    _assert_flat(f"{algo} fit", endurance.run_fit(algo, steps, steps // 16))


def test_repeated_learn_calls_leave_nothing_behind() -> None:
    # Every learn() builds a new RLTrainer: a trainer, datamodule or signal handler kept alive would show.
    _assert_flat("ppo learn() loop", endurance.run_learn_loop("ppo", 12, 256))
