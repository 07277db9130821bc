"""SB3's ``VecMonitor``: ``Monitor`` for a whole vector env (episode statistics and ``monitor.csv``)."""

from __future__ import annotations

import time
import warnings

import numpy as np

from lit_sb3.common.monitor import Monitor, ResultsWriter
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecMonitor"]


class VecMonitor(VecEnvWrapper):
    """Add ``info["episode"] = {"r", "l", "t"}`` to each finished episode, and log it to a monitor file.

    Args:
        venv: the vector env to wrap.
        filename: where to write the CSV log (None: no file).
        info_keywords: ``info`` keys of an episode's last step to log with it.
    """

    def __init__(
        self, venv: VecEnv, filename: str | None = None, info_keywords: tuple[str, ...] = ()
    ) -> None:
        try:
            wrapped = any(venv.env_is_wrapped(Monitor))
        except (AttributeError, NotImplementedError):
            wrapped = False
        if wrapped:
            warnings.warn(
                "The environment is already wrapped with a Monitor: VecMonitor will count the same episodes again "
                "(and its statistics win in SB3 and lit-sb3 alike).",
                UserWarning,
                stacklevel=2,
            )
        super().__init__(venv)
        self.episode_count = 0
        self.t_start = time.time()
        env_id = None
        if hasattr(venv, "spec") and venv.spec is not None:
            env_id = venv.spec.id
        self.results_writer: ResultsWriter | None = None
        if filename:
            self.results_writer = ResultsWriter(
                filename,
                header={"t_start": self.t_start, "env_id": str(env_id)},
                extra_keys=tuple(info_keywords),
            )
        self.info_keywords = tuple(info_keywords)
        self.episode_returns = np.zeros(self.num_envs, dtype=np.float32)
        self.episode_lengths = np.zeros(self.num_envs, dtype=np.int32)

    def reset(self) -> VecEnvObs:
        observations = self.venv.reset()
        self.episode_returns[:] = 0
        self.episode_lengths[:] = 0
        return observations

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        self.episode_returns += rewards
        self.episode_lengths += 1
        new_infos = list(infos[:])
        for i in np.flatnonzero(dones):
            info = dict(infos[i])
            episode = {
                "r": float(self.episode_returns[i]),
                "l": int(self.episode_lengths[i]),
                "t": round(time.time() - self.t_start, 6),
            }
            for key in self.info_keywords:
                episode[key] = info[key]
            info["episode"] = episode
            self.episode_count += 1
            self.episode_returns[i] = 0
            self.episode_lengths[i] = 0
            if self.results_writer is not None:
                self.results_writer.write_row(episode)
            new_infos[i] = info
        return observations, rewards, dones, new_infos

    def close(self) -> None:
        if self.results_writer is not None:
            self.results_writer.close()
        self.venv.close()
