"""Observation/reward normalization: statistics, use in rollouts and predict, and travel with the model."""

import copy
from pathlib import Path

import numpy as np
import pytest
import torch

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.data.normalization import (
    ObservationNormalizer,
    RewardNormalizer,
    RunningMeanStd,
    parse_normalize,
)
from lit_sb3_core.errors import ConfigurationError

SMALL = {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "seed": 0}


def fit(model, steps: int, **dm_kwargs) -> RLTrainer:
    trainer = RLTrainer(max_steps=steps, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    trainer.fit(model, datamodule=RLEnvDataModule(**{"train_env": "Pendulum-v1", **dm_kwargs}))
    return trainer


def test_parse_normalize() -> None:
    assert parse_normalize(False) is None and parse_normalize(None) is None
    both = parse_normalize(True)
    assert both["observation"] and both["reward"] and both["clip_obs"] == 10.0
    assert parse_normalize("observation")["reward"] is False
    assert parse_normalize({"reward": True, "clip_reward": 5.0})["clip_reward"] == 5.0
    with pytest.raises(ValueError, match="Unknown normalize options"):
        parse_normalize({"rewards": True})
    with pytest.raises(ValueError, match="normalize="):
        parse_normalize("everything")


def test_running_mean_std_merges_batches_exactly() -> None:
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 3)) for n in (5, 17, 1, 40)]
    rms = RunningMeanStd((3,), epsilon=0.0)
    for batch in batches:
        rms.update(torch.from_numpy(batch))
    everything = np.concatenate(batches)
    np.testing.assert_allclose(rms.mean.numpy(), everything.mean(0), rtol=1e-10)
    np.testing.assert_allclose(rms.var.numpy(), everything.var(0), rtol=1e-10)
    assert float(rms.count) == len(everything)


def test_host_path_matches_the_torch_path() -> None:
    """normalize() (numpy on the CPU, once per env step) gives forward()'s statistics and outputs."""
    rng = np.random.default_rng(1)
    host, graph = ObservationNormalizer((4,), clip=3.0), ObservationNormalizer((4,), clip=3.0)
    for n in (1, 8, 3, 1, 64):
        batch = torch.from_numpy(rng.normal(5.0, 4.0, size=(n, 4)).astype(np.float32))
        torch.testing.assert_close(host.normalize(batch, update=True), graph(batch, update=True))
    for name in ("mean", "var", "count"):
        torch.testing.assert_close(getattr(host.rms, name), getattr(graph.rms, name), rtol=1e-12, atol=0)
    # A numpy batch merges like a tensor one.
    from_numpy, from_torch = RunningMeanStd((2,)), RunningMeanStd((2,))
    values = rng.normal(size=(10, 2))
    from_numpy.update(values)
    from_torch.update_from_moments(torch.from_numpy(values.mean(0)), torch.from_numpy(values.var(0)), 10)
    torch.testing.assert_close(from_numpy.var, from_torch.var, rtol=1e-12, atol=0)


def test_host_views_follow_copies_moves_and_loaded_state() -> None:
    original = RunningMeanStd((3,))
    original.update(np.ones((2, 3)))
    copied = copy.deepcopy(original)
    copied.update(np.full((5, 3), 7.0))  # the copy's views must point at the copy's own buffers
    assert float(original.count) == pytest.approx(2.0001) and float(copied.count) == pytest.approx(7.0001)
    assert float(original.mean[0]) == pytest.approx(1.0, rel=1e-3) and float(copied.mean[0]) > 4.0
    fresh = RunningMeanStd((3,))
    fresh.host_views()  # cached before the load: load_state_dict writes into the same tensors
    fresh.load_state_dict(copied.state_dict())
    fresh.update(np.zeros((1, 3)))
    assert float(fresh.count) == pytest.approx(8.0001)
    fresh.to(torch.float64)  # same device: still host views of the (possibly new) buffers
    fresh.update(np.zeros((1, 3)))
    assert float(fresh.count) == pytest.approx(9.0001) and fresh.host_views() is not None


def test_observation_normalizer_clips_and_reward_normalizer_scales_by_return_std() -> None:
    normalizer = ObservationNormalizer((2,), clip=1.5)
    normalizer(torch.tensor([[0.0, 10.0], [2.0, 10.0]]), update=True)
    out = normalizer(torch.tensor([[100.0, 10.0]]))
    assert out[0, 0] == 1.5 and abs(float(out[0, 1])) < 0.05  # a constant input normalizes to ~0
    rewards = RewardNormalizer(gamma=0.5, clip=100.0)
    scaled = [rewards(np.array([2.0]), np.array([False])) for _ in range(50)]
    # Discounted returns converge to 4 with little spread late on; the scale is their running std.
    assert np.isfinite(scaled[-1]).all() and abs(scaled[-1][0]) > 2.0


def test_normalize_after_merging_is_normalize_after_an_update_that_is_then_undone() -> None:
    normalizer = ObservationNormalizer((3,))
    normalizer(torch.randn(20, 3) * 4 + 1, update=True)
    before = copy.deepcopy(normalizer.state_dict())
    obs, arriving = torch.randn(2, 3), torch.randn(5, 3) * 3
    result = normalizer.normalize_after_merging(obs, arriving)
    for name, value in normalizer.state_dict().items():
        assert torch.equal(value, before[name]), f"{name} changed"
    normalizer.rms.update(arriving)
    expected = normalizer.normalize(obs)
    assert torch.equal(result, expected) and not torch.equal(
        result, ObservationNormalizer((3,)).normalize(obs)
    )


def test_ppo_trains_on_normalized_data_and_predicts_from_raw_observations(tmp_path: Path) -> None:
    model = PPO(**SMALL)
    fit(model, 256, normalize=True, n_envs=2)
    stats = model.obs_normalizer.rms
    assert float(stats.count) == pytest.approx(256 + 1e-4)
    assert not torch.allclose(stats.mean, torch.zeros(3, dtype=torch.float64))
    # The buffer holds normalized observations and scaled rewards (raw Pendulum rewards reach -16).
    assert model.rollout.observations.abs().max() <= 10.0
    assert np.abs(model.rollout.rewards).max() < 10.0
    raw = np.array([[1.0, 0.0, 0.5]], dtype=np.float32)
    expected = model.policy.predict_actions(model.obs_normalizer(torch.from_numpy(raw)), True)
    np.testing.assert_allclose(
        model.predict(raw, deterministic=True)[0], np.clip(expected.detach().numpy(), -2, 2)
    )
    # Statistics are frozen outside rollouts: predict and evaluation do not move them.
    count = float(stats.count)
    model.predict(np.zeros((5, 3), np.float32))
    assert float(stats.count) == count
    path = tmp_path / "ppo.zip"
    model.save(path)
    loaded = PPO.load(path)
    assert loaded.normalization == model.normalization
    torch.testing.assert_close(loaded.obs_normalizer.rms.var, stats.var)
    obs = np.random.default_rng(1).normal(size=(20, 3)).astype(np.float32)
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )


def test_statistics_travel_in_checkpoints(tmp_path: Path) -> None:
    from lightning.pytorch.callbacks import ModelCheckpoint

    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=128, logger=False, enable_progress_bar=False,
                        callbacks=[ModelCheckpoint(dirpath=tmp_path, save_last=True)])  # fmt: skip
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", normalize="observation"))
    restored = PPO.load_from_checkpoint(tmp_path / "last.ckpt", weights_only=True)
    torch.testing.assert_close(restored.obs_normalizer.rms.mean, model.obs_normalizer.rms.mean)
    assert restored.reward_normalizer is None


def test_unsupported_cases_are_refused() -> None:
    class NoNormalization(PPO):
        supports_normalization = False

    with pytest.raises(ConfigurationError, match="does not support RLEnvDataModule\\(normalize"):
        fit(NoNormalization(**SMALL), 64, normalize=True)
    with pytest.raises(ConfigurationError, match="vector Box observations"):
        fit(PPO(**SMALL), 64, train_env="FrozenLake-v1", normalize="observation")
    model = PPO(**SMALL)
    fit(model, 64, normalize="observation")
    with pytest.raises(ConfigurationError, match="cannot switch"):
        fit(model, 64, normalize="reward")


def test_running_mean_std_merges_moments_like_the_batch_they_summarize() -> None:
    rng = np.random.default_rng(1)
    batches = [rng.normal(-2.0, 3.0, size=(n, 2)) for n in (7, 30)]
    by_batch, by_moments = RunningMeanStd((2,)), RunningMeanStd((2,))
    for batch in batches:
        by_batch.update(torch.from_numpy(batch))
        by_moments.update_from_moments(
            torch.from_numpy(batch.mean(0)), torch.from_numpy(batch.var(0)), len(batch)
        )
    for name in ("mean", "var", "count"):
        torch.testing.assert_close(getattr(by_moments, name), getattr(by_batch, name))
