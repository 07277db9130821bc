"""Observation and reward normalization (what SB3's VecNormalize does), owned by the algorithm.

The statistics are buffers of small ``nn.Module``s attached to the algorithm, so they travel in Lightning
checkpoints and model files with the weights, and ``predict`` normalizes raw observations with them:
evaluation envs need no wrapper and always see the training statistics, frozen. Gymnasium's vector
normalization wrappers cannot be used here: they require NEXT_STEP autoreset, and lit-sb3 uses SAME_STEP
so truncated episodes can bootstrap from their true final observation.

Configure it on the datamodule: ``RLEnvDataModule(..., normalize=True)`` (observations and rewards),
``normalize="observation"``, ``normalize="reward"``, or a dict with ``observation``, ``reward``,
``clip_obs`` (10), ``clip_reward`` (10), ``gamma`` (the algorithm's) and ``epsilon`` (1e-8).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = ["ObservationNormalizer", "RewardNormalizer", "RunningMeanStd", "parse_normalize"]

_DEFAULTS: dict[str, Any] = {
    "observation": False,
    "reward": False,
    "clip_obs": 10.0,
    "clip_reward": 10.0,
    "gamma": None,
    "epsilon": 1e-8,
}


def parse_normalize(value: Any) -> dict[str, Any] | None:
    """The plain-JSON normalization config for ``normalize=...``; None when nothing is normalized."""
    if value is None or value is False:
        return None
    if value is True:
        config = {**_DEFAULTS, "observation": True, "reward": True}
    elif isinstance(value, str) and value.lower() in ("observation", "obs", "reward"):
        key = "reward" if value.lower() == "reward" else "observation"
        config = {**_DEFAULTS, key: True}
    elif isinstance(value, dict):
        unknown = set(value) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"Unknown normalize options {sorted(unknown)}; known: {sorted(_DEFAULTS)}.")
        config = {**_DEFAULTS, **value}
    else:
        raise ValueError(
            f"normalize={value!r}: use True (observations and rewards), 'observation', 'reward', False, or a "
            f"dict with keys {sorted(_DEFAULTS)}."
        )
    if not (config["observation"] or config["reward"]):
        return None
    return config


class RunningMeanStd(nn.Module):
    """Mean and variance over every sample seen, merged batch by batch (Chan et al.'s parallel update)."""

    def __init__(self, shape: tuple[int, ...] = (), epsilon: float = 1e-4) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(epsilon, dtype=torch.float64))

    @torch.no_grad()
    def update(self, batch: torch.Tensor) -> None:
        batch = batch.to(torch.float64)
        self.update_from_moments(batch.mean(0), batch.var(0, unbiased=False), batch.shape[0])

    @torch.no_grad()
    def update_from_moments(
        self, batch_mean: torch.Tensor, batch_var: torch.Tensor, batch_count: int
    ) -> None:
        """Merge a batch known by its mean, (biased) variance and size: for callers that accumulate sums."""
        batch_mean, batch_var = batch_mean.to(torch.float64), batch_var.to(torch.float64)
        delta = batch_mean - self.mean
        total = self.count + batch_count
        m2 = (
            self.var * self.count
            + batch_var * batch_count
            + delta.square() * self.count * batch_count / total
        )
        self.mean.add_(delta * batch_count / total)
        self.var.copy_(m2 / total)
        self.count.copy_(total)


class ObservationNormalizer(nn.Module):
    """``clip((obs - mean) / sqrt(var + eps))`` with statistics updated from training observations."""

    def __init__(self, shape: tuple[int, ...], clip: float = 10.0, epsilon: float = 1e-8) -> None:
        super().__init__()
        self.rms = RunningMeanStd(shape)
        self.clip = clip
        self.epsilon = epsilon

    def forward(self, obs: torch.Tensor, update: bool = False) -> torch.Tensor:
        if update:
            self.rms.update(obs)
        scaled = (obs.to(torch.float64) - self.rms.mean) / torch.sqrt(self.rms.var + self.epsilon)
        return scaled.clamp(-self.clip, self.clip).to(torch.float32)


class RewardNormalizer(nn.Module):
    """Divides rewards by the running std of the discounted return, then clips (VecNormalize's scheme)."""

    def __init__(self, gamma: float, clip: float = 10.0, epsilon: float = 1e-8) -> None:
        super().__init__()
        self.rms = RunningMeanStd(())
        self.gamma = gamma
        self.clip = clip
        self.epsilon = epsilon
        self._returns: np.ndarray | None = None  # discounted return of each env's current episode

    @property
    def returns(self) -> np.ndarray | None:
        """The discounted return of each env's current episode (None before the first step)."""
        return self._returns

    def reset_returns(self) -> None:
        """Start every env's discounted return from zero (all episodes were reset)."""
        self._returns = None

    def forward(self, rewards: np.ndarray, dones: np.ndarray, update: bool = True) -> np.ndarray:
        if self._returns is None or self._returns.shape != rewards.shape:
            self._returns = np.zeros(rewards.shape, dtype=np.float64)
        self._returns = self._returns * self.gamma + rewards
        if update:
            self.rms.update(torch.from_numpy(self._returns))
        self._returns[dones] = 0.0
        scale = float(torch.sqrt(self.rms.var + self.epsilon))
        return np.clip(rewards / scale, -self.clip, self.clip).astype(np.float32)
