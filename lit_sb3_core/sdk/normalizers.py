"""Observation and reward normalization as the loops apply it: a helper RLAlgorithm holds (``self.normalizers``).

``RLEnvDataModule(normalize=...)`` or a model file asks for it (``RLAlgorithm.configure_normalization``
attaches ``obs_normalizer``/``reward_normalizer``); without it every call returns its input unchanged.
``normalize_obs``/``normalize_reward`` are ``VecNormalize``'s methods of those names: off-policy algorithms
store original observations and rewards and hand this object to ``replay_buffer.sample(..., env=...)``, which
normalizes each minibatch with the current statistics, as SB3's buffers do with a ``VecNormalize``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:
    from lit_sb3_core.data.normalization import ObservationNormalizer, RewardNormalizer

__all__ = ["Normalizers"]


class Normalizers:
    """The algorithm's observation and reward normalizers, or the identity where there are none."""

    def __init__(self, algorithm: Any) -> None:
        self.algorithm = algorithm

    def obs(self, obs: Any, update: bool = False) -> Any:
        """Normalized observations (raw ones without observation normalization); ``update`` learns stats."""
        normalizer: ObservationNormalizer | None = self.algorithm.obs_normalizer
        return obs if normalizer is None else normalizer.normalize(obs, update)

    def obs_after_merging(self, obs: Any, arriving: Any) -> Any:
        """``obs`` normalized as VecNormalize normalizes it at the step that returns ``arriving`` (its
        statistics merged with ``arriving`` first), without learning anything: for the observations a
        rollout bootstraps from (see ``ObservationNormalizer.normalize_after_merging``)."""
        normalizer: ObservationNormalizer | None = self.algorithm.obs_normalizer
        return obs if normalizer is None else normalizer.normalize_after_merging(obs, arriving)

    def rewards(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        """Rewards scaled by the running return std (unchanged without reward normalization)."""
        normalizer: RewardNormalizer | None = self.algorithm.reward_normalizer
        return rewards if normalizer is None else normalizer(rewards, dones)

    @property
    def active(self) -> bool:
        """Whether observations or rewards are normalized."""
        return self.algorithm.obs_normalizer is not None or self.algorithm.reward_normalizer is not None

    def normalize_obs(self, obs: Any) -> Any:
        """A numpy batch of observations normalized with the current statistics, which it leaves as they are."""
        normalizer: ObservationNormalizer | None = self.algorithm.obs_normalizer
        if normalizer is None:
            return obs
        values = torch.as_tensor(np.asarray(obs), device=normalizer.rms.mean.device)
        return normalizer.normalize(values).cpu().numpy()

    def normalize_reward(self, reward: np.ndarray) -> np.ndarray:
        """Rewards scaled by the current std of the return (float32), which it leaves as it is."""
        normalizer: RewardNormalizer | None = self.algorithm.reward_normalizer
        return np.asarray(reward, dtype=np.float32) if normalizer is None else normalizer.scaled(reward)
