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


def test_async_eval_refuses_vec_env_wrappers_and_non_async_eval_objects() -> None:
    model = ARS("LinearPolicy", "CartPole-v1", n_delta=2)
    normalized = AsyncEval(
        [lambda: VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]))], model.policy
    )
    with pytest.raises(ValueError, match="without VecEnv wrappers"):
        model.learn(total_timesteps=100, async_eval=normalized)
    assert normalized.closed
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
