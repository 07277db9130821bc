"""A rollout buffer that also keeps the action mask each action was chosen under.

The PPO update must score old actions with the same masks they were sampled with; otherwise the
probability ratio compares a masked policy with an unmasked one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import torch
from gymnasium import spaces

from lit_sb3_core.sdk import RolloutBuffer, sb3_shuffle

__all__ = ["MaskableRolloutBatch", "MaskableRolloutBuffer"]


def _flat_index(storage: Any, idx: torch.Tensor) -> Any:
    if isinstance(storage, dict):
        return {key: _flat_index(sub, idx) for key, sub in storage.items()}
    return storage.reshape(-1, *storage.shape[2:])[idx]


class MaskableRolloutBatch(NamedTuple):
    observations: Any
    actions: torch.Tensor
    old_values: torch.Tensor
    old_log_prob: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor
    action_masks: torch.Tensor | None  # None: the rollout was collected without masks


class MaskableRolloutBuffer(RolloutBuffer):
    """``RolloutBuffer`` plus ``action_masks``: ``(n_steps, n_envs, mask_dims)`` booleans.

    Args:
        mask_dims: length of one action mask (see ``lit_sb3_ppo_mask.policies.mask_dims``).
        Other arguments as ``RolloutBuffer``.
    """

    def __init__(
        self,
        n_steps: int,
        n_envs: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        mask_dims: int,
        device: torch.device | str = "cpu",
        gamma: float = 0.99,
        gae_lambda: float = 1.0,
    ) -> None:
        super().__init__(n_steps, n_envs, observation_space, action_space, device, gamma, gae_lambda)
        self.mask_dims = mask_dims
        self.action_masks = torch.ones((n_steps, n_envs, mask_dims), dtype=torch.bool, device=self.device)
        self.has_masks = False

    def reset(self) -> None:
        super().reset()
        self.has_masks = False

    def store_masks(self, action_masks: torch.Tensor) -> None:
        """The masks of the step about to be added (``(n_envs, mask_dims)``); steps without stay all-True."""
        if not self.has_masks:
            self.action_masks.fill_(True)
            self.has_masks = True
        self.action_masks[self.pos].copy_(action_masks.reshape(self.n_envs, self.mask_dims))

    def minibatches(  # type: ignore[override]
        self, batch_size: int | None, generator: torch.Generator | None = None
    ) -> Iterator[MaskableRolloutBatch]:
        """Shuffled minibatches over the flattened rollout, with their masks; the last may be smaller.

        In sb3-contrib's order (``sb3_shuffle``), or one drawn from ``generator`` when given.
        """
        total = self.n_steps * self.n_envs
        batch_size = total if batch_size is None else batch_size
        if generator is not None:
            order = torch.randperm(total, generator=generator, device="cpu")
        else:
            order = sb3_shuffle(self.n_steps, self.n_envs)
        order = order.to(self.device)
        flat_actions = self.actions.reshape(total, *self.actions.shape[2:])
        flat_values = self.values.reshape(-1)
        flat_log_probs = self.log_probs.reshape(-1)
        flat_advantages = self.advantages.reshape(-1)
        flat_returns = self.returns.reshape(-1)
        flat_masks = self.action_masks.reshape(total, self.mask_dims) if self.has_masks else None
        for start in range(0, total, batch_size):
            idx = order[start : start + batch_size]
            yield MaskableRolloutBatch(
                _flat_index(self.observations, idx),
                flat_actions[idx],
                flat_values[idx],
                flat_log_probs[idx],
                flat_advantages[idx],
                flat_returns[idx],
                flat_masks[idx] if flat_masks is not None else None,
            )
