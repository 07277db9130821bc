"""gymnasium's vector envs, with what goes wrong named: which env, which call, which step.

* An exception an env raises reaches you as itself (its type, arguments and attributes; from an async
  worker the original object, not gymnasium's ``type(error)(error)``), with a note naming the env index,
  the call and the vector step. An observation that stops matching the space after the first step is an
  ``EnvError`` naming the env and the step, not numpy's broadcast error.
* ``step_timeout``: an env that does not return from ``step``/``reset`` in time raises
  ``EnvTimeoutError`` naming the env, the call and the step (async: gymnasium's own timeout, then the
  workers are terminated; sync: a watchdog thread that interrupts the main thread with ``SIGALRM``).
* An async worker that dies (killed, crashed) is reported with its env index and exit code or signal,
  not as a bare ``EOFError``.
* ``StepTimeout``: the same ``step_timeout`` for gymnasium's own ``SyncVectorEnv``/``AsyncVectorEnv`` that a
  user built and handed to ``RLEnvDataModule``.

This module imports gymnasium and numpy only: async workers started with the spawn method import it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import multiprocessing
import signal
import threading
import time
import weakref
from collections.abc import Iterator
from types import FrameType, TracebackType
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AsyncVectorEnv, AutoresetMode, SyncVectorEnv, VectorEnv, VectorWrapper
from gymnasium.vector.async_vector_env import AsyncState

from lit_sb3_core.envs.guards import env_name, observation_problem
from lit_sb3_core.errors import EnvError, EnvTimeoutError, LitSb3Error
from lit_sb3_core.foundation.checks import check_positive_number

__all__ = [
    "DEFAULT_STEP_TIMEOUT_S",
    "LitAsyncVectorEnv",
    "LitSyncVectorEnv",
    "StepTimeout",
    "apply_step_timeout",
    "check_step_timeout",
    "with_step_timeout",
]

_log = logging.getLogger(__name__)

DEFAULT_STEP_TIMEOUT_S = 600.0
"""How long one vector ``step``/``reset`` may take before it counts as hung: ten minutes. Healthy envs take
micro- to milliseconds per step (a slow simulator or level load, seconds); an env that has not returned
after ten minutes is stuck, and waiting longer only hides it."""


class LitAsyncVectorEnv(AsyncVectorEnv):
    """``AsyncVectorEnv`` that reports what goes wrong in a worker: which env, which call, which step.

    * An exception raised inside a worker comes back as the original exception object, with notes naming
      the worker, the vector step and the traceback from inside the worker. Gymnasium raises
      ``type(error)(error)``: the type survives but the object does not (attributes are lost, and exception
      classes with required arguments fail to rebuild), and the worker index only reaches the log.
    * ``step_timeout``: gymnasium's own ``step_wait``/``reset_wait`` timeout; the env that did not answer
      is named (``EnvTimeoutError``) and the workers are terminated.
    * A worker that died (killed by a signal, crashed in C code) is named with its exit code or signal
      (an ``EnvError``), not a bare ``EOFError`` or ``BrokenPipeError``.
    """

    def __init__(
        self, env_fns: Any, step_timeout: float | None = None, role: str = "", **kwargs: Any
    ) -> None:
        self.step_timeout = check_step_timeout(step_timeout)
        self.role = role
        self.vector_steps = 0
        super().__init__(env_fns, **kwargs)
        # Runs before multiprocessing's own exit handler (atexit: last registered, first run), which would
        # SIGTERM the workers of an env nobody closed and then wait for them, forever for a worker whose env
        # catches SIGTERM (SDL does, for pygame's "human" rendering: SB3's multiprocessing example).
        atexit.register(_close_at_exit, weakref.ref(self))

    def set_step_timeout(self, step_timeout: float | None, role: str = "") -> None:
        """Use ``step_timeout`` from now on (an env built elsewhere, handed to ``RLEnvDataModule``)."""
        self.step_timeout = check_step_timeout(step_timeout)
        self.role = self.role or role

    def step(self, actions: Any) -> Any:
        self.vector_steps += 1

        def run() -> Any:
            self.step_async(actions)
            return self.step_wait(self.step_timeout)

        return self._guarded("step", run)

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        def run() -> Any:
            self.reset_async(seed=seed, options=options)
            return self.reset_wait(self.step_timeout)

        return self._guarded("reset", run)

    def _guarded(self, call: str, run: Any) -> Any:
        try:
            return run()
        except multiprocessing.TimeoutError:
            waiting = [i for i, pipe in enumerate(self.parent_pipes) if not _answered(pipe)]
            self._terminate()
            index = waiting[0] if waiting else None
            who = f"{self._role()}env {index}" if index is not None else f"{self._role()}vector env"
            others = f" (envs {waiting[1:]} neither)" if len(waiting) > 1 else ""
            raise stuck_env_error(
                f"{who}{others}",
                call,
                self.step_timeout,
                self.vector_steps,
                index,
                "; its AsyncVectorEnv worker was terminated",
            ) from None
        except (EOFError, BrokenPipeError, ConnectionResetError) as exc:
            dead = self._dead_workers()
            self._terminate()
            if not dead:
                raise
            described = "; ".join(f"env {i} (pid {pid}) {how}" for i, pid, how in dead)
            raise EnvError(
                f"The {self._role()}vector env lost a worker during {call}() at vector step {self.vector_steps}: "
                f"{described}. Its env's state is gone, so the run stopped (a worker killed from outside, by the "
                "out-of-memory killer, or crashed in C code); resume from the last checkpoint. "
                f"({type(exc).__name__} on the pipe to the worker.)"
            ) from None

    def _role(self) -> str:
        return f"{self.role} " if self.role else ""

    def _dead_workers(self) -> list[tuple[int, int | None, str]]:
        dead = []
        for index, process in enumerate(self.processes):
            process.join(timeout=1.0 if process.exitcode is None and not process.is_alive() else 0.05)
            code = process.exitcode
            if code is None:
                continue
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"signal {-code}"
                how = f"was killed by {name} (exit code {code})"
            else:
                how = f"exited with code {code}"
            dead.append((index, process.pid, how))
        return dead

    def close_extras(self, timeout: float | None = None, terminate: bool = False) -> None:
        """gymnasium's close; a forced close kills a worker still alive after SIGTERM and a grace period.

        gymnasium joins terminated workers without a limit: a worker that catches SIGTERM would hang it.
        """
        if terminate:
            _end_workers(self.processes)
        super().close_extras(timeout=timeout, terminate=terminate)

    def _terminate(self) -> None:
        with contextlib.suppress(Exception):
            self._state = AsyncState.DEFAULT
            self.close(terminate=True)

    def _raise_if_errors(self, successes: Any) -> None:
        successes = list(successes)
        if all(successes):
            return
        errors = []
        for _ in range(self.num_envs - sum(successes)):
            index, exctype, value, trace = self.error_queue.get()
            self.parent_pipes[index].close()
            self.parent_pipes[index] = None  # type: ignore[call-overload]  # as gymnasium's own error path does
            errors.append((index, exctype, value, trace))
        self._state = AsyncState.DEFAULT
        for index, _, _, trace in errors[:-1]:
            _log.error("AsyncVectorEnv worker %d failed too:\n%s", index, trace)
        index, exctype, value, trace = errors[-1]
        error = value if isinstance(value, BaseException) else exctype(value)
        others = [i for i, *_ in errors[:-1]]
        error.add_note(
            f"lit-sb3: raised in AsyncVectorEnv worker {index} (env index {index}) at vector step "
            f"{self.vector_steps}"
            + (f"; workers {others} failed as well" if others else "")
            + ". The worker's traceback:\n"
            + trace.rstrip()
        )
        raise error


def _answered(pipe: Any) -> bool:
    try:
        return pipe is not None and bool(pipe.poll())
    except OSError:
        return False


WORKER_EXIT_GRACE_S = 5.0
"""How long a terminated async worker may take to exit before it is killed."""


def _end_workers(processes: Any) -> None:
    """SIGTERM every live worker, then SIGKILL those still alive after a grace period (gymnasium joins
    terminated workers without a limit: a worker that catches SIGTERM would hang it)."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(WORKER_EXIT_GRACE_S)
        if process.is_alive():
            process.kill()


def _close_at_exit(env_ref: weakref.ref[LitAsyncVectorEnv]) -> None:
    """Close an async vector env its program left open: ask the workers to close their envs and exit."""
    env = env_ref()
    if env is None or env.closed:
        return
    idle = env._state == AsyncState.DEFAULT and all(process.is_alive() for process in env.processes)
    with contextlib.suppress(Exception):
        env.close(terminate=not idle)


def check_step_timeout(value: Any) -> float | None:
    """``step_timeout`` as seconds: a positive finite number, or None (no limit)."""
    return check_positive_number(
        "step_timeout",
        value,
        allow_none=True,
        hint="It is the seconds an env may take in one reset or step; None: no limit.",
    )


def _wrapper_chain(env: Any) -> set[int]:
    """Ids of ``env`` and every env it wraps (the objects whose methods a step goes through)."""
    ids = set()
    while env is not None and id(env) not in ids:
        ids.add(id(env))
        env = getattr(env, "env", None)
    return ids


def _frames(tb: TracebackType | None) -> list[FrameType]:
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    return frames


def _env_in_frames(envs: list[Any], frames: list[FrameType]) -> tuple[int, str] | None:
    """(index, method name) of the deepest frame that runs a method of one of ``envs`` (or of what they wrap)."""
    chains = [_wrapper_chain(env) for env in envs]
    for frame in reversed(frames):
        owner = frame.f_locals.get("self")
        if owner is None:
            continue
        for index, chain in enumerate(chains):
            if id(owner) in chain:
                return index, frame.f_code.co_name
    return None


class _StepDeadline(BaseException):
    """Raised into the main thread by the watchdog's SIGALRM (a BaseException: env code catching Exception
    must not swallow it)."""


class _Watchdog:
    """A daemon thread that interrupts the main thread when a sync vector step overruns its deadline.

    Arming costs one attribute write per call; the thread wakes a few times per ``timeout`` to compare the
    clock with the deadline. When it fires it sends ``SIGALRM`` to the main thread, whose handler raises
    ``_StepDeadline`` wherever the env is (a blocking ``time.sleep`` or socket read is interrupted too; a
    C extension that never returns to Python cannot be).
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.deadline: float | None = None
        self.fired = False
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._main = threading.main_thread().ident

    @property
    def usable(self) -> bool:
        """Signals reach the main thread only: elsewhere (a trainer run in a thread) the watchdog stays off."""
        return threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill")

    @contextlib.contextmanager
    def armed(self) -> Iterator[None]:
        if not self.arm():
            yield
            return
        try:
            yield
        finally:
            self.deadline = None

    def arm(self) -> bool:
        """Start the clock of one call (``armed`` without a generator: a sync step costs a few us less);
        False where the watchdog cannot run. The caller sets ``deadline = None`` when the call returns."""
        if not self.usable:
            return False
        if self._thread is None:
            self._start()
        self.fired = False
        self.deadline = time.monotonic() + self.timeout
        return True

    def _start(self) -> None:
        current = signal.getsignal(signal.SIGALRM)
        if current not in (signal.SIG_DFL, signal.SIG_IGN, None, _on_alarm):
            _log.warning("SIGALRM already has a handler; the step_timeout watchdog of sync envs stays off.")
            self.timeout = math.inf
        else:
            signal.signal(signal.SIGALRM, _on_alarm)
        self._thread = threading.Thread(target=self._watch, name="lit-sb3 step watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        pause = min(1.0, self.timeout / 4) if math.isfinite(self.timeout) else 3600.0
        while not self._closed.wait(pause):
            deadline = self.deadline
            if deadline is not None and time.monotonic() > deadline and not self.fired:
                self.fired = True
                _FIRED.add(id(self))
                assert self._main is not None
                signal.pthread_kill(self._main, signal.SIGALRM)

    def close(self) -> None:
        self._closed.set()


_FIRED: set[int] = set()


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _FIRED:
        _FIRED.clear()
        raise _StepDeadline


# Spaces whose batches gymnasium iterates with ``iter`` and stacks with ``np.stack`` (its ``iterate`` and
# ``concatenate`` for these types): LitSyncVectorEnv steps them without the dispatch (``_same_step``).
_ARRAY_SPACES = (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)


class LitSyncVectorEnv(SyncVectorEnv):
    """``SyncVectorEnv`` that names the env at fault, with an optional watchdog on every step and reset.

    Args:
        env_fns: as ``SyncVectorEnv``'s.
        step_timeout: seconds one vector ``step``/``reset`` may take (None: no limit).
        role: what the envs are for ("training", "evaluation"), for messages.
        **kwargs: passed to ``SyncVectorEnv`` (``autoreset_mode``, ...).
    """

    def __init__(
        self, env_fns: Any, step_timeout: float | None = None, role: str = "", **kwargs: Any
    ) -> None:
        super().__init__(env_fns, **kwargs)
        self.step_timeout = check_step_timeout(step_timeout)
        self.role = role
        self.vector_steps = 0
        self._watchdog = _Watchdog(self.step_timeout) if self.step_timeout is not None else None
        self._array_step = (
            self.autoreset_mode == AutoresetMode.SAME_STEP
            and type(self.single_observation_space) in _ARRAY_SPACES
            and type(self.action_space) in _ARRAY_SPACES
        )

    def set_step_timeout(self, step_timeout: float | None, role: str = "") -> None:
        """Use ``step_timeout`` from now on (an env built elsewhere, handed to ``RLEnvDataModule``)."""
        self.step_timeout = check_step_timeout(step_timeout)
        self.role = self.role or role
        if self._watchdog is not None:
            self._watchdog.close()
        self._watchdog = _Watchdog(self.step_timeout) if self.step_timeout is not None else None

    def step(self, actions: Any) -> Any:
        self.vector_steps += 1
        watchdog = self._watchdog
        try:
            step = self._same_step if self._array_step else super().step
            if watchdog is None or not watchdog.arm():
                return step(actions)
            try:
                return step(actions)
            finally:
                watchdog.deadline = None
        except _StepDeadline as deadline:
            raise self._timeout("step", deadline) from None
        except Exception as exc:
            raise self._explained(exc, "step") from None

    def _same_step(self, actions: Any) -> Any:
        """``SyncVectorEnv.step`` for SAME_STEP autoreset and array spaces, with the same results and infos.

        gymnasium's step dispatches on the spaces twice (``iterate``, ``concatenate``), checks the autoreset
        mode per env, merges an empty info dict per env and deep-copies the observations: ~6 us of the ~26 us
        vector step of a one-env CartPole, whose own step is ~7 us. Here the arrays are iterated and stacked
        directly (tests/envs/test_sync_vector_step.py compares the two step by step).
        """
        infos: dict[str, Any] = {}
        env_obs: list[Any] = self._env_obs
        rewards = self._rewards
        terminations, truncations = self._terminations, self._truncations
        stacked = self._observations
        # Observations of exactly the batch's row type are copied in row by row (~0.4 us against np.stack's
        # ~2.3 us for one env); any other (another dtype, shape or type) makes np.stack do the batch, with its
        # checks and casting rules.
        row_shape, row_dtype = stacked.shape[1:], stacked.dtype
        exact = True
        for i, (action, env) in enumerate(zip(actions, self.envs, strict=True)):
            env_obs[i], rewards[i], terminations[i], truncations[i], env_info = env.step(action)
            if terminations[i] or truncations[i]:
                infos = self._add_info(infos, {"final_obs": env_obs[i], "final_info": env_info}, i)
                env_obs[i], env_info = env.reset()
            if env_info:
                infos = self._add_info(infos, env_info, i)
            obs = env_obs[i]
            if exact and type(obs) is np.ndarray and obs.shape == row_shape and obs.dtype == row_dtype:
                stacked[i] = obs
            else:
                exact = False
        if not exact:
            self._observations = np.stack(env_obs, axis=0, out=stacked)
        self._autoreset_envs = np.logical_or(terminations, truncations)
        observations = self._observations.copy() if self.copy else self._observations
        return observations, rewards.copy(), terminations.copy(), truncations.copy(), infos

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        try:
            if self._watchdog is None:
                return super().reset(seed=seed, options=options)
            with self._watchdog.armed():
                return super().reset(seed=seed, options=options)
        except _StepDeadline as deadline:
            raise self._timeout("reset", deadline) from None
        except Exception as exc:
            raise self._explained(exc, "reset") from None

    def close_extras(self, **kwargs: Any) -> None:
        if self._watchdog is not None:
            self._watchdog.close()
        super().close_extras(**kwargs)

    def _label(self, index: int) -> str:
        role = f"{self.role} " if self.role else ""
        return f"{role}env {index} ({env_name(self.envs[index])})"

    def _timeout(self, call: str, deadline: BaseException) -> EnvTimeoutError:
        found = _env_in_frames(list(self.envs), _frames(deadline.__traceback__))
        index, method = found if found is not None else (None, call)
        who = self._label(index) if index is not None else f"{self.role + ' ' if self.role else ''}vector env"
        inner = f" (it was in {method}())" if method not in (call, "step", "reset") else ""
        return stuck_env_error(f"{who}{inner}", call, self.step_timeout, self.vector_steps, index)

    def _explained(self, exc: Exception, call: str) -> Exception:
        """``exc`` itself with a note naming the env and the step; a late observation mismatch as EnvError."""
        if isinstance(exc, LitSb3Error):
            return exc  # CheckedEnv's and CheckFinite's errors name the env already
        frames = _frames(exc.__traceback__)
        found = _env_in_frames(list(self.envs), frames)
        if found is None and call == "step":
            for index, obs in enumerate(getattr(self, "_env_obs", [])):
                problem = observation_problem(self.single_observation_space, obs)
                if problem:
                    return EnvError(
                        f"The {self._label(index)} returned an observation that does not match its observation "
                        f"space at vector step {self.vector_steps} (its first steps were fine): {problem}. "
                        f"Fix what step() returns. ({type(exc).__name__}: {exc})"
                    )
            own = [
                f for f in frames if f.f_locals.get("self") is self and isinstance(f.f_locals.get("i"), int)
            ]
            if own and own[-1] is frames[-1]:  # raised storing what env i returned
                index = int(own[-1].f_locals["i"])
                return EnvError(
                    f"The {self._label(index)} returned a step result that cannot be stored at vector step "
                    f"{self.vector_steps} (its first steps were fine): {type(exc).__name__}: {exc}. A reward, "
                    "terminated or truncated that is not a single number is the usual cause; step() must return "
                    "(observation, float reward, bool terminated, bool truncated, dict info)."
                )
        if found is not None:
            index, method = found
            when = f"at vector step {self.vector_steps}" if call == "step" else "during reset()"
            exc.add_note(f"lit-sb3: raised by the {self._label(index)} in {method}() {when}.")
        return exc


def apply_step_timeout(env: Any, step_timeout: float | None, role: str = "") -> bool:
    """Give every lit-sb3 vector env inside ``env`` the limit ``step_timeout``; True if one was found.

    ``env`` is what a user handed over already built: a gymnasium ``VectorEnv`` (maybe wrapped), or an SB3
    ``VecEnv`` chain (``VecNormalize(DummyVecEnv(...))``, ``SubprocVecEnv``, their gymnasium view), whose
    innermost env is a ``LitSyncVectorEnv``/``LitAsyncVectorEnv`` (or a ``StepTimeout`` put on earlier). The
    chain is followed through SB3's ``.venv``, the views' ``.vector_env`` and gymnasium wrappers' ``.env``.
    """
    found = False
    seen: set[int] = set()
    current: Any = env
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, (LitSyncVectorEnv, LitAsyncVectorEnv, StepTimeout)):
            current.set_step_timeout(step_timeout, role)
            found = True
            break
        attributes = vars(current) if hasattr(current, "__dict__") else {}
        current = next(
            (attributes[name] for name in ("venv", "vector_env", "env") if attributes.get(name) is not None),
            None,
        )
    return found


class StepTimeout(VectorWrapper):
    """``step_timeout`` for a gymnasium ``SyncVectorEnv``/``AsyncVectorEnv`` built elsewhere (maybe wrapped).

    lit-sb3's own vector envs carry the limit themselves; an env a user built and passed to
    ``RLEnvDataModule`` gets it from this wrapper instead. An ``AsyncVectorEnv`` (unwrapped) is stepped with
    gymnasium's own ``step_async`` + ``step_wait(timeout)``; anything else, a sync env or a wrapped async one,
    runs under the watchdog lit-sb3's sync envs use. Either way a hung env raises ``EnvTimeoutError`` naming
    it, and an async env's workers are terminated (the env is closed, not left waiting on a dead call).
    """

    def __init__(self, env: VectorEnv, step_timeout: float | None, role: str = "") -> None:
        super().__init__(env)
        self.step_timeout: float | None = None
        self.role = role
        self.vector_steps = 0
        self._watchdog: _Watchdog | None = None
        self.set_step_timeout(step_timeout, role)

    def set_step_timeout(self, step_timeout: float | None, role: str = "") -> None:
        """Use ``step_timeout`` from now on (None: no limit)."""
        self.step_timeout = check_step_timeout(step_timeout)
        self.role = self.role or role
        if self._watchdog is not None:
            self._watchdog.close()
        native = isinstance(self.env, AsyncVectorEnv)  # gymnasium's own timeout; no thread, no signal
        self._watchdog = (
            _Watchdog(self.step_timeout) if self.step_timeout is not None and not native else None
        )

    def step(self, actions: Any) -> Any:
        self.vector_steps += 1
        return self._limited(
            "step", lambda: self.env.step(actions), lambda env, t: _async_step(env, actions, t)
        )

    def reset(self, *, seed: Any = None, options: Any = None) -> Any:
        return self._limited(
            "reset",
            lambda: self.env.reset(seed=seed, options=options),
            lambda env, t: _async_reset(env, seed, options, t),
        )

    def close_extras(self, **kwargs: Any) -> None:
        if self._watchdog is not None:
            self._watchdog.close()
        super().close_extras(**kwargs)

    def _limited(self, call: str, plain: Any, native: Any) -> Any:
        if self.step_timeout is None:
            return plain()
        if isinstance(self.env, AsyncVectorEnv):
            try:
                return native(self.env, self.step_timeout)
            except multiprocessing.TimeoutError:
                waiting = [i for i, pipe in enumerate(self.env.parent_pipes) if not _answered(pipe)]
                raise self._timeout(call, waiting[0] if waiting else None, None, waiting[1:]) from None
        watchdog = self._watchdog
        if watchdog is None or not watchdog.arm():
            return plain()
        try:
            return plain()
        except _StepDeadline as deadline:
            base = self.env.unwrapped
            envs = list(getattr(base, "envs", []))
            found = _env_in_frames(envs, _frames(deadline.__traceback__)) if envs else None
            index, method = found if found is not None else (None, call)
            raise self._timeout(call, index, method, []) from None
        finally:
            watchdog.deadline = None

    def _timeout(
        self, call: str, index: int | None, method: str | None, others: list[int]
    ) -> EnvTimeoutError:
        base = self.env.unwrapped
        role = f"{self.role} " if self.role else ""
        envs = getattr(base, "envs", None)
        if index is None:
            who = f"{role}vector env"
        elif envs is not None:
            who = f"{role}env {index} ({env_name(envs[index])})"
        else:
            who = f"{role}env {index}"
        inner = f" (it was in {method}())" if method not in (None, call, "step", "reset") else ""
        also = f" (envs {others} neither)" if others else ""
        stopped = ""
        if isinstance(base, AsyncVectorEnv):
            with contextlib.suppress(Exception):
                base._state = AsyncState.DEFAULT
                _end_workers(base.processes)
                base.close(terminate=True)
            stopped = f"; its {type(base).__name__} workers were terminated and the env closed"
        return stuck_env_error(
            f"{who}{inner}{also}", call, self.step_timeout, self.vector_steps, index, stopped
        )


def stuck_env_error(
    who: str, call: str, step_timeout: float | None, step: int, index: int | None, stopped: str = ""
) -> EnvTimeoutError:
    """The one wording of "an env did not answer within step_timeout", for every vector env that enforces it."""
    return EnvTimeoutError(
        f"The {who} did not return from {call}() within step_timeout={step_timeout:g} s, at vector step "
        f"{step}{stopped}. It is stuck (a deadlock, a wait on something that never comes); the run stopped. If "
        "it is only slow, raise RLEnvDataModule(step_timeout=...) or pass None for no limit.",
        env_index=index,
        call=call,
        timeout=float(step_timeout or 0),
        step=step,
    )


def _async_step(env: AsyncVectorEnv, actions: Any, timeout: float) -> Any:
    env.step_async(actions)
    return env.step_wait(timeout=timeout)


def _async_reset(env: AsyncVectorEnv, seed: Any, options: Any, timeout: float) -> Any:
    env.reset_async(seed=seed, options=options)
    return env.reset_wait(timeout=timeout)


def with_step_timeout(env: VectorEnv, step_timeout: float | None, role: str = "") -> VectorEnv:
    """``env`` under ``StepTimeout`` when it is (or wraps) gymnasium's ``SyncVectorEnv``/``AsyncVectorEnv``;
    any other vector env (envpool's, a user's own class) is returned as it is, as is ``step_timeout=None``."""
    if step_timeout is None or not isinstance(env.unwrapped, (SyncVectorEnv, AsyncVectorEnv)):
        return env
    return StepTimeout(env, step_timeout, role)
