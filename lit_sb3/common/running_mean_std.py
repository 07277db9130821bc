"""SB3's ``RunningMeanStd`` (numpy ``mean``/``var``/``count``) as a view over lit-sb3's statistics module."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from lit_sb3_core.data.normalization import RunningMeanStd as _RunningMeanStdModule

__all__ = ["RunningMeanStd"]


class RunningMeanStd:
    """Mean and variance of every sample seen (merged batch by batch), as numpy arrays.

    The numbers live in ``module``, the ``nn.Module`` lit-sb3's own normalization uses; ``mean`` and ``var``
    are numpy views of its buffers.

    Args:
        epsilon: the initial count (keeps the first variance finite).
        shape: the shape of one sample.
        module: the statistics module to view (a new one by default).
    """

    def __init__(
        self, epsilon: float = 1e-4, shape: tuple[int, ...] = (), module: _RunningMeanStdModule | None = None
    ) -> None:
        self.module = module if module is not None else _RunningMeanStdModule(tuple(shape), epsilon)

    @property
    def mean(self) -> np.ndarray:
        return self.module.mean.numpy()

    @mean.setter
    def mean(self, value: Any) -> None:
        self.module.mean.copy_(torch.as_tensor(np.asarray(value, dtype=np.float64)))

    @property
    def var(self) -> np.ndarray:
        return self.module.var.numpy()

    @var.setter
    def var(self, value: Any) -> None:
        self.module.var.copy_(torch.as_tensor(np.asarray(value, dtype=np.float64)))

    @property
    def count(self) -> float:
        return float(self.module.count)

    @count.setter
    def count(self, value: float) -> None:
        self.module.count.fill_(float(value))

    def update(self, arr: np.ndarray) -> None:
        """Merge a batch of samples (first axis: the batch)."""
        self.module.update(torch.as_tensor(np.asarray(arr, dtype=np.float64)))

    def update_from_moments(self, batch_mean: Any, batch_var: Any, batch_count: float) -> None:
        """Merge a batch known by its mean, (biased) variance and size."""
        self.module.update_from_moments(
            torch.as_tensor(np.asarray(batch_mean, dtype=np.float64)),
            torch.as_tensor(np.asarray(batch_var, dtype=np.float64)),
            batch_count,  # type: ignore[arg-type]
        )

    def combine(self, other: RunningMeanStd) -> None:
        """Merge the statistics of ``other`` into these."""
        self.update_from_moments(other.mean, other.var, other.count)

    def copy(self) -> RunningMeanStd:
        return RunningMeanStd(module=copy.deepcopy(self.module))

    def __repr__(self) -> str:
        return f"RunningMeanStd(mean={self.mean}, var={self.var}, count={self.count})"
