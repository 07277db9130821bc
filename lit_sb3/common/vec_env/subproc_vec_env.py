"""SB3's ``SubprocVecEnv``: a view over gymnasium's ``AsyncVectorEnv``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym

from lit_sb3_core.envs.make import make_vector_env_from_fns
from lit_sb3_core.sb3.vec_env_views import GymnasiumVecEnv

__all__ = ["SubprocVecEnv"]


class SubprocVecEnv(GymnasiumVecEnv):
    """The envs made by ``env_fns``, each in its own process (for envs slow enough to pay for the pipes).

    SB3's VecEnv API over lit-sb3's ``AsyncVectorEnv`` (SAME_STEP autoreset), whose workers re-raise an env's
    exception in this process as itself. Create it under ``if __name__ == "__main__":`` when the start
    method is not ``fork``.

    Args:
        env_fns: functions that each return a new ``gymnasium.Env`` (closures and lambdas work: they are
            sent with cloudpickle).
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"``; None uses the platform's default
            (SB3 prefers ``forkserver``; the results are the same).
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]], start_method: str | None = None) -> None:
        super().__init__(make_vector_env_from_fns(list(env_fns), "async", context=start_method))
