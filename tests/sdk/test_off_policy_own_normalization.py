"""Off-policy algorithms with ``RLEnvDataModule(normalize=...)``: the model's own statistics, SB3's semantics.

As with SB3's ``VecNormalize``, the policy acts on normalized observations, the replay buffer keeps the raw
observations and rewards, and every minibatch the updates train on is normalized with the statistics of now
(``sample_replay``). The statistics travel in model files and Lightning checkpoints, and ``predict``
normalizes raw observations with them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3 import DDPG, DQN, QRDQN, SAC, TD3, TQC, CrossQ, RLEnvDataModule, RLTrainer
from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.testing import PointGoalEnv

STEPS = 450  # Pendulum truncates at 200 steps: final observations of both envs in the buffer
EPSILON = 1e-4  # RunningMeanStd's prior count


def fitted(
    model: Any,
    steps: int,
    normalize: Any,
    env: Any = "Pendulum-v1",
    n_envs: int = 2,
    ckpt_path: Path | None = None,
    **trainer_kwargs: Any,
) -> Any:
    options = {"logger": False, "enable_progress_bar": False, "enable_checkpointing": False, **trainer_kwargs}
    datamodule = RLEnvDataModule(train_env=env, n_envs=n_envs, seed=0, normalize=normalize)
    RLTrainer(max_steps=steps, **options).fit(model, datamodule=datamodule, ckpt_path=ckpt_path)
    return model


def sac(**kwargs: Any) -> SAC:
    return SAC("MlpPolicy", **{"learning_starts": 10_000, "buffer_size": 10_000, "seed": 0, **kwargs})


def test_the_buffer_keeps_raw_transitions_and_minibatches_are_normalized_now() -> None:
    """Random steps (no update before ``learning_starts``) give the same transitions with and without
    normalization, so the buffers must hold the same numbers; ``sample_replay`` normalizes them with the
    statistics of now, which learned from every observation, the random warm-up's included."""
    both = {"observation": True, "reward": True, "clip_reward": 1e3}
    plain, normalized = fitted(sac(), STEPS, None), fitted(sac(), STEPS, both)
    ours, theirs = normalized.replay_buffer.storage_arrays(), plain.replay_buffer.storage_arrays()
    for name, array in theirs.items():
        np.testing.assert_array_equal(ours[name], array, err_msg=name)
    statistics = normalized.obs_normalizer.rms
    assert float(statistics.count) == pytest.approx(EPSILON + STEPS)
    np.random.seed(5)
    raw = normalized.replay_buffer.sample(256)
    np.random.seed(5)
    batch = normalized.sample_replay(256)
    for name in ("observations", "next_observations"):
        values = getattr(raw, name).double()
        expected = ((values - statistics.mean) / torch.sqrt(statistics.var + 1e-8)).clamp(-10, 10).float()
        torch.testing.assert_close(getattr(batch, name), expected)
    scale = torch.sqrt(normalized.reward_normalizer.rms.var + 1e-8).float()
    torch.testing.assert_close(batch.rewards, raw.rewards / scale)
    assert batch.rewards.abs().max() < raw.rewards.abs().max()  # Pendulum's rewards reach -16: scaled down


PENDULUM = {"env": "Pendulum-v1", "normalize": True}
CARTPOLE = {"env": "CartPole-v1", "normalize": True}
SMALL = {"learning_starts": 100, "batch_size": 32, "seed": 0, "policy_kwargs": {"net_arch": [32, 32]}}
CASES = {
    "sac": (lambda: SAC("MlpPolicy", **SMALL), PENDULUM),
    "td3": (lambda: TD3("MlpPolicy", **SMALL), PENDULUM),
    "ddpg": (lambda: DDPG("MlpPolicy", **SMALL), PENDULUM),
    "tqc": (lambda: TQC("MlpPolicy", **SMALL), PENDULUM),
    "crossq": (lambda: CrossQ("MlpPolicy", **SMALL), PENDULUM),
    "dqn": (lambda: DQN("MlpPolicy", **SMALL), CARTPOLE),
    "qrdqn": (lambda: QRDQN("MlpPolicy", **SMALL), CARTPOLE),
    # HER's Dict observations cannot be normalized (refused below); its rewards can, relabelled ones included
    "her": (
        lambda: SAC("MultiInputPolicy", replay_buffer_class="her", **SMALL),
        {"env": PointGoalEnv, "normalize": "reward"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_off_policy_algorithm_acts_and_trains_on_normalized_data(name: str) -> None:
    make, run = CASES[name]
    model = fitted(make(), 120, n_envs=1, **run)  # builds the buffer; the spy goes on the run's buffer
    buffer = model.replay_buffer
    sample, seen = buffer.sample, []

    def spy(batch_size: int, env: Any = None) -> Any:
        seen.append(env)
        return sample(batch_size, env=env)

    buffer.sample = spy
    explore, acted = model.explore, []

    def acting(obs: Any) -> Any:  # what the policy acts on, beside the raw observation normalized now
        acted.append((obs, model.normalizers.normalize_obs(model.last_obs)))
        return explore(obs)

    model.explore = acting
    updates = model.n_updates
    fitted(model, 300, n_envs=1, **run)
    assert model.n_updates > updates and seen and all(env is model.normalizers for env in seen)
    assert acted
    for obs, expected in acted:
        if model.obs_normalizer is not None:
            np.testing.assert_allclose(np.asarray(obs), expected, rtol=1e-6, atol=1e-6)
    stored = buffer.storage_arrays()
    if model.obs_normalizer is not None:
        # The statistics learned from exactly the observations the buffer holds: they were stored raw.
        observations = stored["observations."][: buffer.size(), 0].astype(np.float64)
        mean = observations.sum(0) / (EPSILON + len(observations))
        np.testing.assert_allclose(model.obs_normalizer.rms.mean.numpy(), mean, rtol=1e-6, atol=1e-9)
    else:
        assert set(np.unique(stored["rewards"][: buffer.size()])) <= {0.0, -1.0}  # PointGoalEnv's, raw
    np.random.seed(1)
    raw = buffer.sample(64)
    np.random.seed(1)
    batch = model.sample_replay(64)  # HER: the same relabelled goals, scored raw and then scaled
    scale = float(torch.sqrt(model.reward_normalizer.rms.var + 1e-8))
    torch.testing.assert_close(batch.rewards, (raw.rewards / scale).clamp(-10, 10))


def test_her_observations_cannot_be_normalized() -> None:
    make, _ = CASES["her"]
    with pytest.raises(ConfigurationError, match="vector Box observations"):
        fitted(make(), 50, "observation", env=PointGoalEnv, n_envs=1)


def test_statistics_and_the_buffer_travel_in_files(tmp_path: Path) -> None:
    model = fitted(sac(learning_starts=100, batch_size=32), 300, "observation")
    model.save(tmp_path / "sac.zip")
    buffer_file = model.save_replay_buffer(tmp_path / "buffer")
    loaded = SAC.load(tmp_path / "sac.zip")
    torch.testing.assert_close(loaded.obs_normalizer.rms.mean, model.obs_normalizer.rms.mean)
    torch.testing.assert_close(loaded.obs_normalizer.rms.var, model.obs_normalizer.rms.var)
    obs = np.random.default_rng(0).uniform(-8, 8, size=(16, 3)).astype(np.float32)
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )
    # SB3 code's own train() on a loaded model samples minibatches normalized as during the run
    loaded.load_replay_buffer(buffer_file)
    np.random.seed(2)
    expected = model.sample_replay(32).observations
    np.random.seed(2)
    torch.testing.assert_close(loaded.sample_replay(32).observations, expected)
    assert expected.abs().max() < 5  # normalized: Pendulum's raw angular velocity reaches 8

    # A VecNormalize env would normalize the observations a second time: refused, not trained on.
    env = VecNormalize(DummyVecEnv([lambda: gym.make("Pendulum-v1")]))
    with pytest.raises(ConfigurationError, match="a second"):
        SAC.load(tmp_path / "sac.zip", env=env).learn(10)


def test_resuming_from_a_checkpoint_carries_on_the_statistics(tmp_path: Path) -> None:
    from lightning.pytorch.callbacks import ModelCheckpoint

    checkpoints = {
        "enable_checkpointing": True,
        "callbacks": [ModelCheckpoint(dirpath=tmp_path, save_last=True)],
    }
    first = fitted(sac(learning_starts=100, batch_size=32), 200, True, n_envs=1, **checkpoints)
    resumed = fitted(
        sac(learning_starts=100, batch_size=32), 400, True, n_envs=1, ckpt_path=tmp_path / "last.ckpt"
    )
    assert resumed.num_timesteps == 400
    # one count per acting observation over both runs: the first run's statistics were restored
    assert float(resumed.obs_normalizer.rms.count) == pytest.approx(EPSILON + 400)
    assert float(resumed.reward_normalizer.rms.count) == pytest.approx(EPSILON + 400)
    np.testing.assert_array_equal(
        resumed.replay_buffer.observations[:200], first.replay_buffer.observations[:200]
    )


def test_sac_learns_pendulum_with_normalization() -> None:
    from lit_sb3_core import evaluate_policy

    model = SAC(
        "MlpPolicy", learning_starts=100, learning_rate=1e-3, batch_size=128, seed=0,
        policy_kwargs={"net_arch": [64, 64]},
    )  # fmt: skip
    fitted(model, 5000, True, n_envs=1)
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=0)
    # predict normalizes the raw observations with the statistics; a random policy scores about -1200
    mean_reward, _ = evaluate_policy(model, env, n_eval_episodes=10, warn=False)
    assert mean_reward > -400, mean_reward
