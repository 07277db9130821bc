"""Experience storage. ``RolloutBuffer`` holds one on-policy rollout as preallocated tensors.

Tensors, not numpy arrays: observations are converted once when the policy first sees them, and
minibatches are plain tensor indexing, so an update never converts numpy to torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.foundation.spaces import action_dim, to_numpy

__all__ = ["RolloutBatch", "RolloutBuffer", "compute_gae", "sb3_shuffle"]


class RolloutBatch(NamedTuple):
    observations: Any
    actions: torch.Tensor
    old_values: torch.Tensor
    old_log_prob: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor


def _obs_storage(space: spaces.Space, size: tuple[int, int], device: torch.device) -> Any:
    if isinstance(space, spaces.Dict):
        return {key: _obs_storage(sub, size, device) for key, sub in space.spaces.items()}
    dtype = torch.from_numpy(np.zeros(0, dtype=space.dtype)).dtype
    return torch.zeros((*size, *(space.shape or ())), dtype=dtype, device=device)


def _row(storage: Any, index: int) -> Any:
    if isinstance(storage, dict):
        return {key: _row(sub, index) for key, sub in storage.items()}
    return storage[index]


def _store(row: Any, value: Any) -> None:
    if isinstance(row, dict):
        for key, sub in row.items():
            _store(sub, value[key])
    else:
        row.copy_(torch.as_tensor(value).reshape(row.shape))


def _flat_index(storage: Any, idx: torch.Tensor | slice) -> Any:
    if isinstance(storage, dict):
        return {key: _flat_index(sub, idx) for key, sub in storage.items()}
    flat = storage.reshape(-1, *storage.shape[2:])
    # index_select copies whole rows; advanced indexing gathers element by element (Atari frames: 20x slower)
    return flat[idx] if isinstance(idx, slice) else flat.index_select(0, idx)


def _slice(field: Any, rows: slice) -> Any:
    if isinstance(field, dict):
        return {key: _slice(sub, rows) for key, sub in field.items()}
    return field[rows]


def compute_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    episode_starts: np.ndarray,
    last_values: np.ndarray,
    last_dones: np.ndarray,
    gamma: float,
    gae_lambda: float,
) -> np.ndarray:
    """Generalized Advantage Estimation (Schulman et al. 2015, https://arxiv.org/abs/1506.02438).

    Arrays are ``(n_steps, n_envs)``. ``episode_starts[t]`` marks that the observation at step t began a
    new episode, so the value of step t must not flow back into step t-1. Truncated episodes are handled
    before this point by adding ``gamma * V(final_obs)`` to their last reward.
    """
    n_steps = rewards.shape[0]
    advantages = np.zeros_like(rewards)
    last_gae = np.zeros_like(last_values)
    for step in reversed(range(n_steps)):
        if step == n_steps - 1:
            next_non_terminal = 1.0 - last_dones
            next_values = last_values
        else:
            next_non_terminal = 1.0 - episode_starts[step + 1]
            next_values = values[step + 1]
        delta = rewards[step] + gamma * next_values * next_non_terminal - values[step]
        last_gae = delta + gamma * gae_lambda * next_non_terminal * last_gae
        advantages[step] = last_gae
    return advantages


def sb3_shuffle(n_steps: int, n_envs: int) -> torch.Tensor:
    """A random order of a ``(n_steps, n_envs)`` rollout drawn as SB3 draws it, as step-major indices.

    SB3's ``RolloutBuffer.get`` shuffles with numpy's global generator (``np.random.permutation``, seeded by
    ``set_random_seed``) over its env-major flattening (index ``env * n_steps + step``). Drawing the same
    numbers gives the same minibatches from the same seed, and leaves torch's generator, which samples the
    actions of the next rollout, where SB3 leaves it. Returned over this buffer's step-major flattening
    (index ``step * n_envs + env``).
    """
    env_major = np.random.permutation(n_steps * n_envs)
    return torch.from_numpy((env_major % n_steps) * n_envs + env_major // n_steps)


class RolloutBuffer:
    """One rollout of ``n_steps`` x ``n_envs`` transitions with values, log-probs, advantages and returns."""

    def __init__(
        self,
        n_steps: int,
        n_envs: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: torch.device | str = "cpu",
        gamma: float = 0.99,
        gae_lambda: float = 1.0,
    ) -> None:
        self.n_steps, self.n_envs = n_steps, n_envs
        self.observation_space, self.action_space = observation_space, action_space
        self.device = torch.device(device)
        self.gamma, self.gae_lambda = gamma, gae_lambda
        size = (n_steps, n_envs)
        self.observations = _obs_storage(observation_space, size, self.device)
        if isinstance(action_space, spaces.Discrete):
            self.actions = torch.zeros(size, dtype=torch.long, device=self.device)
        elif isinstance(action_space, spaces.MultiDiscrete):
            self.actions = torch.zeros(
                (*size, action_dim(action_space)), dtype=torch.long, device=self.device
            )
        else:
            self.actions = torch.zeros(
                (*size, action_dim(action_space)), dtype=torch.float32, device=self.device
            )
        # Rewards and episode starts are written from numpy every step; keep them in numpy.
        self.rewards = np.zeros(size, dtype=np.float32)
        self.episode_starts = np.zeros(size, dtype=np.float32)
        self.values = torch.zeros(size, dtype=torch.float32, device=self.device)
        self.log_probs = torch.zeros(size, dtype=torch.float32, device=self.device)
        self.advantages = torch.zeros(size, dtype=torch.float32, device=self.device)
        self.returns = torch.zeros(size, dtype=torch.float32, device=self.device)
        # Per step, views of the rows ``add`` writes: indexing them anew costs more than the copies.
        self._rows = [
            (_row(self.observations, i), self.actions[i], self.values[i], self.log_probs[i])
            for i in range(n_steps)
        ]
        self.pos = 0

    @property
    def full(self) -> bool:
        return self.pos == self.n_steps

    def reset(self) -> None:
        self.pos = 0

    def size(self) -> int:
        """Steps stored per env so far (``n_steps`` once full), as SB3's ``buffer.size()``."""
        return self.n_steps if self.full else self.pos

    def add(
        self,
        obs: Any,
        actions: torch.Tensor,
        rewards: np.ndarray,
        episode_starts: np.ndarray,
        values: torch.Tensor,
        log_probs: torch.Tensor,
    ) -> None:
        """Store one vector step; ``obs`` is the observation the action was chosen from."""
        if self.pos >= self.n_steps:
            raise RuntimeError("RolloutBuffer is full: call reset() before adding more steps.")
        pos = self.pos
        obs_row, action_row, value_row, log_prob_row = self._rows[pos]
        _store(obs_row, obs)
        action_row.copy_(actions.reshape(action_row.shape))
        self.rewards[pos] = rewards
        self.episode_starts[pos] = episode_starts
        value_row.copy_(values.reshape(-1))
        log_prob_row.copy_(log_probs.reshape(-1))
        self.pos += 1

    def compute_returns_and_advantage(self, last_values: torch.Tensor, dones: np.ndarray) -> None:
        """Fill ``advantages`` (GAE) and ``returns`` (advantages + values, the value-function target)."""
        values = self.values.cpu().numpy()
        advantages = compute_gae(
            self.rewards,
            values,
            self.episode_starts,
            to_numpy(last_values.reshape(-1)),
            dones.astype(np.float32),
            self.gamma,
            self.gae_lambda,
        )
        self.advantages.copy_(torch.from_numpy(advantages))
        self.returns.copy_(self.advantages + self.values)

    def full_batch(self) -> RolloutBatch:
        """The whole rollout as one batch in storage order (views, no copy): for updates that average over
        every sample at once (A2C), where shuffling would cost a copy of every field for a change in the
        last bit of the gradients."""
        total = self.n_steps * self.n_envs
        return RolloutBatch(
            _flat_index(self.observations, slice(None)),
            self.actions.reshape(total, *self.actions.shape[2:]),
            self.values.reshape(-1),
            self.log_probs.reshape(-1),
            self.advantages.reshape(-1),
            self.returns.reshape(-1),
        )

    def minibatches(
        self, batch_size: int | None, generator: torch.Generator | None = None
    ) -> Iterator[RolloutBatch]:
        """Shuffled minibatches over the flattened rollout; the last one may be smaller, as in SB3.

        The order is SB3's (``sb3_shuffle``: numpy's global generator), so a seed gives SB3's minibatches;
        a ``generator`` draws it from that torch generator instead. The rollout is shuffled once (one
        gather per field) and minibatches are slices of it: a few large copies instead of six small gathers
        per minibatch. A ``batch_size`` that covers the rollout gives ``full_batch()``, unshuffled: losses
        average over the samples, so their order changes only the rounding of the gradient sums (the last
        bit; SB3 sums them permuted). The shuffle is still drawn, as SB3 draws it, so numpy's generator
        stays where SB3's would be.
        """
        total = self.n_steps * self.n_envs
        batch_size = total if batch_size is None else batch_size
        if batch_size >= total:  # one minibatch of every sample: its order changes nothing
            if generator is not None:  # the shuffle is drawn all the same, as SB3 draws it
                torch.randperm(total, generator=generator, device="cpu")
            else:
                np.random.permutation(total)
            yield self.full_batch()
            return
        if generator is not None:
            order = torch.randperm(total, generator=generator, device="cpu")
        else:
            order = sb3_shuffle(self.n_steps, self.n_envs)
        order = order.to(self.device)
        shuffled = RolloutBatch(
            _flat_index(self.observations, order),
            self.actions.reshape(total, *self.actions.shape[2:])[order],
            self.values.reshape(-1)[order],
            self.log_probs.reshape(-1)[order],
            self.advantages.reshape(-1)[order],
            self.returns.reshape(-1)[order],
        )
        for start in range(0, total, batch_size):
            rows = slice(start, start + batch_size)
            yield RolloutBatch(*(_slice(field, rows) for field in shuffled))
