"""Categorical distributions with invalid action masking (Huang & Ontañón 2020, https://arxiv.org/abs/2006.14171).

A masked-out action's logit is replaced by a large negative number, so its probability is exactly 0 in
float32: sampling and the mode never pick it, and its logit gets no gradient. Entropy is taken over the
valid actions only (a masked action has no uncertainty), as in sb3-contrib. Masks are boolean tensors,
``True`` for allowed actions; ``None`` means every action is allowed.

MultiBinary actions are two-way categoricals per bit (masks ``(may be 0, may be 1)`` per bit), so a bit can
be forced to either value; that is how sb3-contrib masks them too.
"""

from __future__ import annotations

import torch
from torch import nn

from lit_sb3_core.sdk import CategoricalDistribution, Distribution

__all__ = ["HUGE_NEG", "MaskableCategoricalDistribution", "MaskableMultiCategoricalDistribution"]

# The value masked logits get (sb3-contrib's): exp of it underflows to exactly 0 in float32 and float16.
HUGE_NEG = -1e8


class MaskableCategoricalDistribution(CategoricalDistribution):
    """Discrete actions: a softmax over ``n`` logits, restricted to the actions ``masks`` allows.

    Args:
        logits: ``(batch, n)`` unnormalised log-probabilities.
        masks: ``(batch, n)`` booleans (``True``: allowed), or ``None`` for no masking.
    """

    def __init__(self, logits: torch.Tensor, masks: torch.Tensor | None = None) -> None:
        self.masks = masks
        if masks is not None:
            logits = logits.masked_fill(~masks, HUGE_NEG)
        super().__init__(logits)

    @staticmethod
    def make_head(latent_dim: int, n: int) -> nn.Module:
        return nn.Linear(latent_dim, n)

    def entropy(self) -> torch.Tensor:
        p_log_p = self.log_probs.exp() * self.log_probs
        if self.masks is not None:
            p_log_p = p_log_p.masked_fill(~self.masks, 0.0)
        return -p_log_p.sum(-1)


class MaskableMultiCategoricalDistribution(Distribution):
    """MultiDiscrete (and MultiBinary) actions: independent masked categoricals, one per sub-action.

    Args:
        logits: ``(batch, sum(nvec))`` logits, one block per sub-action.
        nvec: number of choices of each sub-action (``[2] * n`` for MultiBinary(n)).
        masks: ``(batch, sum(nvec))`` booleans in the same layout, or ``None``.
    """

    def __init__(self, logits: torch.Tensor, nvec: list[int], masks: torch.Tensor | None = None) -> None:
        mask_parts: list[torch.Tensor | None] = (
            list(torch.split(masks, nvec, dim=-1)) if masks is not None else [None] * len(nvec)
        )
        self.parts = [
            MaskableCategoricalDistribution(chunk, part_masks)
            for chunk, part_masks in zip(torch.split(logits, nvec, dim=-1), mask_parts)
        ]

    @staticmethod
    def make_head(latent_dim: int, nvec: list[int]) -> nn.Module:
        return nn.Linear(latent_dim, int(sum(nvec)))

    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        columns = actions.long().reshape(-1, len(self.parts)).unbind(-1)
        return torch.stack([part.log_prob(col) for part, col in zip(self.parts, columns)], dim=-1).sum(-1)

    def entropy(self) -> torch.Tensor:
        return torch.stack([part.entropy() for part in self.parts], dim=-1).sum(-1)

    def sample(self) -> torch.Tensor:
        return torch.stack([part.sample() for part in self.parts], dim=-1)

    def mode(self) -> torch.Tensor:
        return torch.stack([part.mode() for part in self.parts], dim=-1)
