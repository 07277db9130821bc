"""Random-generator states of python, numpy and torch as checkpoint-safe values (tensors, ints, lists), and
``GlobalNumpyRng``, numpy's global generator behind ``np.random.Generator``'s methods.

Checkpoints must load with ``torch.load(weights_only=True)``, which admits tensors and plain containers
only, so numpy's and python's state tuples are converted both ways here.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

__all__ = ["GlobalNumpyRng", "capture_rng_state", "restore_rng_state"]


def capture_rng_state() -> dict[str, Any]:
    kind, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    version, python_state, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "numpy": {
            "kind": str(kind),
            "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached_gaussian),
        },
        "python": {"version": int(version), "state": list(python_state), "gauss": gauss},
    }


def restore_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    numpy_state = state["numpy"]
    np.random.set_state(
        (
            numpy_state["kind"],
            numpy_state["keys"].numpy().astype(np.uint32),
            numpy_state["pos"],
            numpy_state["has_gauss"],
            numpy_state["cached_gaussian"],
        )
    )
    python_state = state["python"]
    random.setstate((python_state["version"], tuple(python_state["state"]), python_state["gauss"]))


class GlobalNumpyRng:
    """The ``np.random.Generator`` calls replay buffers and exploration make, answered by numpy's global
    generator with the calls SB3 makes (``np.random.randint``, ``rand``, ``choice``).

    SB3 samples minibatches, HER goals and epsilon-greedy decisions from numpy's global generator, which
    ``set_random_seed`` seeds. Drawing the same numbers in the same order makes a seed give SB3's run, not
    just one of the same distribution. Its state is numpy's global state, which checkpoints keep
    (``capture_rng_state``); it has no state of its own to save.
    """

    def integers(self, low: Any, high: Any = None, size: Any = None) -> Any:
        """Integers in ``[low, high)`` (``low`` and ``high`` may be arrays), as ``np.random.randint``."""
        return np.random.randint(low, high, size=size)

    def random(self, size: Any = None) -> Any:
        """Uniform floats in ``[0, 1)``, as ``np.random.rand``."""
        return np.random.random_sample(size)

    def standard_normal(self, size: Any = None) -> Any:
        """Standard normal floats, as ``np.random.normal`` draws them (SB3's action noise)."""
        return np.random.standard_normal(size)

    def choice(self, a: Any, size: Any = None) -> Any:
        """Elements of ``a`` drawn uniformly with replacement, as ``np.random.choice``."""
        return np.random.choice(a, size=size, replace=True)
