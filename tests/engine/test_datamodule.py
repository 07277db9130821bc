import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from lit_sb3_core import RLEnvDataModule, RLTrainer, make_algo


def test_env_id_builds_a_same_step_vector_env_with_episode_statistics() -> None:
    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=3)
    env = dm.get_env("fit")
    assert env.num_envs == 3
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert hasattr(env, "return_queue")
    assert dm.get_env("fit") is env  # built once
    dm.close()


def test_evaluation_stages_default_to_fresh_copies_of_the_train_env() -> None:
    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=2, n_eval_envs=1)
    for stage in ("validate", "test", "predict"):
        env = dm.get_env(stage)
        assert env is not None and env.num_envs == 1 and env is not dm.get_env("fit")
    dm.close()


def test_env_instance_factory_and_wrappers() -> None:
    dm = RLEnvDataModule(train_env=gym.make("CartPole-v1"))
    assert dm.get_env("fit").num_envs == 1
    assert dm.get_env("test") is None  # an instance cannot be copied for evaluation
    calls = []

    def wrap(env: gym.Env) -> gym.Env:
        calls.append(env)
        return gym.wrappers.TimeLimit(env, max_episode_steps=5)

    dm = RLEnvDataModule(train_env=lambda: gym.make("CartPole-v1"), n_envs=2, wrappers=[wrap])
    env = dm.get_env("fit")
    env.reset(seed=0)
    assert len(calls) == 2
    for _ in range(5):
        _, _, _, truncated, _ = env.step(np.zeros(2, dtype=np.int64))
    assert truncated.all()


def test_instance_cannot_be_copied_into_several_envs() -> None:
    with pytest.raises(ValueError, match="factory"):
        RLEnvDataModule(train_env=gym.make("CartPole-v1"), n_envs=2).get_env("fit")


def test_vector_env_with_another_autoreset_mode_is_refused_with_the_fix() -> None:
    vec = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")])
    with pytest.raises(ValueError, match="SAME_STEP"):
        RLEnvDataModule(train_env=vec).get_env("fit")
    ok = gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")], autoreset_mode=AutoresetMode.SAME_STEP)
    assert RLEnvDataModule(train_env=ok).get_env("fit").num_envs == 1


def test_unknown_env_id_suggests_close_matches() -> None:
    with pytest.raises(gym.error.Error, match="Did you mean 'CartPole-v1'"):
        RLEnvDataModule(train_env="CartPol-v1").get_env("fit")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_envs": 0}, "n_envs"),
        ({"n_envs": 1.5}, "n_envs"),
        ({"vectorization": "threads"}, "vectorization"),
        ({"n_eval_envs": 0}, "n_eval_envs"),
    ],
)
def test_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RLEnvDataModule(train_env="CartPole-v1", **kwargs)


def test_seeds_are_base_plus_rank_times_n_envs_plus_index() -> None:
    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=3, seed=7)
    assert dm.env_seed("fit", default=None) == 7
    assert RLEnvDataModule(train_env="CartPole-v1", n_envs=3).env_seed("fit", default=11) == 11
    assert RLEnvDataModule(train_env="CartPole-v1").env_seed("fit", default=None) is None
    # gymnasium seeds sub-env i with seed + i: the envs differ and are reproducible.
    first, _ = dm.get_env("fit").reset(seed=dm.env_seed("fit", None))
    again, _ = RLEnvDataModule(train_env="CartPole-v1", n_envs=3, seed=7).get_env("fit").reset(seed=7)
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first[0], first[1])
    single, _ = gym.make("CartPole-v1").reset(seed=8)
    np.testing.assert_array_equal(first[1], single)


def test_async_vectorization_trains() -> None:
    from lit_sb3 import PPO, RLTrainer

    dm = RLEnvDataModule(train_env="CartPole-v1", n_envs=2, vectorization="async", seed=0)
    model = PPO(n_steps=32, batch_size=32, n_epochs=1)
    RLTrainer(max_steps=128, logger=False, enable_progress_bar=False, enable_checkpointing=False).fit(
        model, datamodule=dm
    )
    assert model.num_timesteps == 128
    dm.close()


def test_fit_without_train_env_says_how_to_fix() -> None:
    from lit_sb3 import PPO, RLTrainer

    trainer = RLTrainer(max_steps=10, logger=False, enable_progress_bar=False)
    with pytest.raises(ValueError, match="train_env"):
        trainer.fit(PPO(), datamodule=RLEnvDataModule(test_env="CartPole-v1"))


def test_model_built_by_fit_sees_the_envs_kwargs_and_wrappers() -> None:
    """The policy is sized from the env the datamodule builds, not from the bare id."""
    model = make_algo("ppo", n_steps=32, batch_size=32, n_epochs=1, seed=0)
    dm = RLEnvDataModule(
        train_env="FrozenLake-v1",
        env_kwargs={"map_name": "8x8"},  # Discrete(64) observations instead of the default Discrete(16)
        wrappers=[lambda env: gym.wrappers.TimeLimit(env, max_episode_steps=20)],
    )
    RLTrainer(max_steps=64, logger=False, enable_checkpointing=False, enable_progress_bar=False).fit(
        model, datamodule=dm
    )
    assert model.observation_space == gym.spaces.Discrete(64)
    stacked = make_algo("ppo", n_steps=32, batch_size=32, n_epochs=1, seed=0)
    dm = RLEnvDataModule(
        train_env="CartPole-v1", wrappers=[lambda env: gym.wrappers.FrameStackObservation(env, 3)]
    )
    RLTrainer(max_steps=64, logger=False, enable_checkpointing=False, enable_progress_bar=False).fit(
        stacked, datamodule=dm
    )
    assert stacked.observation_space.shape == (3, 4)


def test_a_datamodule_prints_its_envs() -> None:
    """str() must not go through Lightning's dataloader listing (wandb's SB3 callback prints every attribute)."""
    datamodule = RLEnvDataModule(train_env="CartPole-v1", val_env="Pendulum-v1", n_envs=2)
    assert (
        str(datamodule)
        == repr(datamodule)
        == ("RLEnvDataModule(train_env='CartPole-v1', val_env='Pendulum-v1', n_envs=2, vectorization='sync')")
    )
