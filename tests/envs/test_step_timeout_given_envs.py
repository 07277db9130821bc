"""``step_timeout`` on gymnasium vector envs a user built: a hung env is stopped, a healthy one is unchanged."""

from __future__ import annotations

from typing import Any

import _fault_envs as fe
import gymnasium as gym
import numpy as np
import pytest

from lit_sb3_core.envs.make import make_vector_env
from lit_sb3_core.envs.vector_envs import StepTimeout
from lit_sb3_core.errors import EnvTimeoutError

SAME_STEP = gym.vector.AutoresetMode.SAME_STEP


def _vector(kind: str, fns: list[Any]) -> gym.vector.VectorEnv:
    make = gym.vector.AsyncVectorEnv if kind == "async" else gym.vector.SyncVectorEnv
    return make(fns, autoreset_mode=SAME_STEP)


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_hung_env_in_a_users_vector_env_raises_env_timeout_error(kind: str) -> None:
    env = _vector(kind, [lambda: fe.HangsAtStep(at=3, forever=60.0)])
    limited = make_vector_env(env, step_timeout=2, role="training")
    try:
        limited.reset(seed=0)
        limited.step(np.array([0]))
        limited.step(np.array([0]))
        with pytest.raises(EnvTimeoutError, match=r"The training env 0 .*did not return from step\(\) within "
                           r"step_timeout=2 s, at vector step 3") as raised:  # fmt: skip
            limited.step(np.array([0]))
        assert (raised.value.env_index, raised.value.call, raised.value.timeout) == (0, "step", 2.0)
        if kind == "async":
            assert env.closed and not any(process.is_alive() for process in env.processes)  # type: ignore[attr-defined]
    finally:
        limited.close()


def test_a_wrapped_async_env_is_stopped_by_the_watchdog_and_its_workers_ended() -> None:
    env = _vector("async", [lambda: fe.HangsAtStep(at=2, forever=60.0)])
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(env)
    limited = make_vector_env(wrapped, step_timeout=2)
    try:
        limited.reset(seed=0)
        limited.step(np.array([0]))
        with pytest.raises(EnvTimeoutError, match=r"workers were terminated and the env closed"):
            limited.step(np.array([0]))
        assert env.closed and not any(process.is_alive() for process in env.processes)
    finally:
        limited.close()


@pytest.mark.parametrize("kind", ["sync", "async"])
def test_a_healthy_users_vector_env_steps_exactly_as_without_the_limit(kind: str) -> None:
    plain = _vector(kind, [lambda: gym.make("CartPole-v1")] * 2)
    limited = make_vector_env(_vector(kind, [lambda: gym.make("CartPole-v1")] * 2), step_timeout=2)
    assert isinstance(limited, StepTimeout)
    try:
        first, second = plain.reset(seed=3)[0], limited.reset(seed=3)[0]
        np.testing.assert_array_equal(first, second)
        for step in range(60):
            actions = np.array([step % 2, (step // 3) % 2])
            for a, b in zip(plain.step(actions), limited.step(actions), strict=True):
                if isinstance(a, np.ndarray):
                    np.testing.assert_array_equal(a, b)
        assert limited.num_envs == 2 and limited.unwrapped is not limited
    finally:
        plain.close()
        limited.close()


def test_no_limit_leaves_the_env_as_it_is_and_a_second_call_does_not_wrap_twice() -> None:
    env = _vector("sync", [lambda: gym.make("CartPole-v1")])
    assert make_vector_env(env, step_timeout=None) is env
    once = make_vector_env(env, step_timeout=5)
    assert isinstance(once, StepTimeout)
    assert make_vector_env(once, step_timeout=3) is once and once.step_timeout == 3.0
    once.close()
