"""``model.rollout_buffer`` as SB3 code reads it: SB3's numpy ``RolloutBuffer`` over lit-sb3's tensor rollout.

An on-policy algorithm trains on ``self.rollout`` (``lit_sb3_core.data.rollout_buffer.RolloutBuffer``: tensors
laid out for the update). SB3 code reads ``model.rollout_buffer.actions`` and the other fields as numpy arrays
of shape ``(buffer_size, n_envs, ...)``, calls ``size()`` and ``get(batch_size)``, checks ``full``. This view
gives it that without a second copy of the rollout: each field is the tensor's ``.numpy()`` (on the CPU the
same memory, so an in-place write to a field is seen by training; on an accelerator a copy made on read).
Assigning a field (``buffer.returns = ...``, as SB3 code does) writes into the tensors on any device. It is
an instance of SB3's ``RolloutBuffer`` / ``DictRolloutBuffer``, so ``isinstance`` checks hold and ``get`` and
``swap_and_flatten`` are SB3's.

Differences, by design: Discrete and MultiDiscrete actions stay integers (the tensors' dtype, so that no copy
is made); ``get`` casts them to float32 as SB3 does.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch

from lit_sb3_core.data.rollout_buffer import RolloutBuffer as CoreRollout
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sb3.buffers import DictRolloutBuffer, RolloutBuffer

__all__ = ["check_rollout_buffer_class", "rollout_view", "sb3_buffer_extras"]


def _numpy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _numpy(sub) for key, sub in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().numpy() if value.device.type == "cpu" else value.detach().cpu().numpy()
    return value


def _write(core: CoreRollout, name: str, value: Any) -> None:
    """An assignment to a view's field (SB3 code assigns ``returns``, ...) writes into the core's storage."""
    storage = getattr(core, name)
    if isinstance(storage, dict):
        for key, sub in storage.items():
            sub.copy_(torch.as_tensor(np.asarray(value[key])).reshape(sub.shape))
    elif isinstance(storage, torch.Tensor):
        storage.copy_(torch.as_tensor(np.asarray(value)).reshape(storage.shape))
    else:
        storage[...] = np.asarray(value).reshape(storage.shape)


class _Field:
    """One field of the core rollout on a view: read as numpy (``_numpy``), assigned into the core (``_write``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, view: Any, owner: type | None = None) -> Any:
        return self if view is None else _numpy(getattr(view.core, self.name))

    def __set__(self, view: Any, value: Any) -> None:
        _write(view.core, self.name, value)


class _CoreView:
    """SB3's buffer attributes, read from and assigned into the core rollout ``self.core``."""

    core: CoreRollout
    observations = _Field()
    rewards = _Field()
    episode_starts = _Field()
    values = _Field()
    log_probs = _Field()
    advantages = _Field()
    returns = _Field()

    def __init__(self, core: CoreRollout) -> None:  # SB3's constructor is not called: the core owns storage
        self.core = core
        self.observation_space, self.action_space = core.observation_space, core.action_space
        self.buffer_size, self.n_envs = core.n_steps, core.n_envs
        self.gamma, self.gae_lambda = core.gamma, core.gae_lambda
        self.device = core.device
        self.action_dim = int(np.prod(core.actions.shape[2:], dtype=int)) if core.actions.ndim > 2 else 1
        observations = core.observations
        self.obs_shape = (
            {key: tuple(array.shape[2:]) for key, array in observations.items()}
            if isinstance(observations, dict)
            else tuple(observations.shape[2:])
        )
        self.generator_ready = False

    def __getattr__(self, name: str) -> Any:
        """0.2 algorithms called the core rollout's own methods on ``self.rollout_buffer`` (``minibatches``,
        ...), which was the core rollout then. They still work, with a ``DeprecationWarning`` naming
        ``self.rollout``, until 0.4 (CONTRIBUTING's compatibility policy)."""
        core = vars(self).get("core")
        if core is None or name.startswith("_") or not hasattr(core, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        warnings.warn(
            f"rollout_buffer.{name} is deprecated and will be removed in 0.4: rollout_buffer is SB3's numpy view "
            f"of the rollout now; an algorithm reads the tensor rollout as self.rollout (self.rollout.{name}).",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(core, name)

    @property
    def pos(self) -> int:
        return self.core.pos

    @pos.setter
    def pos(self, value: int) -> None:
        self.core.pos = int(value)

    @property
    def full(self) -> bool:
        return self.core.full

    @full.setter
    def full(self, value: bool) -> None:  # SB3 code marks a hand-filled buffer full
        self.core.pos = self.core.n_steps if value else min(self.core.pos, self.core.n_steps - 1)

    @property
    def actions(self) -> np.ndarray:
        return _numpy(self.core.actions).reshape(self.buffer_size, self.n_envs, self.action_dim)

    @actions.setter
    def actions(self, value: np.ndarray) -> None:
        _write(self.core, "actions", value)

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


# What the on-policy loop and updates do with a buffer: a subclass changing one of these would expect the loop
# to run its code on its own storage, which lit-sb3's tensor rollout does not.
_STORAGE_METHODS = (
    "reset",
    "add",
    "compute_returns_and_advantage",
    "get",
    "_get_samples",
    "_samples",
    "_flattened",
    "_flat_observations",
    "_store_obs",
    "_observation_storage",
    "swap_and_flatten",
    "to_torch",
    "size",
)
_VIEW_CLASSES: dict[type, type] = {RolloutBuffer: RolloutBufferView, DictRolloutBuffer: DictRolloutBufferView}


def check_rollout_buffer_class(cls: Any) -> type[RolloutBuffer] | None:
    """``rollout_buffer_class`` as given, once checked: SB3's ``RolloutBuffer`` / ``DictRolloutBuffer`` or a
    subclass that keeps their storage and sampling (it may add arguments, attributes and methods)."""
    if cls is None:
        return None
    if not (isinstance(cls, type) and issubclass(cls, RolloutBuffer)):
        raise ConfigurationError(
            f"rollout_buffer_class must be RolloutBuffer or DictRolloutBuffer (lit_sb3.common.buffers) or a "
            f"subclass of them, got {cls!r}."
        )
    base = DictRolloutBuffer if issubclass(cls, DictRolloutBuffer) else RolloutBuffer
    overridden = [name for name in _STORAGE_METHODS if getattr(cls, name) is not getattr(base, name)]
    if overridden:
        raise ConfigurationError(
            f"rollout_buffer_class={cls.__name__} overrides {', '.join(overridden)}: lit-sb3's on-policy loop "
            "stores the rollout in its own tensors and does not run a buffer's storage or sampling code. "
            f"Supported: {base.__name__} and subclasses that add arguments, attributes or methods; to change how "
            "the rollout is stored or sampled, subclass the algorithm (collect_rollout / train_on_rollout)."
        )
    return cls


def sb3_buffer_extras(probe: RolloutBuffer) -> dict[str, Any]:
    """The attributes a ``rollout_buffer_class``'s ``__init__`` set beyond SB3's own (carried to the view)."""
    base = DictRolloutBuffer if isinstance(probe, DictRolloutBuffer) else RolloutBuffer
    own = set(vars(base(1, probe.observation_space, probe.action_space, device="cpu")))
    return {key: value for key, value in vars(probe).items() if key not in own and key != "obs_shape"}


def rollout_view(
    core: CoreRollout, cls: type[RolloutBuffer] | None = None, extras: dict[str, Any] | None = None
) -> RolloutBuffer:
    """The SB3 view of ``core``, an instance of ``cls`` (default: ``DictRolloutBuffer`` for Dict observations,
    else ``RolloutBuffer``) with ``extras`` set on it."""
    if cls is None:
        cls = DictRolloutBuffer if isinstance(core.observations, dict) else RolloutBuffer
    view_class = _VIEW_CLASSES.get(cls)
    if view_class is None:
        view_class = _VIEW_CLASSES[cls] = type(cls.__name__, (_CoreView, cls), {"__module__": cls.__module__})
    view = view_class(core)
    for key, value in (extras or {}).items():
        setattr(view, key, value)
    return view
