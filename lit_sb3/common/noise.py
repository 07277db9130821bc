"""SB3's ``common.noise``: action noise for off-policy exploration (lit-sb3's own classes).

lit-sb3's noise objects already hold one process per env (``n_envs``), so ``VectorizedActionNoise(noise,
n_envs)`` is a copy of ``noise`` with ``n_envs`` processes: the algorithm treats it like any other noise.
"""

from __future__ import annotations

import copy

from lit_sb3_core.data.noise import ActionNoise, NormalActionNoise, OrnsteinUhlenbeckActionNoise

__all__ = ["ActionNoise", "NormalActionNoise", "OrnsteinUhlenbeckActionNoise", "VectorizedActionNoise"]


class VectorizedActionNoise:
    """``base_noise`` for ``n_envs`` envs: returns a copy of ``base_noise`` with one process per env, whose
    ``reset(indices)`` restarts the processes of finished episodes and whose draws have shape
    ``(n_envs, action_dim)``, as SB3's ``VectorizedActionNoise`` does.

    Args:
        base_noise: the noise each env gets (a lit-sb3 ``ActionNoise``).
        n_envs: number of envs.
    """

    def __new__(cls, base_noise: ActionNoise, n_envs: int) -> ActionNoise:  # type: ignore[misc]
        if not isinstance(base_noise, ActionNoise):
            raise TypeError(f"VectorizedActionNoise needs an ActionNoise, got {type(base_noise).__name__}.")
        if isinstance(n_envs, bool) or not isinstance(n_envs, int) or n_envs <= 0:
            raise ValueError(f"n_envs must be a positive integer, got {n_envs!r}.")
        noise = copy.deepcopy(base_noise)
        noise.set_n_envs(n_envs)
        return noise
