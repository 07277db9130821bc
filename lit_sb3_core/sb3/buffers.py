"""SB3's numpy rollout buffers, ``RolloutBuffer`` and ``DictRolloutBuffer``, with SB3's constructor and API.

lit-sb3's own on-policy loop keeps its rollout in tensors (``lit_sb3_core.data.rollout_buffer``), laid out
for its update; code written for SB3 builds, fills and reads SB3's buffer instead: numpy arrays of shape
``(buffer_size, n_envs, ...)`` in the spaces' own dtypes, one ``add`` per vector step, GAE computed by the
same ``compute_gae`` lit-sb3 trains with, and ``get(batch_size)`` yielding shuffled minibatches as tensors
(``RolloutBufferSamples``, lit-sb3's ``RolloutBatch``: the same six fields). Actions are sampled as float32,
as SB3 does (a log-probability of integer actions is computed on floats anyway).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.data.replay_buffer import buffer_device
from lit_sb3_core.data.rollout_buffer import RolloutBatch, compute_gae
from lit_sb3_core.errors import UnsupportedSpaceError
from lit_sb3_core.foundation.checks import check_fraction, check_positive_int
from lit_sb3_core.foundation.spaces import action_dim, describe_space, to_numpy

__all__ = ["DictRolloutBatch", "DictRolloutBuffer", "RolloutBuffer", "stored_obs_shape"]


class DictRolloutBatch(RolloutBatch):
    """A ``RolloutBatch`` whose observations are dicts of tensors: its own type, as SB3's
    ``DictRolloutBufferSamples`` is, so code can tell the two apart with ``isinstance``."""

    __slots__ = ()


def stored_obs_shape(space: spaces.Space) -> tuple[int, ...]:
    """The shape one observation is stored with: a Discrete observation is one integer, shape ``(1,)``."""
    if isinstance(space, spaces.Discrete):
        return (1,)
    return tuple(int(n) for n in (space.shape or ()))


class RolloutBuffer:
    """One on-policy rollout of ``buffer_size`` steps of ``n_envs`` environments, in numpy arrays.

    Args:
        buffer_size: steps per environment (the algorithm's ``n_steps``).
        observation_space / action_space: one environment's spaces.
        device: where ``get`` puts the sampled tensors (``"auto"``: CUDA when there is one).
        gae_lambda: GAE's bias/variance trade-off (1: Monte-Carlo returns with a bootstrap).
        gamma: discount factor.
        n_envs: parallel environments (one column each).
    """

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: torch.device | str = "auto",
        gae_lambda: float = 1.0,
        gamma: float = 0.99,
        n_envs: int = 1,
    ) -> None:
        self.buffer_size = check_positive_int("buffer_size", buffer_size)
        self.n_envs = check_positive_int("n_envs", n_envs)
        self.gae_lambda = check_fraction("gae_lambda", gae_lambda)
        self.gamma = check_fraction("gamma", gamma)
        self._check_space(observation_space)
        self.observation_space, self.action_space = observation_space, action_space
        self.device = buffer_device(device)
        self.action_dim = action_dim(action_space)
        self.obs_shape: Any = stored_obs_shape(observation_space)
        self.reset()

    def _check_space(self, observation_space: spaces.Space) -> None:
        if isinstance(observation_space, spaces.Dict):
            raise UnsupportedSpaceError(
                f"RolloutBuffer stores one observation array; the space is {describe_space(observation_space)}. "
                "Use DictRolloutBuffer for Dict observation spaces."
            )

    def _observation_storage(self) -> Any:
        space = self.observation_space
        return np.zeros((self.buffer_size, self.n_envs, *self.obs_shape), dtype=space.dtype)

    def reset(self) -> None:
        """Empty the buffer: fresh zeroed arrays, ``pos = 0``, not ``full``."""
        size = (self.buffer_size, self.n_envs)
        self.observations = self._observation_storage()
        self.actions = np.zeros((*size, self.action_dim), dtype=self.action_space.dtype)
        self.rewards = np.zeros(size, dtype=np.float32)
        self.returns = np.zeros(size, dtype=np.float32)
        self.episode_starts = np.zeros(size, dtype=np.float32)
        self.values = np.zeros(size, dtype=np.float32)
        self.log_probs = np.zeros(size, dtype=np.float32)
        self.advantages = np.zeros(size, dtype=np.float32)
        self.pos = 0
        self.full = False

    def size(self) -> int:
        """Steps stored per environment (``buffer_size`` once full)."""
        return self.buffer_size if self.full else self.pos

    def _store_obs(self, obs: Any) -> None:
        self.observations[self.pos] = np.asarray(obs).reshape(self.n_envs, *self.obs_shape)

    def add(
        self,
        obs: Any,
        action: Any,
        reward: Any,
        episode_start: Any,
        value: torch.Tensor,
        log_prob: torch.Tensor,
    ) -> None:
        """Store one vector step: ``obs`` is the observation ``action`` was chosen from, ``episode_start``
        marks the envs whose episode began with it."""
        if self.pos >= self.buffer_size:
            raise RuntimeError("RolloutBuffer is full: call reset() before adding more steps.")
        self._store_obs(_numpy(obs))
        self.actions[self.pos] = _numpy(action).reshape(self.n_envs, self.action_dim)
        self.rewards[self.pos] = np.asarray(reward)
        self.episode_starts[self.pos] = np.asarray(episode_start)
        self.values[self.pos] = _numpy(value).reshape(-1)
        self.log_probs[self.pos] = _numpy(log_prob).reshape(-1)
        self.pos += 1
        if self.pos == self.buffer_size:
            self.full = True

    def compute_returns_and_advantage(self, last_values: torch.Tensor, dones: np.ndarray) -> None:
        """GAE advantages and the value targets ``returns = advantages + values``.

        ``last_values`` is V of the observation after the last step, ``dones`` whether that step ended
        each env's episode (then nothing is bootstrapped).
        """
        self.advantages = compute_gae(
            self.rewards,
            self.values,
            self.episode_starts,
            _numpy(last_values).reshape(-1).astype(np.float32),
            np.asarray(dones).astype(np.float32),
            self.gamma,
            self.gae_lambda,
        )
        self.returns = self.advantages + self.values

    @staticmethod
    def swap_and_flatten(arr: np.ndarray) -> np.ndarray:
        """``(steps, n_envs, ...)`` to ``(n_envs * steps, ...)``, each env's steps in order (SB3's layout)."""
        shape = arr.shape if arr.ndim >= 3 else (*arr.shape, 1)
        return arr.swapaxes(0, 1).reshape(shape[0] * shape[1], *shape[2:])

    def _flat_observations(self) -> Any:
        return self.swap_and_flatten(self.observations)

    def get(self, batch_size: int | None = None) -> Iterator[RolloutBatch]:
        """The rollout in shuffled minibatches of ``batch_size`` (all of it when None); the last may be
        smaller. The buffer must be full."""
        if not self.full:
            raise RuntimeError(
                f"RolloutBuffer.get() needs a full buffer: {self.pos} of {self.buffer_size} steps are stored."
            )
        total = self.buffer_size * self.n_envs
        batch_size = total if batch_size is None else check_positive_int("batch_size", batch_size)
        flat = self._flattened()
        indices = np.random.permutation(total)
        for start in range(0, total, batch_size):
            yield self._samples(flat, indices[start : start + batch_size])

    def _flattened(self) -> dict[str, Any]:
        return {
            "observations": self._flat_observations(),
            "actions": self.swap_and_flatten(self.actions),
            **{
                name: self.swap_and_flatten(getattr(self, name)).reshape(-1)
                for name in ("values", "log_probs", "advantages", "returns")
            },
        }

    def _get_samples(self, batch_inds: np.ndarray, env: Any = None) -> RolloutBatch:
        """The transitions at ``batch_inds`` of the flattened rollout (``env`` is unused, as in SB3)."""
        return self._samples(self._flattened(), batch_inds)

    def _samples(self, flat: dict[str, Any], indices: np.ndarray) -> RolloutBatch:
        observations = flat["observations"]
        if isinstance(observations, dict):
            obs: Any = {key: self.to_torch(array[indices]) for key, array in observations.items()}
            batch_type: type[RolloutBatch] = DictRolloutBatch
        else:
            obs, batch_type = self.to_torch(observations[indices]), RolloutBatch
        return batch_type(
            obs,
            self.to_torch(flat["actions"][indices].astype(np.float32, copy=False)),
            self.to_torch(flat["values"][indices]),
            self.to_torch(flat["log_probs"][indices]),
            self.to_torch(flat["advantages"][indices]),
            self.to_torch(flat["returns"][indices]),
        )

    def to_torch(self, array: np.ndarray, copy: bool = True) -> torch.Tensor:
        """``array`` as a tensor on the buffer's device (a copy unless ``copy=False`` on the CPU)."""
        if copy:
            return torch.tensor(array, device=self.device)
        return torch.as_tensor(array, device=self.device)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(buffer_size={self.buffer_size}, n_envs={self.n_envs}, pos={self.pos})"


class DictRolloutBuffer(RolloutBuffer):
    """``RolloutBuffer`` for ``Dict`` observation spaces: ``observations`` is a dict of arrays, one per key."""

    def _check_space(self, observation_space: spaces.Space) -> None:
        if not isinstance(observation_space, spaces.Dict):
            raise UnsupportedSpaceError(
                "DictRolloutBuffer must be used with Dict obs space only, got "
                f"{describe_space(observation_space)}; use RolloutBuffer."
            )

    def __init__(self, buffer_size: int, observation_space: spaces.Space, *args: Any, **kwargs: Any) -> None:
        super().__init__(buffer_size, observation_space, *args, **kwargs)
        assert isinstance(observation_space, spaces.Dict)
        self.obs_shape = {key: stored_obs_shape(sub) for key, sub in observation_space.spaces.items()}

    def _observation_storage(self) -> Any:
        space = self.observation_space
        assert isinstance(space, spaces.Dict)
        return {
            key: np.zeros((self.buffer_size, self.n_envs, *stored_obs_shape(sub)), dtype=sub.dtype)
            for key, sub in space.spaces.items()
        }

    def _store_obs(self, obs: Any) -> None:
        for key, array in self.observations.items():
            array[self.pos] = np.asarray(obs[key]).reshape(self.n_envs, *array.shape[2:])

    def _flat_observations(self) -> Any:
        return {key: self.swap_and_flatten(array) for key, array in self.observations.items()}


def _numpy(value: Any) -> Any:
    """A tensor (or a dict of tensors) as numpy; numpy and plain values pass through."""
    if isinstance(value, torch.Tensor):
        return to_numpy(value)
    if isinstance(value, dict):
        return {key: _numpy(sub) for key, sub in value.items()}
    return np.asarray(value)
