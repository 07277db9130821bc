"""SB3's ``VecFrameStack``."""

from __future__ import annotations

from collections.abc import Mapping

from gymnasium import spaces

from lit_sb3.common.vec_env.stacked_observations import StackedObservations
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecFrameStack"]


class VecFrameStack(VecEnvWrapper):
    """Observations made of the last ``n_stack`` frames, concatenated on the channel axis as SB3 does
    (``make_atari_env`` + ``VecFrameStack(n_stack=4)`` gives 84x84x4 observations).

    Args:
        venv: the vector env to wrap (Box or Dict observations).
        n_stack: frames per observation.
        channels_order: ``"last"``/``"first"`` (a mapping per key for Dict spaces); None guesses for images.
    """

    def __init__(
        self, venv: VecEnv, n_stack: int, channels_order: str | Mapping[str, str] | None = None
    ) -> None:
        if not isinstance(venv.observation_space, (spaces.Box, spaces.Dict)):
            raise TypeError("VecFrameStack works with Box and Dict observation spaces only.")
        self.stacked_obs = StackedObservations(venv.num_envs, n_stack, venv.observation_space, channels_order)  # type: ignore[arg-type]
        super().__init__(venv, observation_space=self.stacked_obs.stacked_observation_space)

    def reset(self) -> VecEnvObs:
        return self.stacked_obs.reset(self.venv.reset())

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        observations, infos = self.stacked_obs.update(observations, dones, infos)
        return observations, rewards, dones, infos
