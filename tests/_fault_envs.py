"""Broken, slow and crashing environments for the fault tests (importable by async workers and child processes).

Each is a small, real ``gymnasium.Env``: a 4-float observation, two actions, episodes of 20 steps, and one
defect.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class Healthy(gym.Env):
    """The template every faulty env below changes in one place."""

    episode_length = 20

    def __init__(self) -> None:
        self.observation_space = spaces.Box(-1.0, 1.0, (4,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def observe(self) -> Any:
        return np.full(4, 0.1 * (self.t % 5), dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:
        super().reset(seed=seed)
        self.t = 0
        return self.observe(), {}

    def step(self, action: Any) -> Any:
        self.t += 1
        return self.observe(), 1.0, False, self.t >= self.episode_length, {}


class WrongShape(Healthy):
    """Observations of shape (3,) for a (4,) space."""

    def observe(self) -> Any:
        return np.zeros(3, dtype=np.float32)


class WrongShapeAfterReset(Healthy):
    """reset() is right; step() returns (2, 2)."""

    def step(self, action: Any) -> Any:
        obs, *rest = super().step(action)
        return (obs.reshape(2, 2), *rest)


class WrongDtype(Healthy):
    """A uint8 image-like space, float64 observations (would be cut to 0 silently)."""

    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Box(0, 255, (4,), np.uint8)

    def observe(self) -> Any:
        return np.full(4, 0.5, dtype=np.float64)


class DictMissingKey(Healthy):
    def __init__(self) -> None:
        super().__init__()
        self.observation_space = spaces.Dict(
            {"pos": spaces.Box(-1.0, 1.0, (2,), np.float32), "vel": spaces.Box(-1.0, 1.0, (2,), np.float32)}
        )

    def observe(self) -> Any:
        return {"pos": np.zeros(2, dtype=np.float32)}


class OldResetReturnsObs(Healthy):
    """Gym < 0.26: reset() returns only the observation."""

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> Any:  # type: ignore[override]
        self.t = 0
        return self.observe()


class OldResetNoSeed(Healthy):
    """Gym < 0.22: reset() takes no seed."""

    def reset(self) -> Any:  # type: ignore[override]
        self.t = 0
        return self.observe()


class OldStepFourValues(Healthy):
    """Gym < 0.26: step() returns (obs, reward, done, info)."""

    def step(self, action: Any) -> Any:  # type: ignore[override]
        self.t += 1
        return self.observe(), 1.0, self.t >= self.episode_length, {}


class ArrayReward(Healthy):
    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, np.array([reward, reward]), terminated, truncated, info


class NanObservation(Healthy):
    """Observation entry 1 is NaN at the 5th step of every episode."""

    def step(self, action: Any) -> Any:
        obs, *rest = super().step(action)
        if self.t == 5:
            obs = obs.copy()
            obs[1] = np.nan
        return (obs, *rest)


class InfReward(Healthy):
    """The reward is +inf at the 5th step of every episode."""

    def step(self, action: Any) -> Any:
        obs, reward, *rest = super().step(action)
        return (obs, np.inf if self.t == 5 else reward, *rest)


class SimulatorCrash(RuntimeError):
    """A user's own exception type, with an attribute that must survive (picklable, as Python asks)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code

    def __reduce__(self) -> Any:
        return type(self), (self.args[0], self.code)


class StubbornCrash(RuntimeError):
    """An exception that pickles but cannot be rebuilt (its __init__ needs more than its args)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class CrashesAtStep(Healthy):
    """Raises SimulatorCrash at its ``crash_at``-th step (counted over its lifetime)."""

    def __init__(self, crash_at: int = 40) -> None:
        super().__init__()
        self.crash_at = crash_at
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps == self.crash_at:
            raise SimulatorCrash(f"the simulator lost its connection at step {self.steps}", code=17)
        return super().step(action)


class CrashesInWorker(Healthy):
    """In an async worker, env ``crash_index`` (read from the worker's process) raises at step 7."""

    def __init__(self, crash_index: int = 1, stubborn: bool = False) -> None:
        super().__init__()
        self.crash_index = crash_index
        self.stubborn = stubborn
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        import multiprocessing

        name = multiprocessing.current_process().name  # gymnasium names workers "Worker<AsyncVectorEnv>-<i>"
        if self.steps == 7 and name.endswith(f"-{self.crash_index}"):
            error = StubbornCrash if self.stubborn else SimulatorCrash
            raise error(f"worker process {name} lost the simulator", code=23)
        return super().step(action)


class SlowAfter(Healthy):
    """Fast for ``fast_steps`` steps, then ``delay`` seconds per step; writes progress files for the tests.

    ``<folder>/slow`` appears (holding the step count) when the slow phase starts, ``<folder>/at`` holds the
    step in progress during the slow phase, and ``<folder>/closed`` the step count when the env is closed.
    """

    def __init__(self, folder: str = "", fast_steps: int = 10**9, delay: float = 0.05) -> None:
        super().__init__()
        self.folder = Path(folder) if folder else None
        self.fast_steps = fast_steps
        self.delay = delay
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps > self.fast_steps:
            if self.folder is not None:
                _write(self.folder / "at", str(self.steps))
                if self.steps == self.fast_steps + 1:
                    _write(self.folder / "slow", str(self.steps))
            time.sleep(self.delay)
        return super().step(action)

    def close(self) -> None:
        if self.folder is not None:
            _write(self.folder / "closed", str(self.steps))
        super().close()


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


class CtrlCAtStep(Healthy):
    """Raises KeyboardInterrupt at its ``at``-th step, as Ctrl+C would in the middle of ``env.step``."""

    def __init__(self, at: int = 40) -> None:
        super().__init__()
        self.at = at
        self.steps = 0
        self.closed = False

    def step(self, action: Any) -> Any:
        self.steps += 1
        if self.steps == self.at:
            raise KeyboardInterrupt
        return super().step(action)

    def close(self) -> None:
        self.closed = True
        super().close()


class HangsAtStep(Healthy):
    """Blocks forever (a deadlock's stand-in) at its ``at``-th step, only in env ``index`` of an async run
    (``index=None``: in every process)."""

    def __init__(self, at: int = 5, index: int | None = None, forever: float = 3600.0) -> None:
        super().__init__()
        self.at = at
        self.index = index
        self.forever = forever
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        import multiprocessing

        mine = self.index is None or multiprocessing.current_process().name.endswith(f"-{self.index}")
        if self.steps == self.at and mine:
            time.sleep(self.forever)
        return super().step(action)


class SpinsAtStep(Healthy):
    """Loops in Python forever at its ``at``-th step (a busy hang, no system call to interrupt)."""

    def __init__(self, at: int = 5) -> None:
        super().__init__()
        self.at = at
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        while self.steps == self.at:
            pass
        return super().step(action)


class DiesInWorker(Healthy):
    """In async worker ``index``, the process kills itself with SIGKILL at step ``at`` (as the OOM killer)."""

    def __init__(self, at: int = 5, index: int = 1) -> None:
        super().__init__()
        self.at = at
        self.index = index
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        import multiprocessing
        import signal

        if self.steps == self.at and multiprocessing.current_process().name.endswith(f"-{self.index}"):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().step(action)


class WrongShapeLater(Healthy):
    """Right for ``after`` steps, then observations of shape (3,)."""

    def __init__(self, after: int = 12) -> None:
        super().__init__()
        self.after = after
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        obs, *rest = super().step(action)
        return (obs[:3] if self.steps > self.after else obs, *rest)


class ArrayRewardLater(Healthy):
    """Right for ``after`` steps, then an array reward."""

    def __init__(self, after: int = 12) -> None:
        super().__init__()
        self.after = after
        self.steps = 0

    def step(self, action: Any) -> Any:
        self.steps += 1
        obs, reward, *rest = super().step(action)
        return (obs, np.array([reward, reward]) if self.steps > self.after else reward, *rest)


class IgnoresSigterm(Healthy):
    """Ignores SIGTERM in an async worker, as an SDL window (pygame's "human" rendering) does."""

    def __init__(self) -> None:
        super().__init__()
        import multiprocessing
        import signal

        if multiprocessing.parent_process() is not None:  # only in a worker, never in the test process
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
