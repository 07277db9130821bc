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
    """Mean and variance over every sample seen, merged batch by batch (Chan et al.'s parallel update).

    The statistics are float64 buffers (so they travel in checkpoints and model files). On the CPU they are
    updated through numpy views of those same buffers: the update runs once per env step on a handful of
    numbers, where each torch op's dispatch costs more than numpy's whole merge.
    """

    mean: torch.Tensor  # buffers, registered in __init__ (they travel with the state dict)
    var: torch.Tensor
    count: torch.Tensor

    def __init__(self, shape: tuple[int, ...] = (), epsilon: float = 1e-4) -> None:
        super().__init__()
        self.register_buffer("mean", torch.zeros(shape, dtype=torch.float64))
        self.register_buffer("var", torch.ones(shape, dtype=torch.float64))
        self.register_buffer("count", torch.tensor(epsilon, dtype=torch.float64))

    def host_views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Numpy arrays sharing memory with ``mean``, ``var`` and ``count``; None off the CPU.

        Cached by the buffers' identities (the views keep those tensors alive, so an id cannot be reused):
        moving the module or replacing a buffer makes new views, ``load_state_dict`` writes in place.
        """
        buffers = self._buffers
        mean, var, count = buffers["mean"], buffers["var"], buffers["count"]
        assert mean is not None and var is not None and count is not None
        key = (id(mean), id(var), id(count))
        cached = self.__dict__.get("_host_views")
        if cached is not None and cached[0] == key:
            return cached[1]
        if mean.device.type != "cpu":
            return None
        views = (mean.numpy(), var.numpy(), count.numpy())
        self.__dict__["_host_views"] = (key, views)
        return views

    @torch.no_grad()
    def update(self, batch: torch.Tensor | np.ndarray) -> None:
        """Merge a batch of samples (first axis: the batch), given as a tensor or a numpy array."""
        views = self.host_views()
        if views is not None:
            values = batch.detach().cpu().numpy() if isinstance(batch, torch.Tensor) else np.asarray(batch)
            self._merge_on_host(views, values.astype(np.float64, copy=False))
            return
        batch = torch.as_tensor(batch, device=self.mean.device).to(torch.float64)
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

    @staticmethod
    def _merge_on_host(views: tuple[np.ndarray, np.ndarray, np.ndarray], values: np.ndarray) -> None:
        """``update_from_moments`` in numpy, in place on the buffers' views, with few temporaries."""
        mean, var, count = views
        batch_count = values.shape[0]
        batch_mean = np.add.reduce(values, 0) / batch_count
        centered = values - batch_mean
        batch_var = np.add.reduce(centered * centered, 0) / batch_count
        seen = float(count)
        total = seen + batch_count
        delta = batch_mean - mean
        mean += delta * (batch_count / total)
        var *= seen / total
        var += batch_var * (batch_count / total) + delta * delta * (seen * batch_count / (total * total))
        count[...] = total


class ObservationNormalizer(nn.Module):
    """``clip((obs - mean) / sqrt(var + eps))`` with statistics updated from training observations."""

    def __init__(self, shape: tuple[int, ...], clip: float = 10.0, epsilon: float = 1e-8) -> None:
        super().__init__()
        self.rms = RunningMeanStd(shape)
        self.clip = clip
        self.epsilon = epsilon

    def forward(self, obs: torch.Tensor, update: bool = False) -> torch.Tensor:
        """The normalization in torch ops: what exported graphs and accelerator runs use."""
        if update:
            self.rms.update(obs)
        scaled = (obs.to(torch.float64) - self.rms.mean) / torch.sqrt(self.rms.var + self.epsilon)
        return scaled.clamp(-self.clip, self.clip).to(torch.float32)

    @torch.no_grad()
    def normalize(self, obs: torch.Tensor, update: bool = False) -> torch.Tensor:
        """``forward``'s result, computed in numpy when observations and statistics are on the CPU.

        The collection loop calls this once per env step on a few numbers, where torch's per-op dispatch
        dominates; numpy gives the same float64 arithmetic several times faster.
        """
        views = self.rms.host_views() if obs.device.type == "cpu" else None
        if views is None:
            return self(obs, update)
        values = obs.numpy()
        if update:
            self.rms._merge_on_host(views, values.astype(np.float64, copy=False))
        mean, var, _ = views
        scaled = (values - mean) / np.sqrt(var + self.epsilon)
        return torch.from_numpy(np.clip(scaled, -self.clip, self.clip).astype(np.float32))

    @torch.no_grad()
    def normalize_after_merging(self, obs: torch.Tensor, arriving: torch.Tensor | np.ndarray) -> torch.Tensor:
        """``obs`` normalized with the statistics as they will be once ``arriving`` (a batch, as
        ``RunningMeanStd.update`` takes it) is merged; the statistics are left as they are.

        VecNormalize merges a step's observations as the env returns them and normalizes everything of that
        step with the merged statistics. The collection loops merge an observation one step later, when the
        policy first reads it (so statistics saved between two steps resume exactly); the values that
        bootstrap (V of the rollout's last observation, of a truncated episode's final one) are the
        exceptions that need VecNormalize's statistics at the step itself.
        """
        saved = [buffer.clone() for buffer in (self.rms.mean, self.rms.var, self.rms.count)]
        self.rms.update(arriving)
        normalized = self.normalize(obs)
        for buffer, value in zip((self.rms.mean, self.rms.var, self.rms.count), saved, strict=True):
            buffer.copy_(value)
        return normalized


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
            self.rms.update(self._returns)
        self._returns[dones] = 0.0
        return self.scaled(rewards)

    def scaled(self, rewards: np.ndarray) -> np.ndarray:
        """``rewards`` divided by the current std of the return and clipped, without learning anything."""
        views = self.rms.host_views()
        variance = float(views[1]) if views is not None else float(self.rms.var)
        scale = float(np.sqrt(variance + self.epsilon))
        return np.clip(np.asarray(rewards) / scale, -self.clip, self.clip).astype(np.float32)
