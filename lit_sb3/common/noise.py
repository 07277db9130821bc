"""SB3's ``common.noise``: action noise for off-policy exploration (lit-sb3's own classes).

lit-sb3's noise objects already hold one process per env (``n_envs``); ``VectorizedActionNoise(noise,
n_envs)`` is SB3's other way to say it: one copy of ``noise`` per env in ``noises``, drawn together as an
``(n_envs, action_dim)`` array. The algorithm treats it like any other noise.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import numpy as np

from lit_sb3_core.data.noise import ActionNoise, NormalActionNoise, OrnsteinUhlenbeckActionNoise
from lit_sb3_core.errors import ConfigurationError

__all__ = ["ActionNoise", "NormalActionNoise", "OrnsteinUhlenbeckActionNoise", "VectorizedActionNoise"]


class VectorizedActionNoise(ActionNoise):
    """``base_noise`` for ``n_envs`` envs: ``noises`` holds one copy per env (each reset on its own at the
    end of that env's episode); a draw stacks theirs into ``(n_envs, action_dim)``, as SB3's does.

    Args:
        base_noise: the noise each env gets (an ``ActionNoise``).
        n_envs: number of envs, a positive integer.
    """

    def __init__(self, base_noise: ActionNoise, n_envs: int) -> None:
        try:
            n_envs = int(n_envs)
        except (TypeError, ValueError):
            n_envs = 0
        if n_envs <= 0:
            raise ConfigurationError(
                f"VectorizedActionNoise needs n_envs, a positive integer, got {n_envs!r}."
            )
        if base_noise is None:
            raise ConfigurationError("VectorizedActionNoise needs a base_noise (an ActionNoise), got None.")
        if not isinstance(base_noise, ActionNoise):
            raise _NoiseTypeError(
                f"VectorizedActionNoise needs an ActionNoise, got {type(base_noise).__name__}."
            )
        super().__init__(base_noise.mean, base_noise.sigma, n_envs)
        self.base_noise = base_noise
        self.noises = [self._copy_of_base() for _ in range(n_envs)]

    def _copy_of_base(self) -> ActionNoise:
        noise = copy.deepcopy(self.base_noise)
        noise.set_n_envs(1)
        return noise

    @property
    def noises(self) -> list[ActionNoise]:
        """One noise per env (SB3's attribute); setting it checks the count and the type."""
        return self._noises

    @noises.setter
    def noises(self, noises: Iterable[ActionNoise]) -> None:
        noises = list(noises)  # TypeError when not iterable, as in SB3
        if len(noises) != self.n_envs:
            raise _NoiseCountError(f"Expected a list of {self.n_envs} ActionNoises, got {len(noises)}.")
        wrong = [i for i, noise in enumerate(noises) if not isinstance(noise, type(self.base_noise))]
        if wrong:
            raise ConfigurationError(
                f"The noises at indices {wrong} are not {type(self.base_noise).__name__}s like base_noise."
            )
        self._noises = noises
        for noise in noises:
            noise.reset()

    def __call__(self) -> np.ndarray:
        return np.concatenate([noise() for noise in self._noises]).astype(np.float32)

    def reset(self, indices: Iterable[int] | None = None) -> None:
        for index in range(len(self._noises)) if indices is None else indices:
            self._noises[index].reset()

    def set_n_envs(self, n_envs: int) -> None:
        """Keep one noise per env when the algorithm's env count is known (new copies when it differs)."""
        if int(n_envs) != len(self._noises):
            self.n_envs = int(n_envs)
            self._noises = [self._copy_of_base() for _ in range(self.n_envs)]
        self.reset()

    def resize(self, action_dim: int) -> None:
        for noise in (self.base_noise, *self._noises):
            noise.resize(action_dim)
        self.mean, self.sigma, self.shape = self.base_noise.mean, self.base_noise.sigma, self.base_noise.shape

    def seed(self, seed: int | None) -> None:
        for index, noise in enumerate(self._noises):
            noise.seed(None if seed is None else seed + index)

    def spec(self) -> dict[str, Any]:
        return self.base_noise.spec()  # each env's noise is the base noise: the spec rebuilds the same

    def state_dict(self) -> dict[str, Any]:
        return {"noises": [noise.state_dict() for noise in self._noises]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for noise, noise_state in zip(self._noises, state.get("noises", ()), strict=False):
            noise.load_state_dict(noise_state)

    def __repr__(self) -> str:
        return f"VectorizedActionNoise(base_noise={self.base_noise!r}, n_envs={len(self._noises)})"


class _NoiseCountError(ConfigurationError, AssertionError):
    """``noises`` of the wrong length (SB3 asserts the count)."""


class _NoiseTypeError(ConfigurationError, TypeError):
    """A base noise that is not an ``ActionNoise`` (SB3 raises TypeError)."""
