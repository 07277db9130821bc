"""QR-DQN policies: ``n_quantiles`` return quantiles per action, online and target (sb3-contrib's layout)."""

from __future__ import annotations

from typing import Any

import torch
from gymnasium import spaces

from lit_sb3_core.sdk import CombinedExtractor, NatureCNN, QNetwork, check_positive_int
from lit_sb3_dqn.policies import DQNPolicy

__all__ = ["QRDQN_POLICY_ALIASES", "CnnPolicy", "MultiInputPolicy", "QRDQNPolicy", "QuantileNetwork"]


class QuantileNetwork(QNetwork):
    """A Q network whose output is reshaped to ``(batch, n_quantiles, n_actions)``."""

    def __init__(self, *args: Any, n_quantiles: int, n_actions: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.n_quantiles, self.n_actions = n_quantiles, n_actions

    def forward(self, obs: Any) -> torch.Tensor:
        return super().forward(obs).view(-1, self.n_quantiles, self.n_actions)

    def part_actions(self, features_input: Any, deterministic: bool) -> torch.Tensor:
        """Greedy actions: the highest mean over the quantiles (SB3's ``model.quantile_net.predict``)."""
        return self(features_input).mean(dim=1).argmax(dim=1)


class QRDQNPolicy(DQNPolicy):
    """``quantile_net`` and ``quantile_net_target``; greedy actions maximise the mean of the quantiles.

    Args:
        n_quantiles: quantiles of the return distribution per action. Default 200.
        **kwargs: as ``DQNPolicy`` (``net_arch`` default ``[64, 64]``, ``activation_fn``, ...).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        n_quantiles: int = 200,
        **kwargs: Any,
    ) -> None:
        self.n_quantiles = check_positive_int("n_quantiles", n_quantiles)
        super().__init__(observation_space, action_space, **kwargs)

    def make_q_net(self) -> QuantileNetwork:
        n_actions = self.n_actions
        return QuantileNetwork(
            self.make_features_extractor(),
            n_actions * self.n_quantiles,
            self.net_arch,
            self.activation_fn,
            n_quantiles=self.n_quantiles,
            n_actions=n_actions,
        )

    @property
    def quantile_net(self) -> QuantileNetwork:
        return self.q_net  # type: ignore[return-value]

    @property
    def quantile_net_target(self) -> QuantileNetwork:
        return self.q_net_target  # type: ignore[return-value]

    def q_values(self, obs: Any) -> torch.Tensor:
        """Mean of the quantiles: the expected return of each action."""
        return self.q_net(self.preprocess(obs)).mean(dim=1)


class CnnPolicy(QRDQNPolicy):
    """``QRDQNPolicy`` with the NatureCNN features extractor, for image observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", NatureCNN)
        super().__init__(observation_space, action_space, **kwargs)


class MultiInputPolicy(QRDQNPolicy):
    """``QRDQNPolicy`` with the CombinedExtractor, for Dict observations."""

    def __init__(self, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any) -> None:
        kwargs.setdefault("features_extractor_class", CombinedExtractor)
        super().__init__(observation_space, action_space, **kwargs)


QRDQN_POLICY_ALIASES: dict[str, Any] = {
    "MlpPolicy": QRDQNPolicy,
    "CnnPolicy": CnnPolicy,
    "MultiInputPolicy": MultiInputPolicy,
}
