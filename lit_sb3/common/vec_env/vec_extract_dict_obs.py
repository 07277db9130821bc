"""SB3's ``VecExtractDictObs``: one key of Dict observations."""

from __future__ import annotations

import numpy as np

from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecExtractDictObs"]


class VecExtractDictObs(VecEnvWrapper):
    """Keep only ``key`` of the env's Dict observations (gymnasium's ``FilterObservation``, for VecEnvs).

    Args:
        venv: the vector env to wrap (Dict observations).
        key: the key to keep.
    """

    def __init__(self, venv: VecEnv, key: str) -> None:
        self.key = key
        super().__init__(venv, observation_space=venv.observation_space.spaces[key])  # type: ignore[attr-defined]

    def reset(self) -> VecEnvObs:
        return self.venv.reset()[self.key]  # type: ignore[call-overload]

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        for i in np.flatnonzero(dones):
            if "terminal_observation" in infos[i]:
                infos[i]["terminal_observation"] = infos[i]["terminal_observation"][self.key]
        return observations[self.key], rewards, dones, infos  # type: ignore[call-overload]
