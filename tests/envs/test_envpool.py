"""envpool as a vectorization backend: the gymnasium path's SAME_STEP semantics, statistics and seeding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.filterwarnings("ignore:.*precision lowered:UserWarning")

pytest.importorskip(
    "envpool", reason="the envpool extra is not installed: pip install 'lit-sb3-core[envpool]'"
)

from lit_sb3_core import RLEnvDataModule, RLTrainer, make_algo  # noqa: E402
from lit_sb3_core.envs.envpool_env import EnvpoolVectorEnv, envpool_task  # noqa: E402
from lit_sb3_core.errors import ConfigurationError  # noqa: E402

HORIZON = 5  # CartPole cannot fall within 5 steps: every episode ends by truncation


def _trainer(steps: int) -> RLTrainer:
    return RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )


def test_truncated_episodes_end_with_their_true_final_observation() -> None:
    env = EnvpoolVectorEnv("CartPole-v1", 3, seed=0, env_kwargs={"max_episode_steps": HORIZON})
    obs, _ = env.reset(seed=0)
    for _ in range(HORIZON):
        previous = obs
        obs, rewards, terminated, truncated, infos = env.step(np.array([1, 0, 1]))
        assert rewards.tolist() == [1.0, 1.0, 1.0] and not terminated.any()
    assert truncated.all() and infos["_final_obs"].all()
    for i in range(3):
        final = infos["final_obs"][i]
        # CartPole's Euler step: the final x is the previous x plus tau times its velocity, so the final
        # observation continues the episode; the returned one is the next episode's first (|x| < 0.05).
        assert final[0] == pytest.approx(previous[i][0] + 0.02 * previous[i][1], abs=1e-5)
        assert np.abs(obs[i]).max() < 0.05 and not np.allclose(obs[i], final)
    obs, _, _, truncated, _ = env.step(np.array([0, 0, 0]))
    assert not truncated.any()  # a fresh episode, stepped once (no hidden reset step)
    env.close()


def test_ppo_bootstraps_truncations_from_the_final_observation() -> None:
    dm = RLEnvDataModule(
        train_env="CartPole-v1", vectorization="envpool", env_kwargs={"max_episode_steps": HORIZON}, seed=0
    )
    model = make_algo("ppo", n_steps=12, batch_size=12, n_epochs=1, gamma=0.9, learning_rate=0.0, seed=0)
    _trainer(12).fit(model, datamodule=dm)
    buffer = model.rollout
    rewards, starts = buffer.rewards[:, 0], buffer.episode_starts[:, 0]
    assert starts.tolist() == [1, 0, 0, 0, 0] * 2 + [1, 0]
    for t in range(12):
        truncating = t % HORIZON == HORIZON - 1  # the action that ran into the time limit
        assert (rewards[t] != 1.0) == truncating, t  # only those bootstrap: 1 + 0.9 V(final)
    # The bootstrap used the value of a real final observation, which the policy can recompute.
    env = EnvpoolVectorEnv(
        "CartPole-v1", 1, seed=dm.env_seed("fit", 0), env_kwargs={"max_episode_steps": HORIZON}
    )
    env.reset()
    for action in buffer.actions[:HORIZON, 0].tolist():
        *_, infos = env.step(np.array([int(action)]))
    with torch.no_grad():
        final_value = model.policy.predict_values(torch.as_tensor(infos["final_obs"][0][None])).item()
    assert rewards[HORIZON - 1] == pytest.approx(1.0 + 0.9 * final_value, rel=1e-4)
    env.close()
    dm.close()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_episode_statistics_and_per_rank_seeds() -> None:
    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=2, vectorization="envpool", seed=7)
    env = dm.get_env("fit")
    first, _ = env.reset(seed=dm.env_seed("fit", None))
    for _ in range(200):
        env.step(np.array([0, 0]))  # always left: episodes of about 10 steps
    assert env.episode_count >= 20 and all(8 <= length <= 30 for length in env.length_queue)
    assert list(env.return_queue) == [float(n) for n in env.length_queue]
    again = EnvpoolVectorEnv("CartPole-v1", 2, seed=7)
    np.testing.assert_array_equal(again.reset()[0], first)  # env i is seeded seed + i: reproducible
    other = EnvpoolVectorEnv("CartPole-v1", 2, seed=9).reset()[0]  # rank 1 of 2-env ranks: seed 7 + 2
    assert not np.array_equal(other, first)
    np.testing.assert_array_equal(other[0], EnvpoolVectorEnv("CartPole-v1", 2, seed=8).reset()[0][1])
    dm.close()


def test_ids_envpool_lacks_and_unusable_options_are_refused() -> None:
    with pytest.raises(ConfigurationError, match=r"envpool has no environment 'CartPol-v1'.*CartPole"):
        envpool_task("CartPol-v1", None)
    with pytest.raises(ConfigurationError, match="atari=True"):
        envpool_task("PongNoFrameskip-v4", None)
    with pytest.raises(ConfigurationError, match="single-env wrappers"):
        RLEnvDataModule(train_env="CartPole-v1", vectorization="envpool", wrappers=[lambda e: e]).get_env(
            "fit"
        )
    with pytest.raises(ConfigurationError, match="env id"):
        RLEnvDataModule(train_env=lambda: None, vectorization="envpool").get_env("fit")
    with pytest.raises(ConfigurationError, match="'sync', 'async' or 'envpool'"):
        RLEnvDataModule(train_env="CartPole-v1", vectorization="threads")


@pytest.mark.parametrize("algo", ["ppo", "dqn", "sac"])
def test_algorithms_train_on_envpool(algo: str) -> None:
    env_id = "Pendulum-v1" if algo == "sac" else "CartPole-v1"
    kwargs = {"learning_starts": 96} if algo != "ppo" else {"n_steps": 32, "batch_size": 64}
    dm = RLEnvDataModule(train_env=env_id, n_envs=2, vectorization="envpool", seed=0)
    model = make_algo(algo, seed=0, **kwargs)
    _trainer(128).fit(model, datamodule=dm)
    assert model.num_timesteps >= 128
    assert dm.get_env("fit").unwrapped.__class__ is EnvpoolVectorEnv
    dm.close()


def test_atari_on_envpool_reports_whole_games() -> None:
    pytest.importorskip("ale_py", reason="the atari extra is not installed")
    dm = RLEnvDataModule(
        train_env="BreakoutNoFrameskip-v4", n_envs=2, vectorization="envpool", atari=True, seed=0
    )
    env = dm.get_env("fit")
    assert (
        env.single_observation_space.shape == (4, 84, 84) and env.single_observation_space.dtype == np.uint8
    )
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    dones = 0
    while env.episode_count < 2:
        _, rewards, terminated, truncated, _ = env.step(rng.integers(4, size=2))
        assert set(np.unique(rewards)) <= {0.0, 1.0}  # clipped for training
        dones += int(np.sum(terminated | truncated))
    assert dones >= 4 * env.episode_count  # five lives per game
    assert all(length >= 100 for length in env.length_queue)
    model = make_algo("ppo", policy="CnnPolicy", n_steps=16, batch_size=32, n_epochs=1, seed=0)
    _trainer(32).fit(model, datamodule=dm)
    assert str(model.rollout.observations.dtype) == "torch.uint8"
    dm.close()


def test_envpool_config_keys_do_not_reach_the_gymnasium_envs_beside_the_pool() -> None:
    # num_threads is an envpool key gym.make refuses; the spaces probe and evaluation envs are gymnasium's.
    dm = RLEnvDataModule(
        train_env="CartPole-v1", test_env="CartPole-v1", vectorization="envpool", seed=0,
        env_kwargs={"num_threads": 1, "max_episode_steps": HORIZON},
    )  # fmt: skip
    model = make_algo("ppo", n_steps=8, batch_size=8, n_epochs=1, seed=0)
    _trainer(8).fit(model, datamodule=dm)
    assert model.num_timesteps == 8
    test_env = dm.get_env("test")
    test_env.reset(seed=0)
    for _ in range(HORIZON):
        *_, truncated, _ = test_env.step(np.zeros(test_env.num_envs, dtype=np.int64))
    assert truncated.all(), "max_episode_steps, which both understand, still reaches the gymnasium envs"
    dm.close()
