"""SB3's ``VecCheckNan``: stop (or warn) at the first NaN or infinity in actions, observations or rewards."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from lit_sb3_core.errors import NonFiniteError
from lit_sb3_core.sb3.vec_env import VecEnv, VecEnvObs, VecEnvStepReturn, VecEnvWrapper

__all__ = ["VecCheckNan"]


def _bad_rows(value: Any, check_inf: bool) -> np.ndarray:
    """Env indices whose entry holds NaN (or infinity, with ``check_inf``)."""
    if isinstance(value, Mapping):
        rows = [_bad_rows(v, check_inf) for v in value.values()]
        return np.unique(np.concatenate(rows)) if rows else np.array([], dtype=int)
    array = np.asarray(value)
    if array.dtype.kind not in "fc" or array.ndim == 0:
        return np.array([], dtype=int)
    bad = ~np.isfinite(array) if check_inf else np.isnan(array)
    return np.flatnonzero(bad.reshape(len(array), -1).any(axis=1))


class VecCheckNan(VecEnvWrapper):
    """Check every action, observation and reward for NaN (and infinity) and name where it appeared.

    lit-sb3's own ``RLEnvDataModule(check_finite=True)`` does the same for gymnasium envs; this is SB3's
    wrapper for VecEnv stacks. It raises ``NonFiniteError`` (a ``ValueError``) with ``raise_exception=True``,
    and warns otherwise.

    Args:
        venv: the vector env to wrap.
        raise_exception: raise instead of warning.
        warn_once: warn only at the first problem.
        check_inf: treat infinity as a problem too.
    """

    def __init__(
        self, venv: VecEnv, raise_exception: bool = False, warn_once: bool = True, check_inf: bool = True
    ) -> None:
        super().__init__(venv)
        if isinstance(venv.action_space, spaces.Dict):
            raise NotImplementedError("VecCheckNan does not support Dict action spaces.")
        self.raise_exception = raise_exception
        self.warn_once = warn_once
        self.check_inf = check_inf
        self._user_warned = False
        self._actions: Any = None
        self._observations: Any = None

    def step_async(self, actions: np.ndarray) -> None:
        self._check("step_async", actions=actions)
        self._actions = actions
        self.venv.step_async(actions)

    def step_wait(self) -> VecEnvStepReturn:
        observations, rewards, dones, infos = self.venv.step_wait()
        self._check("step_wait", observations=observations, rewards=rewards)
        self._observations = observations
        return observations, rewards, dones, infos

    def reset(self) -> VecEnvObs:
        observations = self.venv.reset()
        self._check("reset", observations=observations)
        self._observations = observations
        return observations

    def _check(self, event: str, **values: Any) -> None:
        if self._user_warned and self.warn_once and not self.raise_exception:
            return
        found = [(name, _bad_rows(value, self.check_inf)) for name, value in values.items()]
        found = [(name, rows) for name, rows in found if len(rows)]
        if not found:
            return
        what = "NaN or infinity" if self.check_inf else "NaN"
        problems = ", ".join(f"{name} of envs {rows.tolist()}" for name, rows in found)
        if event == "step_async":
            origin = (
                "The policy produced it (its parameters diverged), after the observations of the last step."
            )
        elif event == "reset":
            origin = "The environment produced it on reset()."
        else:
            origin = f"The environment produced it after the actions {np.asarray(self._actions).tolist()}."
        message = f"VecCheckNan found {what} in the {problems} ({event}). {origin}"
        if self.raise_exception:
            first_name, first_rows = found[0]
            raise NonFiniteError(message, what=first_name[:-1], env_index=int(first_rows[0]))
        self._user_warned = True
        warnings.warn(message, UserWarning, stacklevel=2)
