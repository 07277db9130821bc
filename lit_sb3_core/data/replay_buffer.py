"""Replay buffers for off-policy algorithms: ``ReplayBuffer`` and ``DictReplayBuffer``.

Storage is a set of preallocated numpy arrays of shape ``(buffer_size // n_envs, n_envs, ...)``, written in
place each environment step (cheap numpy assignments, no tensor conversion per step) and read back as
tensors on the algorithm's device when a minibatch is sampled. Row ``pos`` is the next to be written; once
``full``, the oldest row is overwritten (a circular buffer).

What each transition stores, and how the options work (Stable-Baselines3 semantics):

* ``dones`` marks the end of an episode, ``timeouts`` the episodes that ended by truncation (a time limit)
  rather than termination. With ``handle_timeout_termination`` the targets see ``done = terminated`` only,
  so truncated episodes bootstrap from their true final observation (``info["final_obs"]``), which the
  algorithm passes as ``next_obs``.
* ``optimize_memory_usage`` stores every observation once: the next observation of row ``i`` is read from
  row ``i + 1``. The final observation of a truncated episode would then be lost to the reset observation
  that follows it, so those few (one per truncated episode) are kept in a small side table; this makes the
  option correct together with ``handle_timeout_termination``, a combination SB3 refuses.
* ``n_steps > 1`` samples n-step returns: the discounted sum of up to ``n_steps`` rewards, stopping at the
  end of an episode, with the observation after the last step as ``next_observations`` and the matching
  ``gamma ** k`` in ``discounts`` (the target is ``r + (1 - done) * discount * Q(next)``). Windows never
  cross the newest transition, so they never run into the oldest data of a full buffer.

Buffers save to ``.npz`` files (``save``/``load``) holding only arrays and a JSON header: no pickle.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple, cast

import numpy as np
import torch
from gymnasium import spaces

from lit_sb3_core.errors import ConfigurationError, UnsupportedSpaceError
from lit_sb3_core.foundation.checks import check_fraction, check_positive_int, is_int, is_number
from lit_sb3_core.foundation.files import is_file_object, spooled_copy, write_atomically
from lit_sb3_core.foundation.rng import GlobalNumpyRng
from lit_sb3_core.foundation.spaces import action_dim, describe_space, space_from_json, space_to_json

__all__ = ["DictReplayBuffer", "DictReplaySamples", "NStepReplayBuffer", "ReplayBuffer", "ReplaySamples"]

_FORMAT = 1
_HEADER = "__lit_sb3_replay_buffer__"


class ReplaySamples(NamedTuple):
    """A minibatch of transitions as tensors on the buffer's device.

    ``dones`` is 1 where the target must not bootstrap; ``discounts`` is ``gamma ** k`` per row for n-step
    returns, or None for one-step returns (then the algorithm uses its ``gamma``).
    """

    observations: Any
    actions: torch.Tensor
    next_observations: Any
    dones: torch.Tensor
    rewards: torch.Tensor
    discounts: torch.Tensor | None = None


class DictReplaySamples(ReplaySamples):
    """``ReplaySamples`` whose observations are dicts of tensors (a Dict observation space): its own type, as
    SB3's ``DictReplayBufferSamples`` is, so code can tell the two apart with ``isinstance``."""

    __slots__ = ()


def _space_bytes(space: spaces.Space) -> int:
    if isinstance(space, spaces.Dict):
        return sum(_space_bytes(sub) for sub in space.spaces.values())
    dtype = np.dtype(space.dtype) if space.dtype is not None else np.dtype(np.float32)
    return int(np.prod(space.shape or (), dtype=np.float64)) * dtype.itemsize


def _physical_memory() -> int | None:
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _obs_arrays(space: spaces.Space, rows: int, n_envs: int) -> dict[str, np.ndarray]:
    """One array per observation key (``""`` for non-Dict spaces)."""
    if isinstance(space, spaces.Dict):
        return {
            key: np.zeros((rows, n_envs, *(sub.shape or ())), dtype=sub.dtype)
            for key, sub in space.spaces.items()
        }
    return {"": np.zeros((rows, n_envs, *(space.shape or ())), dtype=space.dtype)}


def _sb3_layout(arrays: dict[str, np.ndarray], is_dict: bool) -> Any:
    """The keyed arrays as SB3 exposes them: the one array of a non-Dict space, else the dict itself."""
    return arrays if is_dict else arrays[""]


def _action_dtype(space: spaces.Space) -> np.dtype:
    dtype = np.dtype(space.dtype) if space.dtype is not None else np.dtype(np.float32)
    return np.dtype(ReplayBuffer._maybe_cast_dtype(dtype))


def buffer_device(device: torch.device | str) -> torch.device:
    """The device sampled tensors go to: ``"auto"`` is CUDA when there is one, else the CPU (as SB3's)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


class ReplayBuffer:
    """Circular experience replay for off-policy algorithms (DQN, SAC, TD3, ...).

    Args:
        buffer_size: transitions kept in total (divided among ``n_envs``: ``buffer_size // n_envs`` rows).
        observation_space / action_space: the environment's spaces (single env).
        device: where sampled tensors go (``"auto"``: CUDA when there is one, else the CPU).
        n_envs: parallel environments feeding the buffer (one column each).
        optimize_memory_usage: store each observation once (next observation read from the next row).
        handle_timeout_termination: truncated episodes bootstrap (``done`` is termination only).
        n_steps: length of the n-step return (1: ordinary one-step transitions).
        gamma: discount used for n-step returns.
        seed: seed of a sampling generator of the buffer's own (algorithms under DDP give each rank one);
            None samples from numpy's global generator with SB3's calls (``GlobalNumpyRng``), as SB3's
            buffers do, so a seeded model draws SB3's minibatches.
    """

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: torch.device | str = "cpu",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
        n_steps: int = 1,
        gamma: float = 0.99,
        seed: int | None = None,
    ) -> None:
        check_positive_int("buffer_size", buffer_size)
        self.n_envs = check_positive_int("n_envs", n_envs)
        self.n_steps = check_positive_int("n_steps", n_steps)
        self.gamma = check_fraction("gamma", gamma)
        self.buffer_size = max(int(buffer_size) // self.n_envs, 1)
        self._check_memory(observation_space, action_space, optimize_memory_usage)
        if optimize_memory_usage and self.buffer_size < 2:
            raise ConfigurationError(
                "optimize_memory_usage needs room for at least 2 rows (buffer_size >= 2 * n_envs)."
            )
        self.observation_space = observation_space
        self.action_space = action_space
        self.device = buffer_device(device)
        self.optimize_memory_usage = bool(optimize_memory_usage)
        self.handle_timeout_termination = bool(handle_timeout_termination)
        self.action_dim = action_dim(action_space)
        self._is_dict = isinstance(observation_space, spaces.Dict)
        self._discrete_obs = isinstance(observation_space, spaces.Discrete)
        size, n = self.buffer_size, self.n_envs
        # One array per key ("" for a non-Dict space); ``observations`` / ``next_observations`` are the same
        # arrays in SB3's layout: one array, or a dict of arrays for a Dict space.
        self.observation_arrays = _obs_arrays(observation_space, size, n)
        self.next_observation_arrays = (
            None if optimize_memory_usage else _obs_arrays(observation_space, size, n)
        )
        self.observations = _sb3_layout(self.observation_arrays, self._is_dict)
        self.next_observations = (
            None
            if self.next_observation_arrays is None
            else _sb3_layout(self.next_observation_arrays, self._is_dict)
        )
        self.actions = np.zeros((size, n, self.action_dim), dtype=_action_dtype(action_space))
        self.rewards = np.zeros((size, n), dtype=np.float32)
        self.dones = np.zeros((size, n), dtype=np.float32)
        self.timeouts = np.zeros((size, n), dtype=np.float32)
        # optimize_memory_usage only: final observations of truncated episodes, by (row, env).
        self._final_obs: dict[tuple[int, int], dict[str, np.ndarray]] = {}
        self._has_final = np.zeros((size, n), dtype=bool) if optimize_memory_usage else None
        self.pos = 0
        self.full = False
        self.rng: np.random.Generator | GlobalNumpyRng = (
            GlobalNumpyRng() if seed is None else np.random.default_rng(seed)
        )
        # Views with (row, env) flattened into one axis: sampling indexes each array once.
        self.flat_observations = {
            key: a.reshape(-1, *a.shape[2:]) for key, a in self.observation_arrays.items()
        }
        self.flat_next_observations = (
            None
            if self.next_observation_arrays is None
            else {key: a.reshape(-1, *a.shape[2:]) for key, a in self.next_observation_arrays.items()}
        )
        self.flat_actions = self.actions.reshape(-1, self.action_dim)
        self.flat_rewards = self.rewards.reshape(-1)
        self.flat_dones = self.dones.reshape(-1)
        self.flat_timeouts = self.timeouts.reshape(-1)
        self._n_step_offsets = np.arange(self.n_steps)
        self._n_step_discounts = (self.gamma ** np.arange(self.n_steps)).astype(np.float32)

    def _check_memory(
        self, observation_space: spaces.Space, action_space: spaces.Space, optimize: bool
    ) -> None:
        """Refuse a buffer larger than the machine's memory before allocating it (numpy would reserve it
        lazily and the run would die later, or a tampered file could ask for a petabyte)."""
        rows = self.buffer_size * self.n_envs
        per_row = _space_bytes(observation_space) * (1 if optimize else 2) + 4 * action_dim(action_space) + 12
        needed, memory = rows * per_row, _physical_memory()
        if memory is not None and needed > memory:
            raise ConfigurationError(
                f"A replay buffer of buffer_size={rows} needs {needed / 2**30:.1f} GiB, more than this machine's "
                f"{memory / 2**30:.1f} GiB of memory. Lower buffer_size (or store each observation once with "
                "optimize_memory_usage=True).",
                field="buffer_size",
            )

    @staticmethod
    def _maybe_cast_dtype(dtype: Any) -> Any:
        """The dtype actions are stored as: float64 becomes float32 (what the networks train on), as SB3's."""
        return np.float32 if np.dtype(dtype) == np.float64 else dtype

    # size -----------------------------------------------------------------------------------------------
    def size(self) -> int:
        """Rows filled so far (each row holds one transition per environment), as SB3 counts."""
        return self.buffer_size if self.full else self.pos

    def __len__(self) -> int:
        """Transitions stored, over all environments."""
        return self.size() * self.n_envs

    def reset(self) -> None:
        """Forget every transition (the arrays are reused)."""
        self.pos = 0
        self.full = False
        self._final_obs.clear()
        if self._has_final is not None:
            self._has_final[:] = False

    # writing --------------------------------------------------------------------------------------------
    def _write_obs(self, store: dict[str, np.ndarray], row: int, obs: Any) -> None:
        if self._is_dict:
            for key, array in store.items():
                array[row] = obs[key]
        elif self._discrete_obs:
            store[""][row] = np.asarray(obs).reshape(self.n_envs)
        else:
            store[""][row] = obs

    def add(
        self,
        obs: Any,
        next_obs: Any,
        action: np.ndarray,
        reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | Sequence[dict[str, Any]] | None = None,
    ) -> None:
        """Store one vector step: arrays with a leading ``n_envs`` axis.

        SB3's call ``add(obs, next_obs, action, reward, done, infos)`` works too: with a list of info dicts
        in place of ``truncated``, ``done`` covers both endings and ``info["TimeLimit.truncated"]`` marks
        the truncated ones.

        ``next_obs`` must be the true next observation (the final one where an episode ended), ``action``
        the action as the algorithm trains on it (scaled to [-1, 1] for Box spaces).
        """
        pos = self.pos
        terminated = np.asarray(terminated, dtype=bool).reshape(-1)
        if isinstance(truncated, (list, tuple)) and all(isinstance(info, dict) for info in truncated):
            truncated = np.array([bool(info.get("TimeLimit.truncated", False)) for info in truncated])
            terminated = terminated & ~truncated
        truncated = np.zeros_like(terminated) if truncated is None else np.asarray(truncated, dtype=bool)
        self._write_obs(self.observation_arrays, pos, obs)
        if self.next_observation_arrays is not None:
            self._write_obs(self.next_observation_arrays, pos, next_obs)
        else:
            self._write_obs(self.observation_arrays, (pos + 1) % self.buffer_size, next_obs)
        self.actions[pos] = np.asarray(action).reshape(self.n_envs, self.action_dim)
        self.rewards[pos] = reward
        ended = terminated | truncated
        self.dones[pos] = ended
        timeouts = truncated & ~terminated
        self.timeouts[pos] = timeouts
        if self._has_final is not None:
            self._forget_final(pos)
            if self.handle_timeout_termination and timeouts.any():
                for env in np.flatnonzero(timeouts):
                    self._keep_final(pos, int(env), next_obs)
        self.pos += 1
        if self.pos == self.buffer_size:
            self.full = True
            self.pos = 0

    def extend(
        self,
        obs: Any,
        next_obs: Any,
        action: np.ndarray,
        reward: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | Sequence[Any] | None = None,
    ) -> None:
        """Store several vector steps at once (SB3's ``extend``): ``add``'s arguments with a leading step
        axis (``(steps, n_envs, ...)``; Dict observations as a dict of such arrays)."""
        steps = len(action)

        def step(value: Any, index: int) -> Any:
            if isinstance(value, dict):
                return {key: array[index] for key, array in value.items()}
            return None if value is None else value[index]

        for index in range(steps):
            self.add(
                step(obs, index),
                step(next_obs, index),
                action[index],
                reward[index],
                terminated[index],
                step(truncated, index),
            )

    def _forget_final(self, row: int) -> None:
        assert self._has_final is not None
        if self._has_final[row].any():
            for env in np.flatnonzero(self._has_final[row]):
                self._final_obs.pop((row, int(env)), None)
            self._has_final[row] = False

    def _keep_final(self, row: int, env: int, next_obs: Any) -> None:
        assert self._has_final is not None
        if self._is_dict:
            value = {key: np.array(next_obs[key][env]) for key in self.observation_arrays}
        else:
            value = {
                "": np.array(
                    np.asarray(next_obs).reshape(self.n_envs, *(self.observation_space.shape or ()))[env]
                )
            }
        self._final_obs[(row, env)] = value
        self._has_final[row, env] = True

    def truncate_last_transition(self) -> None:
        """End the newest transitions' episodes as truncated: the environments are about to be reset.

        Called when a run (re)starts, so n-step windows do not run across the reset and, with
        ``optimize_memory_usage``, the next observation is not overwritten by the reset observation.
        """
        if self.size() == 0:
            return
        row = (self.pos - 1) % self.buffer_size
        open_envs = np.flatnonzero(self.dones[row] == 0)
        if open_envs.size == 0:
            return
        if self._has_final is not None and self.handle_timeout_termination:
            following = (row + 1) % self.buffer_size
            for env in open_envs:
                value = {
                    key: np.array(array[following, env]) for key, array in self.observation_arrays.items()
                }
                self._final_obs[(row, int(env))] = value
                self._has_final[row, env] = True
        self.dones[row, open_envs] = 1.0
        self.timeouts[row, open_envs] = 1.0

    # sampling -------------------------------------------------------------------------------------------
    def sample(self, batch_size: int, env: Any = None) -> ReplaySamples:
        """A minibatch of ``batch_size`` transitions drawn uniformly, with replacement.

        ``env``: a ``VecNormalize`` (SB3's argument) whose current statistics normalize the sampled
        observations and rewards. Off-policy algorithms store the original, unnormalized values and pass their
        training env's ``VecNormalize`` here, so old transitions are normalized with today's statistics.
        """
        rows = self._sample_rows(batch_size)
        envs = self.rng.integers(0, self.n_envs, size=batch_size) if self.n_envs > 1 else None
        return self._get_samples(rows, envs, env)

    @staticmethod
    def normalize_observations(obs: Any, env: Any = None) -> Any:
        """``obs`` (an array, or a dict of arrays) normalized by the ``VecNormalize`` ``env``'s current
        statistics; unchanged without one. Buffers hold original values and normalize what they sample."""
        return obs if env is None else env.normalize_obs(obs)

    @staticmethod
    def normalize_rewards(reward: np.ndarray, env: Any = None) -> np.ndarray:
        """``reward`` scaled by the ``VecNormalize`` ``env`` (float32); unchanged without one."""
        return reward if env is None else np.asarray(env.normalize_reward(reward), dtype=np.float32)

    # SB3's names, for buffers of the user's written against SB3's
    _normalize_obs = normalize_observations
    _normalize_reward = normalize_rewards

    def _normalized_obs_arrays(self, arrays: dict[str, np.ndarray], env: Any) -> dict[str, np.ndarray]:
        """The keyed observation arrays normalized by ``env`` (given to it in SB3's layout)."""
        if env is None:
            return arrays
        normalized = self.normalize_observations(_sb3_layout(arrays, self._is_dict), env)
        return dict(normalized) if self._is_dict else {"": normalized}

    @property
    def samples_type(self) -> type[ReplaySamples]:
        """The minibatch type: ``DictReplaySamples`` for a Dict observation space, else ``ReplaySamples``."""
        return DictReplaySamples if self._is_dict else ReplaySamples

    def _sample_rows(self, batch_size: int) -> np.ndarray:
        if self.size() == 0:
            raise RuntimeError("Cannot sample from an empty replay buffer: add transitions first.")
        if self.optimize_memory_usage and self.full:
            # Row `pos` holds the newest next observation, not a valid transition: skip it.
            return (self.rng.integers(1, self.buffer_size, size=batch_size) + self.pos) % self.buffer_size
        return self.rng.integers(0, self.size(), size=batch_size)

    def _flat(self, rows: np.ndarray, envs: np.ndarray | None) -> np.ndarray:
        return rows if envs is None else rows * self.n_envs + envs

    def _next_obs(self, rows: np.ndarray, envs: np.ndarray | None) -> dict[str, np.ndarray]:
        if self.flat_next_observations is not None:
            flat = self._flat(rows, envs)
            return {key: array[flat] for key, array in self.flat_next_observations.items()}
        flat = self._flat((rows + 1) % self.buffer_size, envs)
        result = {key: array[flat] for key, array in self.flat_observations.items()}
        assert self._has_final is not None
        env_ids = np.zeros_like(rows) if envs is None else envs
        for i in np.flatnonzero(self._has_final[rows, env_ids]):
            final = self._final_obs[(int(rows[i]), int(env_ids[i]))]
            for key, values in result.items():
                values[i] = final[key]
        return result

    def to_torch(self, array: np.ndarray) -> torch.Tensor:
        tensor = torch.from_numpy(array)
        return tensor if self.device.type == "cpu" else tensor.to(self.device, non_blocking=True)

    def observations_to_torch(self, arrays: dict[str, np.ndarray]) -> Any:
        if self._is_dict:
            return {key: self.to_torch(array) for key, array in arrays.items()}
        return self.to_torch(arrays[""])

    def _get_samples(
        self, rows: np.ndarray, envs: np.ndarray | None = None, env: Any = None
    ) -> ReplaySamples:
        """The transitions at ``rows`` of the envs ``envs`` (random envs when None, as SB3's), normalized by
        the ``VecNormalize`` ``env`` when given."""
        if envs is None and self.n_envs > 1:
            envs = self.rng.integers(0, self.n_envs, size=len(rows))
        flat = self._flat(rows, envs)
        if self.n_steps == 1:
            last_rows, last_flat = rows, flat
            rewards = self.normalize_rewards(self.flat_rewards[flat], env)
            discounts = None
        else:
            last_rows, rewards, discounts = self._n_step_returns(rows, envs, env)
            last_flat = self._flat(last_rows, envs)
        dones = self.flat_dones[last_flat]
        if self.handle_timeout_termination:
            dones = dones - self.flat_timeouts[last_flat]  # timeouts are a subset of dones
        observations = {key: array[flat] for key, array in self.flat_observations.items()}
        return self.samples_type(
            observations=self.observations_to_torch(self._normalized_obs_arrays(observations, env)),
            actions=self.to_torch(self.flat_actions[flat]),
            next_observations=self.observations_to_torch(
                self._normalized_obs_arrays(self._next_obs(last_rows, envs), env)
            ),
            dones=self.to_torch(dones.reshape(-1, 1)),
            rewards=self.to_torch(rewards.reshape(-1, 1)),
            discounts=None if discounts is None else self.to_torch(discounts.reshape(-1, 1)),
        )

    def _n_step_returns(
        self, rows: np.ndarray, envs: np.ndarray | None, env: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Last row of each window, the discounted reward sums and ``gamma ** steps`` (see module doc); each
        reward of a window is normalized by the ``VecNormalize`` ``env`` before the sum, as SB3's."""
        seq_rows = (rows[:, None] + self._n_step_offsets) % self.buffer_size  # (batch, n)
        seq_flat = seq_rows if envs is None else seq_rows * self.n_envs + envs[:, None]
        newest = (self.pos - 1) % self.buffer_size
        ended = (self.flat_dones[seq_flat] > 0) | (seq_rows == newest)
        last = np.where(ended.any(axis=1), ended.argmax(axis=1), self.n_steps - 1)
        within = self._n_step_offsets[None, :] <= last[:, None]
        window = self.normalize_rewards(self.flat_rewards[seq_flat], env)
        rewards = (window * self._n_step_discounts * within).sum(axis=1)
        discounts = (self.gamma ** (last + 1)).astype(np.float32)
        return seq_rows[np.arange(len(rows)), last], rewards.astype(np.float32), discounts

    # persistence ----------------------------------------------------------------------------------------
    def storage_header(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "class": f"{type(self).__module__}:{type(self).__qualname__}",
            "buffer_size": self.buffer_size * self.n_envs,
            "rows": self.buffer_size,
            "n_envs": self.n_envs,
            "pos": self.pos,
            "full": self.full,
            "optimize_memory_usage": self.optimize_memory_usage,
            "handle_timeout_termination": self.handle_timeout_termination,
            "n_steps": self.n_steps,
            "gamma": self.gamma,
            "observation_space": space_to_json(self.observation_space),
            "action_space": space_to_json(self.action_space),
            # numpy's global state belongs to the process (checkpoints keep it), not to the file
            "rng": self.rng.bit_generator.state if isinstance(self.rng, np.random.Generator) else None,
            "final_keys": [[row, env] for row, env in self._final_obs],
        }

    def storage_arrays(self) -> dict[str, np.ndarray]:
        """The filled part of every array, by name (what files and checkpoints hold)."""
        rows = self.size()
        obs_rows = rows + 1 if (self.optimize_memory_usage and not self.full) else rows
        obs_rows = min(obs_rows, self.buffer_size)
        arrays: dict[str, np.ndarray] = {}
        for key, array in self.observation_arrays.items():
            arrays[f"observations.{key}"] = array[:obs_rows]
        if self.next_observation_arrays is not None:
            for key, array in self.next_observation_arrays.items():
                arrays[f"next_observations.{key}"] = array[:rows]
        arrays["actions"] = self.actions[:rows]
        arrays["rewards"] = self.rewards[:rows]
        arrays["dones"] = self.dones[:rows]
        arrays["timeouts"] = self.timeouts[:rows]
        for key in self.observation_arrays:
            values = [self._final_obs[k][key] for k in self._final_obs]
            if values:
                arrays[f"final_obs.{key}"] = np.stack(values)
        return arrays

    def restore_storage(self, header: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
        self.reset()
        for name, array in arrays.items():
            group, _, key = name.partition(".")
            if group in ("observations", "next_observations"):
                store = self.observation_arrays if group == "observations" else self.next_observation_arrays
                assert store is not None  # _check_stored found a target for the array
                store[key][: len(array)] = array
            elif group in ("actions", "rewards", "dones", "timeouts"):
                getattr(self, group)[: len(array)] = array
        for i, (row, env) in enumerate(header.get("final_keys", [])):
            self._final_obs[(row, env)] = {
                key: np.array(arrays[f"final_obs.{key}"][i]) for key in self.observation_arrays
            }
            assert self._has_final is not None
            self._has_final[row, env] = True
        self.pos = int(header["pos"])
        self.full = bool(header["full"])
        if header["rng"] is not None:  # saved with a generator of its own: continue it
            self.rng = np.random.default_rng()
            self.rng.bit_generator.state = header["rng"]

    def storage_targets(self) -> dict[str, np.ndarray]:
        """The arrays ``restore_storage`` writes into, by the names ``storage_arrays`` saves them under.

        A stored array is checked against its target (shape, dtype, rows) before anything is restored; a
        subclass that saves more arrays adds their targets here. Arrays with no target are never read (a
        file of a subclass, such as HER's, loads into its base class).
        """
        return {
            **{f"observations.{k}": a for k, a in self.observation_arrays.items()},
            **{f"next_observations.{k}": a for k, a in (self.next_observation_arrays or {}).items()},
            "actions": self.actions,
            "rewards": self.rewards,
            "dones": self.dones,
            "timeouts": self.timeouts,
        }

    def _check_stored(self, header: dict[str, Any], arrays: dict[str, np.ndarray], source: str) -> None:
        """What a file or checkpoint holds fits this buffer: array shapes and dtypes, positions."""
        stores = self.storage_targets()
        finals = {f"final_obs.{k}": a for k, a in self.observation_arrays.items()}
        for name, array in arrays.items():
            store = stores.get(name)
            if store is None and name in finals:
                if array.shape[1:] != finals[name].shape[2:]:
                    raise ConfigurationError(
                        f"{source} holds {name} of shape {array.shape}, not (n, *observation)."
                    )
                continue
            if store is None:
                continue  # never read: restore_storage restores only what it has a target for
            if array.ndim != store.ndim or array.shape[1:] != store.shape[1:] or len(array) > len(store):
                raise ConfigurationError(
                    f"{source} holds the replay buffer array {name!r} of shape {array.shape}; this buffer's is "
                    f"{store.shape} (at most {len(store)} rows)."
                )
            if not np.can_cast(array.dtype, store.dtype, casting="same_kind"):
                raise ConfigurationError(
                    f"{source} holds {name!r} as {array.dtype}, this buffer needs {store.dtype}."
                )
        pos, full = header.get("pos"), header.get("full")
        if not (is_int(pos, 0) and pos < self.buffer_size):
            raise ConfigurationError(
                f"{source} holds a replay buffer position {pos!r} outside 0..{self.buffer_size - 1}."
            )
        if not isinstance(full, bool):
            raise ConfigurationError(f"{source} holds full={full!r}, not true or false.")
        keys = header.get("final_keys", [])
        if not isinstance(keys, list) or not all(
            isinstance(k, list) and len(k) == 2 and 0 <= k[0] < self.buffer_size and 0 <= k[1] < self.n_envs
            for k in keys
        ):
            raise ConfigurationError(
                f"{source} holds final_keys that are not (row, env) positions of this buffer."
            )
        if any(len(finals_array) != len(keys) for name, finals_array in arrays.items() if name in finals):
            raise ConfigurationError(
                f"{source} holds a different number of final observations than final_keys."
            )
        if header.get("rng", False) is not None and not isinstance(header.get("rng"), dict):
            raise ConfigurationError(f"{source} holds no valid random generator state.")

    def _check_compatible(self, header: dict[str, Any], source: str) -> None:
        checks = [
            ("observation_space", space_to_json(self.observation_space), describe_space),
            ("action_space", space_to_json(self.action_space), describe_space),
        ]
        for key, mine, describe in checks:
            if header[key] != mine:
                raise ConfigurationError(
                    f"{source} holds a replay buffer for {key.replace('_', ' ')} "
                    f"{describe(space_from_json(header[key]))}, not {describe(space_from_json(mine))}."
                )
        for key, value in (
            ("n_envs", self.n_envs),
            ("rows", self.buffer_size),
            ("optimize_memory_usage", self.optimize_memory_usage),
        ):
            if header[key] != value:
                raise ConfigurationError(
                    f"{source} holds a replay buffer with {key}={header[key]!r}, this one has {key}={value!r}. "
                    "Create the buffer with the same buffer_size, n_envs and optimize_memory_usage."
                )

    def save(self, path: str | Path | IO[bytes]) -> Path | IO[bytes]:
        """Write the buffer's contents as a NumPy archive (arrays and a JSON header; no pickle) to ``path``,
        ``.npz`` added when it has no suffix. A name SB3 gives (``.pkl``) is kept, as ``VecNormalize.save``
        keeps it, so scripts that look for SB3's file names find them."""
        header = np.frombuffer(json.dumps(self.storage_header()).encode(), dtype=np.uint8)
        arrays: dict[str, Any] = {_HEADER: header, **self.storage_arrays()}
        if is_file_object(path):  # SB3's save_replay_buffer(file_object): written in place, left open
            np.savez(cast("IO[bytes]", path), **arrays)
            return cast("IO[bytes]", path)
        target = Path(cast("str | Path", path))
        if not target.suffix:
            target = target.with_suffix(".npz")
        # Written beside the target and renamed into place: a failed save (full disk, interrupt) keeps the
        # previous file as it was and leaves no partial file behind.
        return write_atomically(target, lambda handle: np.savez(handle, **arrays))

    @classmethod
    def load(cls, path: str | Path | IO[bytes], device: torch.device | str = "cpu") -> ReplayBuffer:
        """Rebuild a buffer written by ``save``; never unpickles. ``path`` may be an open binary file, read
        from its start and left open."""
        if is_file_object(path):
            with spooled_copy(cast("IO[bytes]", path), ".npz") as copy:
                return cls.load(copy, device)
        path = cast("str | Path", path)
        source = Path(path)
        if not source.exists() and source.suffix != ".npz":
            source = source.with_name(source.name + ".npz")
        if not source.exists():
            raise FileNotFoundError(f"No replay buffer file at {str(path)!r}.")
        try:
            _check_npz_members(source)
            with np.load(source, allow_pickle=False) as data:
                header = json.loads(bytes(data[_HEADER]).decode())
                arrays = {name: data[name] for name in data.files if name != _HEADER}
        except (KeyError, ValueError, OSError, EOFError, zipfile.BadZipFile, RecursionError) as exc:
            raise ConfigurationError(f"{str(path)!r} is not a lit-sb3 replay buffer file ({exc}).") from None
        if not isinstance(header, dict) or not isinstance(header.get("format", 0), int):
            raise ConfigurationError(
                f"{str(path)!r} is not a lit-sb3 replay buffer file (its header is no dict)."
            )
        if header.get("format", 0) > _FORMAT:
            raise ConfigurationError(
                f"{str(path)!r} uses a newer replay buffer format; upgrade lit-sb3-core."
            )
        _check_header(header, repr(str(path)))
        try:
            buffer = cls(
                header["buffer_size"],
                space_from_json(header["observation_space"]),
                space_from_json(header["action_space"]),
                device=device,
                n_envs=header["n_envs"],
                optimize_memory_usage=header["optimize_memory_usage"],
                handle_timeout_termination=header["handle_timeout_termination"],
                n_steps=header["n_steps"],
                gamma=header["gamma"],
            )
        except KeyError as exc:
            raise ConfigurationError(
                f"{str(path)!r} is not a lit-sb3 replay buffer file (no {exc} in its header)."
            ) from None
        except (ValueError, TypeError) as exc:  # ConfigurationError included: a value the buffer refuses
            raise ConfigurationError(
                f"{str(path)!r} holds a replay buffer that cannot be rebuilt: {exc}"
            ) from None
        buffer._check_stored(header, arrays, repr(str(path)))
        try:
            buffer.restore_storage(header, arrays)
        except (KeyError, ValueError, TypeError) as exc:  # a tampered rng state, say
            raise ConfigurationError(
                f"{str(path)!r} holds a replay buffer whose contents cannot be restored "
                f"({type(exc).__name__}: {exc}); the file is damaged or was tampered with."
            ) from None
        return buffer

    def state_dict(self) -> dict[str, Any]:
        """Contents for a Lightning checkpoint: tensors and plain values only (``weights_only`` loads it)."""
        return {
            "header": json.loads(json.dumps(self.storage_header())),
            "arrays": {
                name: torch.from_numpy(np.ascontiguousarray(a)) for name, a in self.storage_arrays().items()
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        header, tensors = state.get("header"), state.get("arrays")
        if not isinstance(header, dict) or not isinstance(tensors, dict):
            raise ConfigurationError("The checkpoint's replay buffer entry has no header and arrays.")
        self._check_compatible(header, "The checkpoint")
        arrays = {
            name: tensor.numpy() for name, tensor in tensors.items() if isinstance(tensor, torch.Tensor)
        }
        self._check_stored(header, arrays, "The checkpoint")
        self.restore_storage(header, arrays)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(size={len(self)}/{self.buffer_size * self.n_envs}, n_envs={self.n_envs}, "
            f"n_steps={self.n_steps}, optimize_memory_usage={self.optimize_memory_usage})"
        )


class DictReplayBuffer(ReplayBuffer):
    """``ReplayBuffer`` for ``Dict`` observation spaces (one array per key), as SB3 names it."""

    def __init__(self, buffer_size: int, observation_space: spaces.Space, *args: Any, **kwargs: Any) -> None:
        if not isinstance(observation_space, spaces.Dict):
            raise UnsupportedSpaceError(
                f"DictReplayBuffer must be used with Dict obs space only, got {describe_space(observation_space)}; "
                "use ReplayBuffer."
            )
        super().__init__(buffer_size, observation_space, *args, **kwargs)


_MAX_INFLATION = 200
_INFLATION_FLOOR_BYTES = 64 * 2**20


def _check_npz_members(path: Path) -> None:
    """Before ``np.load`` reads anything: no member inflates like a decompression bomb (``save`` stores)."""
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.file_size > _INFLATION_FLOOR_BYTES and info.file_size > _MAX_INFLATION * max(
                info.compress_size, 1
            ):
                raise ConfigurationError(
                    f"{str(path)!r}: {info.filename} would inflate from {info.compress_size} to "
                    f"{info.file_size} bytes: the file is a decompression bomb, not a saved replay buffer."
                )


def _check_header(header: dict[str, Any], source: str) -> None:
    """What a replay buffer file declares, checked before a buffer of that size is allocated."""
    from lit_sb3_core.foundation.spaces import check_space_json

    for key in ("buffer_size", "n_envs", "n_steps"):
        if key in header and not is_int(header[key], 1):
            raise ConfigurationError(f"{source}: {key} must be a positive integer, got {header[key]!r:.80}.")
    gamma = header.get("gamma")
    if "gamma" in header and not (is_number(gamma) and 0 <= gamma <= 1):
        raise ConfigurationError(f"{source}: gamma must be a number in [0, 1], got {gamma!r:.80}.")
    for key in ("optimize_memory_usage", "handle_timeout_termination"):
        if key in header and not isinstance(header[key], bool):
            raise ConfigurationError(f"{source}: {key} must be true or false, got {header[key]!r:.80}.")
    for key in ("observation_space", "action_space"):
        if key in header:
            try:
                check_space_json(header[key], key)
            except ValueError as exc:
                raise ConfigurationError(f"{source}: {key} is not a valid space: {exc}") from None
    if not all(k in header for k in ("buffer_size", "n_envs", "observation_space", "action_space")):
        return  # the constructor names the missing key
    if "rows" in header and header["rows"] * header["n_envs"] != header["buffer_size"]:
        raise ConfigurationError(
            f"{source}: rows={header['rows']!r} times n_envs={header['n_envs']} is not buffer_size="
            f"{header['buffer_size']}: the header contradicts itself (damaged or tampered with)."
        )
    # the constructor refuses a buffer larger than the machine's memory before allocating it


class NStepReplayBuffer(ReplayBuffer):
    """``ReplayBuffer`` with n-step returns (3 steps by default), as SB3 names it; off-policy algorithms
    build one when ``n_steps > 1``."""

    def __init__(self, *args: Any, n_steps: int = 3, gamma: float = 0.99, **kwargs: Any) -> None:
        super().__init__(*args, **{**kwargs, "n_steps": n_steps, "gamma": gamma})
