"""``model.rollout_buffer`` as SB3 code reads it: SB3's numpy ``RolloutBuffer`` over lit-sb3's tensor rollout.

An on-policy algorithm trains on ``self.rollout`` (``lit_sb3_core.data.rollout_buffer.RolloutBuffer``: tensors
laid out for the update). SB3 code reads ``model.rollout_buffer.actions`` and the other fields as numpy arrays
of shape ``(buffer_size, n_envs, ...)``, calls ``size()`` and ``get(batch_size)``, checks ``full``. This view
gives it that without a second copy of the rollout: each field is the tensor's ``.numpy()`` (on the CPU the
same memory, so a write through the view is seen by training; on an accelerator a copy made on read). It is
an instance of SB3's ``RolloutBuffer`` / ``DictRolloutBuffer``, so ``isinstance`` checks hold and ``get`` and
``swap_and_flatten`` are SB3's.

Differences, by design: Discrete and MultiDiscrete actions stay integers (the tensors' dtype, so that no copy
is made); ``get`` casts them to float32 as SB3 does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from lit_sb3_core.data.rollout_buffer import RolloutBuffer as CoreRollout
from lit_sb3_core.sb3.buffers import DictRolloutBuffer, RolloutBuffer

__all__ = ["rollout_view"]


def _numpy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _numpy(sub) for key, sub in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().numpy() if value.device.type == "cpu" else value.detach().cpu().numpy()
    return value


class _CoreView:
    """SB3's buffer attributes read from (and, on the CPU, written to) the core rollout ``self.core``."""

    core: CoreRollout

    def __init__(self, core: CoreRollout) -> None:  # SB3's constructor is not called: the core owns storage
        self.core = core
        self.observation_space, self.action_space = core.observation_space, core.action_space
        self.buffer_size, self.n_envs = core.n_steps, core.n_envs
        self.gamma, self.gae_lambda = core.gamma, core.gae_lambda
        self.device = core.device
        self.action_dim = int(np.prod(core.actions.shape[2:], dtype=int)) if core.actions.ndim > 2 else 1
        self.generator_ready = False

    @property
    def pos(self) -> int:  # type: ignore[override]
        return self.core.pos

    @property
    def full(self) -> bool:  # type: ignore[override]
        return self.core.full

    @property
    def observations(self) -> Any:  # type: ignore[override]
        return _numpy(self.core.observations)

    @property
    def actions(self) -> np.ndarray:  # type: ignore[override]
        return _numpy(self.core.actions).reshape(self.buffer_size, self.n_envs, self.action_dim)

    @property
    def rewards(self) -> np.ndarray:  # type: ignore[override]
        return self.core.rewards

    @property
    def episode_starts(self) -> np.ndarray:  # type: ignore[override]
        return self.core.episode_starts

    @property
    def values(self) -> np.ndarray:  # type: ignore[override]
        return _numpy(self.core.values)

    @property
    def log_probs(self) -> np.ndarray:  # type: ignore[override]
        return _numpy(self.core.log_probs)

    @property
    def advantages(self) -> np.ndarray:  # type: ignore[override]
        return _numpy(self.core.advantages)

    @property
    def returns(self) -> np.ndarray:  # type: ignore[override]
        return _numpy(self.core.returns)

    def reset(self) -> None:
        self.core.reset()

    def add(self, obs: Any, action: Any, reward: Any, episode_start: Any, value: Any, log_prob: Any) -> None:
        """SB3's ``add``, written into the core rollout (numpy or tensors accepted)."""
        self.core.add(
            obs,
            torch.as_tensor(np.asarray(action) if not isinstance(action, torch.Tensor) else action),
            np.asarray(reward, dtype=np.float32),
            np.asarray(episode_start, dtype=np.float32),
            torch.as_tensor(value),
            torch.as_tensor(log_prob),
        )

    def compute_returns_and_advantage(self, last_values: Any, dones: np.ndarray) -> None:
        self.core.compute_returns_and_advantage(torch.as_tensor(last_values), np.asarray(dones))


class RolloutBufferView(_CoreView, RolloutBuffer):
    """SB3's ``RolloutBuffer`` over a core rollout of Box/Discrete/MultiDiscrete/MultiBinary observations."""


class DictRolloutBufferView(_CoreView, DictRolloutBuffer):
    """SB3's ``DictRolloutBuffer`` over a core rollout of Dict observations."""

    def __init__(self, core: CoreRollout) -> None:
        super().__init__(core)
        self.obs_shape = {key: tuple(array.shape[2:]) for key, array in core.observations.items()}


def rollout_view(core: CoreRollout) -> RolloutBuffer:
    """The SB3 view of ``core``: a ``DictRolloutBuffer`` for Dict observations, else a ``RolloutBuffer``."""
    if isinstance(core.observations, dict):
        return DictRolloutBufferView(core)
    view = RolloutBufferView(core)
    view.obs_shape = tuple(core.observations.shape[2:])
    return view
