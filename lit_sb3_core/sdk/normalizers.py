"""Observation and reward normalization as the loops apply it: a helper RLAlgorithm holds (``self.normalizers``).

``RLEnvDataModule(normalize=...)`` or a model file asks for it (``RLAlgorithm.configure_normalization``
attaches ``obs_normalizer``/``reward_normalizer``); without it both calls return their input unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

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

    def rewards(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        """Rewards scaled by the running return std (unchanged without reward normalization)."""
        normalizer: RewardNormalizer | None = self.algorithm.reward_normalizer
        return rewards if normalizer is None else normalizer(rewards, dones)
