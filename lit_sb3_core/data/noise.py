"""Exploration noise added to deterministic actions (TD3, DDPG; optionally SAC), one row per environment.

Noise is drawn in the policy's scaled action space ([-1, 1]) and the algorithm clips the noisy action back
into it, as Stable-Baselines3 does. Unlike SB3, every noise object is vectorized from the start: it holds
one process per environment and ``__call__`` returns an ``(n_envs, action_dim)`` array, so there is no
separate ``VectorizedActionNoise`` wrapper. An object built alone owns its random generator (``seed``); in a
one-process run the algorithm points it at numpy's global generator (``draw_from_global_numpy``), where
SB3's noise draws, env by env, so a seed gives SB3's run (under DDP each rank keeps a stream of its own).

Hyperparameters must stay plain JSON, so algorithms also accept a *spec* and build the object here once
the action size is known::

    {"type": "normal", "sigma": 0.1}                       # mean 0 unless "mean" is given
    {"type": "ornstein_uhlenbeck", "sigma": 0.2, "theta": 0.15, "dt": 0.01}

``sigma`` and ``mean`` may be numbers (the same for every action dimension) or lists (one per dimension).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import (
    check_number,
    check_numbers,
    check_positive_int,
    check_positive_number,
)
from lit_sb3_core.foundation.rng import GlobalNumpyRng

__all__ = [
    "ActionNoise",
    "NormalActionNoise",
    "OrnsteinUhlenbeckActionNoise",
    "make_action_noise",
    "noise_to_spec",
]

NOISE_TYPES = ("normal", "ornstein_uhlenbeck")
_ALIASES = {
    "normal": "normal",
    "gaussian": "normal",
    "ornstein_uhlenbeck": "ornstein_uhlenbeck",
    "ou": "ornstein_uhlenbeck",
    "ornstein-uhlenbeck": "ornstein_uhlenbeck",
}


class ActionNoise(ABC):
    """Base class: ``n_envs`` independent noise processes over actions of shape ``mean.shape``.

    Args:
        mean: mean of the noise, a number or one value per action dimension.
        sigma: scale of the noise, same form as ``mean``.
        n_envs: number of independent processes (one per environment).
        seed: seed of this object's random generator.
    """

    type_name: str = ""

    def __init__(self, mean: Any, sigma: Any, n_envs: int = 1, seed: int | None = None) -> None:
        self.mean = check_numbers("Action noise mean", mean)
        self.sigma = check_numbers("Action noise sigma", sigma, minimum=0)
        self.shape = np.broadcast_shapes(self.mean.shape, self.sigma.shape)
        self.n_envs = check_positive_int("Action noise n_envs", n_envs)
        self.rng: np.random.Generator | GlobalNumpyRng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the random stream from ``seed``."""
        self.rng = np.random.default_rng(seed)

    def draw_from_global_numpy(self) -> None:
        """Draw from numpy's global generator, as SB3's noise objects do (with the same calls: one
        ``(n_envs, action_dim)`` block of standard normals is SB3's env-by-env draws). Its state is numpy's,
        which checkpoints keep."""
        self.rng = GlobalNumpyRng()

    def set_n_envs(self, n_envs: int) -> None:
        """Resize to ``n_envs`` processes (all restarted)."""
        self.n_envs = int(n_envs)
        self.reset()

    def resize(self, action_dim: int) -> None:
        """Broadcast scalar ``mean``/``sigma`` to ``action_dim`` values; refuse a mismatched length."""
        shape = self.shape
        if shape not in ((), (1,), (action_dim,)):
            raise ConfigurationError(
                f"The action noise has {shape[0]} dimensions but the actions have {action_dim}: give mean and "
                f"sigma as numbers or as lists of length {action_dim}."
            )
        self.mean = np.broadcast_to(self.mean, (action_dim,)).copy()
        self.sigma = np.broadcast_to(self.sigma, (action_dim,)).copy()
        self.shape = (action_dim,)
        self.reset()

    def reset(self, indices: Iterable[int] | None = None) -> None:  # noqa: B027 -- an optional hook, a no-op on purpose
        """Restart the processes of ``indices`` (all when None) at the end of their episodes.

        An optional hook: the base implementation does nothing (right for noise without state, such as
        Gaussian noise); stateful noise overrides it.
        """

    @abstractmethod
    def __call__(self) -> np.ndarray:
        """One draw per environment: an array of shape ``(n_envs, *shape)`` (float32)."""

    def spec(self) -> dict[str, Any]:
        """The plain-JSON description ``make_action_noise`` rebuilds this object from."""
        return {"type": self.type_name, "mean": self.mean.tolist(), "sigma": self.sigma.tolist()}

    def state_dict(self) -> dict[str, Any]:
        """Random generator state (None: numpy's global generator) and process state, for checkpoints."""
        rng = self.rng
        return {"rng": None if isinstance(rng, GlobalNumpyRng) else rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state["rng"] is None:
            self.draw_from_global_numpy()
            return
        rng = self.rng if isinstance(self.rng, np.random.Generator) else np.random.default_rng()
        rng.bit_generator.state = state["rng"]
        self.rng = rng

    def __repr__(self) -> str:
        name = type(self).__name__
        return f"{name}(mean={self.mean.tolist()}, sigma={self.sigma.tolist()}, n_envs={self.n_envs})"


class NormalActionNoise(ActionNoise):
    """Independent Gaussian noise each step: what TD3 uses (Fujimoto et al. 2018)."""

    type_name = "normal"

    def __call__(self) -> np.ndarray:
        draw = self.rng.standard_normal((self.n_envs, *self.shape))
        return (self.mean + self.sigma * draw).astype(np.float32)


class OrnsteinUhlenbeckActionNoise(ActionNoise):
    """Temporally correlated noise (Brownian motion with friction), as in DDPG (Lillicrap et al. 2015).

    ``x <- x + theta * (mean - x) * dt + sigma * sqrt(dt) * N(0, 1)``, one ``x`` per environment.

    Args:
        mean, sigma, n_envs, seed: as for ``ActionNoise``.
        theta: rate of mean reversion.
        dt: time step of the process.
        initial_noise: value every process restarts from (0 when None).
    """

    type_name = "ornstein_uhlenbeck"

    def __init__(
        self,
        mean: Any,
        sigma: Any,
        theta: float = 0.15,
        dt: float = 1e-2,
        initial_noise: Any = None,
        n_envs: int = 1,
        seed: int | None = None,
    ) -> None:
        super().__init__(mean, sigma, n_envs, seed)
        self.theta = check_number("Action noise theta", theta, minimum=0)
        self.dt = check_positive_number("Action noise dt", dt)
        self.initial_noise = (
            None if initial_noise is None else check_numbers("Action noise initial_noise", initial_noise)
        )
        self.noise_prev = np.zeros((self.n_envs, *self.shape))
        self.reset()

    def reset(self, indices: Iterable[int] | None = None) -> None:
        if self.noise_prev.shape != (self.n_envs, *self.shape):
            self.noise_prev = np.zeros((self.n_envs, *self.shape))
            indices = None
        start = 0.0 if self.initial_noise is None else self.initial_noise
        if indices is None:
            self.noise_prev[...] = start
        else:
            self.noise_prev[list(indices)] = start

    def __call__(self) -> np.ndarray:
        draw = self.rng.standard_normal((self.n_envs, *self.shape))
        self.noise_prev = (
            self.noise_prev
            + self.theta * (self.mean - self.noise_prev) * self.dt
            + self.sigma * np.sqrt(self.dt) * draw
        )
        return self.noise_prev.astype(np.float32)

    def spec(self) -> dict[str, Any]:
        spec = {**super().spec(), "theta": self.theta, "dt": self.dt}
        if self.initial_noise is not None:
            spec["initial_noise"] = self.initial_noise.tolist()
        return spec

    def state_dict(self) -> dict[str, Any]:
        return {**super().state_dict(), "noise_prev": self.noise_prev.tolist()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        if "noise_prev" in state:
            self.noise_prev = np.asarray(state["noise_prev"], dtype=np.float64).reshape(self.noise_prev.shape)


def noise_to_spec(noise: Any) -> dict[str, Any] | None:
    """A noise object or spec as a plain spec (what hyperparameters store); validates specs."""
    if noise is None:
        return None
    if isinstance(noise, ActionNoise):
        return noise.spec()
    if isinstance(noise, dict):
        _normalise_spec(noise)
        return dict(noise)
    raise ConfigurationError(
        f"action_noise must be None, an ActionNoise (NormalActionNoise, OrnsteinUhlenbeckActionNoise) or a "
        f'spec such as {{"type": "normal", "sigma": 0.1}}, got {type(noise).__name__}.'
    )


def _normalise_spec(spec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    kind = str(spec.get("type", "")).lower()
    if kind not in _ALIASES:
        raise ConfigurationError(
            f"Unknown action noise type {spec.get('type')!r}: use 'normal' or 'ornstein_uhlenbeck' ('ou'), "
            'e.g. {"type": "normal", "sigma": 0.1}.'
        )
    kind = _ALIASES[kind]
    allowed = {"type", "mean", "sigma"} | (
        {"theta", "dt", "initial_noise"} if kind == "ornstein_uhlenbeck" else set()
    )
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise ConfigurationError(
            f"Unknown keys {unknown} in the {kind} action noise spec; allowed: {sorted(allowed)}."
        )
    if "sigma" not in spec:
        raise ConfigurationError(
            f'The {kind} action noise spec needs "sigma", e.g. {{"type": "{kind}", "sigma": 0.1}}.'
        )
    kwargs = {key: value for key, value in spec.items() if key != "type"}
    kwargs.setdefault("mean", 0.0)
    return kind, kwargs


def make_action_noise(
    noise: Any, action_dim: int, n_envs: int = 1, seed: int | None = None
) -> ActionNoise | None:
    """Build (or adapt) the noise for ``n_envs`` environments with ``action_dim``-dimensional actions.

    Accepts None, a spec dict, or an ``ActionNoise`` (resized in place and returned).
    """
    if noise is None:
        return None
    if isinstance(noise, ActionNoise):
        obj = noise
    else:
        kind, kwargs = _normalise_spec(noise_to_spec(noise) or {})
        cls = NormalActionNoise if kind == "normal" else OrnsteinUhlenbeckActionNoise
        obj = cls(**kwargs)
    obj.resize(action_dim)
    obj.set_n_envs(n_envs)
    if seed is not None:
        obj.seed(seed)
    return obj
