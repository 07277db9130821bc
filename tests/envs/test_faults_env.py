"""Broken environments: caught where they break, with the env index, what was expected and how to fix it.

Every case is a real env (tests/_fault_envs.py) trained by a real PPO through RLTrainer/learn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _fault_envs as fe
import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import VectorEnv

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.envs.guards import CheckedEnv, CheckFinite, observation_problem
from lit_sb3_core.envs.make import make_vector_env
from lit_sb3_core.envs.vector_envs import LitAsyncVectorEnv
from lit_sb3_core.errors import EnvError, LitSb3Error, NonFiniteError

SMALL = {"n_steps": 16, "batch_size": 16, "n_epochs": 1, "seed": 0}


def _second_is(broken: type[gym.Env]) -> VectorEnv:
    """Two envs, built as RLEnvDataModule builds them; the first is healthy, the second ``broken``.

    The error must name env 1.
    """
    envs: Iterator[gym.Env] = iter([fe.Healthy(), broken()])
    return make_vector_env(lambda: next(envs), 2, role="training")


def _train(
    datamodule: RLEnvDataModule, steps: int = 64, policy: str = "MlpPolicy", **trainer_kwargs: Any
) -> PPO:
    model = PPO(policy, **SMALL)
    kwargs = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False, **trainer_kwargs}
    RLTrainer(max_steps=steps, **kwargs).fit(model, datamodule=datamodule)
    return model


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (fe.WrongShape, (r"training env 1 \(WrongShape\).*on reset\(\): observation has shape \(3,\), but the "
                         r"observation space Box\(shape=\(4,\), float32\) expects shape \(4,\)")),
        (fe.WrongShapeAfterReset, (r"training env 1 .*on step\(\): observation has shape \(2, 2\)"
                                   r".*expects shape \(4,\)")),
        (fe.OldResetReturnsObs, (r"training env 1 .*returned array of shape \(4,\), dtype float32 from reset\(\), "
                                 r"not \(observation, info\): this is the old Gym API.*shimmy")),
        (fe.OldResetNoSeed, r"training env 1 .*uses the old Gym API: its reset\(\) does not accept seed.*shimmy"),
        (fe.OldStepFourValues, (r"training env 1 .*returned 4 values from step\(\) \(observation, reward, done, "
                                r"info\): this is the old Gym API.*terminated, truncated")),
        (fe.ArrayReward, r"training env 1 .*reward that is not a number.*shape \(2,\).*float\(reward\)"),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)  # fmt: skip
def test_a_broken_env_is_caught_on_its_first_reset_or_step(broken: type[gym.Env], message: str) -> None:
    with pytest.raises(EnvError, match=message):
        _train(RLEnvDataModule(train_env=_second_is(broken)))


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (fe.WrongDtype, (r"training env 0 .*observation has dtype float64, which does not convert safely to the "
                         r"space's dtype uint8")),
        (fe.DictMissingKey, r"training env 0 .*observation has keys \['pos'\], the space has \['pos', 'vel'\]"),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else "",
)  # fmt: skip
def test_observations_that_do_not_fit_their_space(broken: type[gym.Env], message: str) -> None:
    policy = "MultiInputPolicy" if broken is fe.DictMissingKey else "MlpPolicy"
    with pytest.raises(EnvError, match=message):
        _train(RLEnvDataModule(train_env=broken, n_envs=2), policy=policy)


def test_the_checks_cost_nothing_after_the_first_reset_and_step() -> None:
    vec = make_vector_env(fe.Healthy, 2)
    checked = vec.envs[0]
    assert isinstance(checked, CheckedEnv)
    assert checked.step.__func__ is CheckedEnv.step  # type: ignore[attr-defined]
    vec.reset(seed=0)
    vec.step(np.zeros(2, dtype=np.int64))
    # From now on the wrapper is out of the call path: its step and reset are the wrapped env's own.
    assert checked.step.__self__ is checked.env and checked.reset.__self__ is checked.env  # type: ignore[attr-defined]
    vec.close()


def test_observation_problem_accepts_what_the_vector_env_can_store() -> None:
    box = gym.spaces.Box(-1, 1, (2,), np.float32)
    assert observation_problem(box, np.zeros(2, np.float64)) is None  # a harmless cast, as SB3 allows
    assert observation_problem(box, [0.0, 5.0]) is None  # out of bounds: SB3's check_env only warns
    assert observation_problem(gym.spaces.Discrete(3), 2) is None
    image = gym.spaces.Box(0, 255, (2, 2, 1), np.uint8)
    assert observation_problem(image, np.full((2, 2, 1), 200, np.int64)) is None  # ints in range: fine
    assert "from 0 to 300" in observation_problem(image, np.array([0, 300, 1, 2]).reshape(2, 2, 1))  # type: ignore[operator]
    assert "shape ()" in observation_problem(gym.spaces.Discrete(3), np.array([2]))  # type: ignore[operator]
    assert "not numeric" in observation_problem(box, np.array([None, 1]))  # type: ignore[operator]


def test_nan_observations_without_the_guard_are_explained_not_a_torch_traceback() -> None:
    with pytest.raises(NonFiniteError, match=r"training env 0 .*NaN or infinity.*check_finite=True") as info:
        _train(RLEnvDataModule(train_env=fe.NanObservation, n_envs=1))
    assert info.value.what == "observation" and info.value.env_index == 0
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_the_finite_guard_names_the_env_the_value_and_the_action() -> None:
    with pytest.raises(
        NonFiniteError,
        match=r"The training env 1 returned a non-finite observation at vector step 5 "
        r"after action [01]: \[0\.\d+, nan, 0\.\d+, 0\.\d+\]",
    ) as info:
        _train(RLEnvDataModule(train_env=_second_is(fe.NanObservation), check_finite=True))
    error = info.value
    assert (error.what, error.env_index, error.step) == ("observation", 1, 5)
    assert error.action in (0, 1)

    with pytest.raises(NonFiniteError, match=r"training env 1 returned a non-finite reward at vector step 5 after "
                                             r"action [01]: inf") as info:  # fmt: skip
        _train(RLEnvDataModule(train_env=_second_is(fe.InfReward), check_finite=True))
    assert info.value.what == "reward"


def test_an_infinite_reward_without_the_guard_reports_the_divergence() -> None:
    # The rollout takes the inf reward, the update turns the weights into NaN, the next rollout cannot act.
    with pytest.raises(
        NonFiniteError,
        match=r"Training diverged: after \d+ environment steps the policy's "
        r"parameters hold NaN.*check_finite=True.*detect_anomaly=True",
    ) as info:
        _train(RLEnvDataModule(train_env=fe.InfReward, n_envs=2))
    assert info.value.what == "parameters"


def test_the_finite_guard_catches_a_diverged_policy_action() -> None:
    vec = CheckFinite(make_vector_env("Pendulum-v1", 2))
    vec.reset(seed=0)
    vec.step(np.zeros((2, 1), np.float32))
    with pytest.raises(NonFiniteError, match=r"The policy produced a non-finite action for training env 1 at "
                                             r"vector step 2: \[nan\]. Its parameters diverged"):  # fmt: skip
        vec.step(np.array([[0.0], [np.nan]], np.float32))
    vec.close()


def test_detect_anomaly_trains_end_to_end_and_names_the_nan_operation() -> None:
    model = _train(RLEnvDataModule(train_env="CartPole-v1", n_envs=2), steps=64, detect_anomaly=True)
    assert model.num_timesteps == 64
    with pytest.raises(RuntimeError, match=r"Function '\w+Backward\d*' returned nan values"):
        _train(RLEnvDataModule(train_env=fe.InfReward, n_envs=2), detect_anomaly=True)


def test_an_env_raising_in_step_keeps_its_exception_closes_envs_and_flushes_logs(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    datamodule = RLEnvDataModule(train_env=lambda: fe.CrashesAtStep(crash_at=40), n_envs=1)
    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=1000, default_root_dir=tmp_path, enable_progress_bar=False)
    with pytest.raises(fe.SimulatorCrash, match="lost its connection at step 40") as info:
        trainer.fit(model, datamodule=datamodule)
    assert info.value.code == 17  # the user's own exception object, attributes and all
    vec = model.vector_env
    assert vec is not None and vec.unwrapped.closed, "the training envs were not closed"
    assert datamodule._envs == {}, "a later run must build fresh envs"
    # Two whole iterations (32 steps) happened; the unfinished third is not counted.
    assert model.num_timesteps == 32 and model.iterations == 2
    (run,) = (tmp_path / "lightning_logs").iterdir()
    events = EventAccumulator(str(run)).Reload()
    assert [e.step for e in events.Scalars("time/fps")] == [16, 32], "the loggers were not flushed"
    # The model is intact: training continues on fresh envs.
    model.learn(32, env=fe.Healthy, reset_num_timesteps=False)
    assert model.num_timesteps == 64


def _fit_async(env: Any) -> PPO:
    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=1000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    try:
        trainer.fit(model, datamodule=RLEnvDataModule(train_env=env, n_envs=2, vectorization="async"))
    finally:
        vec = model.vector_env.unwrapped  # type: ignore[union-attr]
        assert isinstance(vec, LitAsyncVectorEnv) and vec.closed
        for process in vec.processes:
            process.join(timeout=10)
            assert not process.is_alive(), "an async worker outlived the failed run"
    return model


def test_an_async_worker_raising_keeps_the_exception_object_and_names_the_worker() -> None:
    with pytest.raises(
        fe.SimulatorCrash, match=r"worker process Worker<LitAsyncVectorEnv>-1 lost the simulator"
    ) as info:
        _fit_async(fe.CrashesInWorker)
    error = info.value
    assert type(error) is fe.SimulatorCrash and error.code == 23  # gymnasium would raise type(e)(e)
    notes = "\n".join(getattr(error, "__notes__", []))
    assert "raised in AsyncVectorEnv worker 1 (env index 1)" in notes
    assert "Traceback" in notes and "_fault_envs.py" in notes and "lost the simulator" in notes


def test_an_async_worker_exception_that_cannot_cross_processes_is_named() -> None:
    # StubbornCrash(message, code) pickles but cannot be rebuilt: plain gymnasium fails with a TypeError
    # about StubbornCrash.__init__ in the main process and loses the worker's traceback.
    with pytest.raises(EnvError, match=r"training env 1 \(CrashesInWorker\) raised _fault_envs.StubbornCrash: "
                                       r"worker process .* lost the simulator \(attributes \{'code': 23\}\).*"
                                       r"Make the exception class picklable") as info:  # fmt: skip
        _fit_async(lambda: fe.CrashesInWorker(stubborn=True))
    assert "raised in AsyncVectorEnv worker 1" in "\n".join(info.value.__notes__)


def test_ours_are_lit_sb3_errors_and_value_errors() -> None:
    assert issubclass(EnvError, LitSb3Error) and issubclass(EnvError, ValueError)
    assert issubclass(NonFiniteError, LitSb3Error) and issubclass(NonFiniteError, ValueError)


# hangs, dead workers and faults that appear late ---------------------------------------------------------


def _fit(env: Any, vectorization: str = "sync", n_envs: int = 2, **datamodule_kwargs: Any) -> PPO:
    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=1000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    datamodule = RLEnvDataModule(
        train_env=env, n_envs=n_envs, vectorization=vectorization, **datamodule_kwargs
    )  # type: ignore[arg-type]
    trainer.fit(model, datamodule=datamodule)
    return model


@pytest.mark.parametrize(
    ("env", "vectorization", "who"),
    [
        (lambda: fe.HangsAtStep(at=20), "sync", r"The training env 0 \(HangsAtStep\)"),  # blocked in a sleep
        (lambda: fe.SpinsAtStep(at=20), "sync", r"The training env 0 \(SpinsAtStep\)"),  # a busy Python loop
        (lambda: fe.HangsAtStep(at=20, index=1), "async", r"The training env 1 did not return"),
    ],
    ids=["sync-blocked", "sync-spinning", "async"],
)
def test_an_env_that_hangs_is_stopped_by_step_timeout_and_named(
    env: Any, vectorization: str, who: str
) -> None:
    from lit_sb3_core.errors import EnvTimeoutError

    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=1000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    datamodule = RLEnvDataModule(train_env=env, n_envs=2, vectorization=vectorization, step_timeout=1.0)  # type: ignore[arg-type]
    with pytest.raises(
        EnvTimeoutError, match=rf"{who}.* from step\(\) within step_timeout=1 s.*at vector step 20"
    ):
        trainer.fit(model, datamodule=datamodule)
    # Nothing lost: the model holds its last whole iteration (step 20 is in the second rollout of 16).
    assert (model.num_timesteps, model.iterations) == (32, 1)
    assert datamodule._envs == {}, "the hung envs were not closed"


def test_a_slow_but_healthy_env_is_not_stopped() -> None:
    # 60 ms per step, 2 envs stepped one after the other: each vector step takes ~0.12 s, well within the limit.
    model = PPO(n_steps=8, batch_size=16, n_epochs=1, seed=0)
    trainer = RLTrainer(max_steps=32, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    datamodule = RLEnvDataModule(
        train_env=lambda: fe.SlowAfter(fast_steps=0, delay=0.06), n_envs=2, step_timeout=1.0
    )
    trainer.fit(model, datamodule=datamodule)
    assert model.num_timesteps == 32


def test_the_default_step_timeout_is_documented_and_generous() -> None:
    from lit_sb3_core.envs.vector_envs import DEFAULT_STEP_TIMEOUT_S

    assert RLEnvDataModule(train_env="CartPole-v1").step_timeout == DEFAULT_STEP_TIMEOUT_S == 600.0
    assert RLEnvDataModule(train_env="CartPole-v1", step_timeout=None).step_timeout is None
    assert "step_timeout" in (RLEnvDataModule.__doc__ or "")


def test_a_killed_async_worker_is_named_with_its_signal() -> None:
    with pytest.raises(
        EnvError,
        match=r"lost a worker during step\(\) at vector step 5: env 1 \(pid \d+\) was killed by SIGKILL "
        r"\(exit code -9\)",
    ) as info:
        _fit_async(lambda: fe.DiesInWorker(at=5, index=1))
    assert not isinstance(info.value, EOFError)


def test_an_error_in_a_sync_env_names_the_env_index_and_the_step() -> None:
    vec = _second_is(lambda: fe.CrashesAtStep(crash_at=7))
    vec.reset(seed=0)
    with pytest.raises(fe.SimulatorCrash) as info:
        for _ in range(10):
            vec.step(np.zeros(2, dtype=np.int64))
    assert info.value.code == 17  # still the env's own exception
    assert (
        "lit-sb3: raised by the training env 1 (CrashesAtStep) in step() at vector step 7."
        in info.value.__notes__
    )


@pytest.mark.parametrize("vectorization", ["sync", "async"])
def test_an_observation_that_goes_wrong_after_the_first_steps_names_the_env_and_the_step(
    vectorization: str,
) -> None:
    with pytest.raises(
        EnvError,
        match=r"training env \d \(WrongShapeLater\) returned an observation that does not match its observation "
        r"space at (vector step|its step) 13 \(its first steps were fine\): observation has shape \(3,\)",
    ):
        _fit(fe.WrongShapeLater, vectorization)


def test_a_reward_that_goes_wrong_later_names_the_env_and_the_step() -> None:
    with pytest.raises(
        EnvError,
        match=r"training env 0 \(ArrayRewardLater\) returned a step result that cannot be stored at vector step 13",
    ):
        _fit(fe.ArrayRewardLater, n_envs=1)


_LEAVES_ENV_OPEN = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np
import _fault_envs as fe
from lit_sb3_core.envs.vector_envs import LitAsyncVectorEnv

vec = LitAsyncVectorEnv([fe.IgnoresSigterm, fe.IgnoresSigterm])
vec.reset(seed=0)
vec.step(np.zeros(2, dtype=np.int64))
if {forced}:
    vec.close(terminate=True)  # gymnasium would join the SIGTERM-proof workers forever
    assert not any(process.is_alive() for process in vec.processes)
print("stepped")
"""


@pytest.mark.parametrize("forced", [False, True], ids=["left-open-at-exit", "forced-close"])
def test_workers_that_ignore_sigterm_do_not_hang_exit_or_close(forced: bool) -> None:
    """SB3's multiprocessing example leaves its SubprocVecEnv of pygame windows open when it ends."""
    import subprocess
    import sys

    code = _LEAVES_ENV_OPEN.format(tests=str(Path(__file__).resolve().parents[1]), forced=forced)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "stepped"
