"""Issue 16: sb3-contrib's ``ARS.learn(async_eval=AsyncEval(...))``: the candidates run on worker processes."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AsyncVectorEnv

from lit_sb3 import ARS
from lit_sb3.common.callbacks import BaseCallback
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.vec_env import AsyncEval, DummyVecEnv, VecNormalize
from lit_sb3_core.errors import ConfigurationError


@pytest.fixture(autouse=True)
def _one_thread() -> None:
    torch.set_num_threads(1)


class RecordTrainingEnv(BaseCallback):
    """Records, at each env step, the vector env ARS steps and its episodes per candidate."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[int, int]] = set()

    def _on_step(self) -> bool:
        model: Any = self.model
        self.seen.add((id(model.vector_env.unwrapped), model.n_eval_episodes))
        return True


def test_learn_with_async_eval_trains_on_worker_processes_and_closes_them() -> None:
    env_id = "CartPole-v1"
    model = ARS("LinearPolicy", env_id, n_delta=2, n_top=1, seed=0)
    fns = [lambda: make_vec_env(env_id), lambda: gym.make(env_id, render_mode="rgb_array")]
    # sb3-contrib's form (make_vec_env's envs render rgb_array) and a plain Env
    async_eval = AsyncEval(fns, model.policy, n_eval_episodes=2)
    workers = async_eval.vec_env.vector_env.unwrapped
    assert isinstance(workers, AsyncVectorEnv) and workers.num_envs == 2
    processes = list(workers.processes)
    assert all(process.is_alive() for process in processes)
    recorder = RecordTrainingEnv()
    weights_before = torch.cat([p.flatten() for p in model.policy.parameters()]).clone()

    model.learn(total_timesteps=600, callback=recorder, async_eval=async_eval)

    assert model.num_timesteps >= 600
    assert recorder.seen == {(id(workers), 2)}  # every step on the workers
    assert not torch.equal(weights_before, torch.cat([p.flatten() for p in model.policy.parameters()]))
    # As in sb3-contrib, learn closes the AsyncEval: no worker is left, and the model has its own env back.
    assert async_eval.closed
    for process in processes:
        process.join(timeout=10)
    assert not any(process.is_alive() for process in processes)
    assert model.n_eval_episodes == 1
    assert not isinstance(model.get_env().vector_env.unwrapped, AsyncVectorEnv)
    with pytest.raises(ValueError, match="closed"):
        model.learn(total_timesteps=100, async_eval=async_eval)


def test_async_eval_refuses_several_envs_per_worker_and_non_async_eval_objects() -> None:
    model = ARS("LinearPolicy", "CartPole-v1", n_delta=2)
    several = AsyncEval([lambda: make_vec_env("CartPole-v1", n_envs=2)], model.policy)
    with pytest.raises(ValueError, match="a VecEnv of one env"):
        model.learn(total_timesteps=100, async_eval=several)
    assert several.closed
    with pytest.raises(ConfigurationError, match="must be an AsyncEval"):
        model.learn(total_timesteps=100, async_eval=object())
    with pytest.raises(ValueError, match="at least one"):
        AsyncEval([], model.policy)
    with pytest.raises(ValueError, match="n_eval_episodes"):
        AsyncEval([lambda: gym.make("CartPole-v1")], model.policy, n_eval_episodes=0)


def test_async_eval_seeds_and_sets_reset_options_of_its_workers() -> None:
    model = ARS("LinearPolicy", "CartPole-v1", n_delta=2, n_top=1, seed=0)
    async_eval = AsyncEval([lambda: gym.make("CartPole-v1") for _ in range(2)], model.policy)
    try:
        assert async_eval.seed() == []  # sb3-contrib's: None does nothing
        assert async_eval.seed(3) == [3, 4]
        obs = async_eval.vec_env.reset()
        expected = [gym.make("CartPole-v1").reset(seed=3 + i)[0] for i in range(2)]
        assert np.allclose(obs, np.stack(expected))
        async_eval.set_options({"low": 0.0, "high": 0.0})  # CartPole's reset bounds: the start state is 0
        assert np.all(async_eval.vec_env.reset() == 0.0)
    finally:
        async_eval.close()


class ConstantEnv(gym.Env):
    """Observes ``value`` at every step of 5-step episodes: the observation statistics are known exactly."""

    observation_space = gym.spaces.Box(-100.0, 100.0, (1,), dtype=np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, value: float) -> None:
        self.value, self.t = value, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.full(1, self.value, dtype=np.float32), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return np.full(1, self.value, dtype=np.float32), float(action), self.t == 5, False, {}


def normalized_constant(value: float) -> VecNormalize:
    return VecNormalize(DummyVecEnv([lambda: ConstantEnv(value)]))


def test_vec_normalize_workers_statistics_merge_into_the_models_env_once_each() -> None:
    """sb3-contrib's contract: each worker's VecNormalize normalizes what its candidates see; after every
    iteration their statistics are merged into the model's VecNormalize and copied back to them. Every
    observation counts once: worker 0 sees only 0, worker 1 only 10, so the merged mean is 5, the variance 25."""
    main = normalized_constant(0.0)
    model = ARS("LinearPolicy", main, n_delta=1, seed=0)
    async_eval = AsyncEval(
        [lambda: normalized_constant(0.0), lambda: normalized_constant(10.0)], model.policy
    )
    merges: list[float] = []
    merge = async_eval.merge_obs_rms
    async_eval.merge_obs_rms = lambda target: (merge(target), merges.append(target.obs_rms.count))  # type: ignore[method-assign]
    model.learn(total_timesteps=30, async_eval=async_eval)  # 3 iterations of 2 candidates x 5 steps

    assert len(merges) == 3 and model.get_env() is main
    observations = 2 + model.num_timesteps  # each worker's first reset, then one per step
    rms = main.obs_rms
    np.testing.assert_allclose(rms.count, observations, atol=1e-3)
    np.testing.assert_allclose(rms.mean, [5.0], atol=1e-3)
    np.testing.assert_allclose(rms.var, [25.0], atol=1e-2)
    np.testing.assert_allclose(np.diff(merges), 10.0, atol=1e-6)  # each merge adds that iteration's steps


def test_async_eval_reads_and_syncs_the_workers_statistics() -> None:
    model = ARS("LinearPolicy", normalized_constant(0.0), n_delta=1, seed=0)
    async_eval = AsyncEval([lambda: normalized_constant(3.0)], model.policy)
    try:
        async_eval.vec_env.reset()
        (worker,) = async_eval.get_obs_rms()
        assert worker is not None and worker.mean[0] > 2.9  # its first observation, 3
        worker.mean = np.array([-1.0])
        async_eval.sync_obs_rms(worker)
        (synced,) = async_eval.get_obs_rms()
        assert synced is not None and synced.mean[0] == -1.0
        plain = AsyncEval([lambda: gym.make("CartPole-v1")], model.policy)
        assert plain.get_obs_rms() == [None]  # sb3-contrib's: no VecNormalize, no statistics
        plain.close()
    finally:
        async_eval.close()
