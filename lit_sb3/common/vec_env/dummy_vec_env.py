"""SB3's ``DummyVecEnv``: a view over gymnasium's ``SyncVectorEnv``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import gymnasium as gym

from lit_sb3.common.vec_env.util import obs_space_info
from lit_sb3_core.envs.make import make_vector_env_from_fns
from lit_sb3_core.errors import NestedSpaceError
from lit_sb3_core.sb3.vec_env_views import GymnasiumVecEnv

__all__ = ["DummyVecEnv"]


class DummyVecEnv(GymnasiumVecEnv):
    """The envs made by ``env_fns``, stepped one after the other in this process (best for fast envs).

    It is SB3's VecEnv API over ``gymnasium.vector.SyncVectorEnv`` with SAME_STEP autoreset, each env checked
    on its first reset and step like every env lit-sb3 builds. Trained on directly, it costs nothing extra.

    Args:
        env_fns: functions that each return a new ``gymnasium.Env``.
    """

    def __init__(self, env_fns: Sequence[Callable[[], gym.Env]]) -> None:
        super().__init__(make_vector_env_from_fns(list(env_fns), "sync"))
        try:
            obs_space_info(self.observation_space)  # nested Dict/Tuple spaces: NestedSpaceError, as SB3
        except NestedSpaceError:
            self.close()
            raise
