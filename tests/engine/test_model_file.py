"""Model files: round trips, refusals with a clear message, atomic writes, no unpickling."""

import json
import re
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import lit_sb3
from lit_sb3 import PPO
from lit_sb3_core.engine import model_file as _model_file
from lit_sb3_core.errors import ModelFileError

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[PPO, Path]:
    model = PPO(seed=0, **SMALL).learn(64, env="CartPole-v1")
    path = tmp_path_factory.mktemp("models") / "ppo.zip"
    model.save(path)
    return model, path


def test_round_trip_keeps_parameters_predictions_counters_and_optimizer(saved, tmp_path: Path) -> None:
    model, path = saved
    for loaded in (PPO.load(path), lit_sb3.load(path), PPO.load(str(path)[:-4])):
        for key, value in model.policy.state_dict().items():
            assert torch.equal(value, loaded.policy.state_dict()[key])
        obs = np.random.default_rng(0).normal(size=(32, 4)).astype(np.float32)
        np.testing.assert_array_equal(
            model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
        )
        assert loaded.num_timesteps == model.num_timesteps == 64
        assert dict(loaded.hparams) == dict(model.hparams)
    loaded = PPO.load(path, env="CartPole-v1")
    loaded.learn(64, reset_num_timesteps=False)
    assert loaded.num_timesteps == 128
    state = loaded.trainer.optimizers[0].state_dict()["state"]
    assert all(int(s["step"]) > 2 for s in state.values()), "the optimizer state was not restored"


def test_contents_are_json_and_safetensors(saved) -> None:
    _, path = saved
    with zipfile.ZipFile(path) as archive:
        # A trained model keeps its envs' episodes in flight, for load(env, force_reset=False).
        assert set(archive.namelist()) == {
            "metadata.json",
            "model.safetensors",
            "optimizers.safetensors",
            "episodes.safetensors",
        }
        metadata = json.loads(archive.read("metadata.json"))
    assert metadata["algo"] == "ppo" and metadata["format_version"] == 1
    assert metadata["hyperparameters"]["n_steps"] == 32
    assert metadata["action_space"] == {"type": "Discrete", "n": 2, "start": 0}


def _rewrite(path: Path, target: Path, edit) -> None:
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(target, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "metadata.json":
                data = json.dumps(edit(json.loads(data))).encode()
            dst.writestr(name, data)


def test_tampered_episodes_are_refused_before_use(saved, tmp_path: Path) -> None:
    from safetensors.torch import save as save_safetensors

    _, path = saved
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name == "episodes.safetensors":  # CartPole observations are 4 numbers, not 3
                data = save_safetensors(
                    {"last_obs": torch.zeros(1, 3), "episode_starts": torch.zeros(1, dtype=torch.bool)}
                )
            dst.writestr(name, data)
    with pytest.raises(ModelFileError, match=r"episodes\.last_obs.*shape \(1, 3\), expected \(1, 4\)"):
        PPO.load(bad, env="CartPole-v1", force_reset=False)
    assert PPO.load(bad, env="CartPole-v1")._last_obs is None  # force_reset=True never reads them


def test_refusals_say_what_is_wrong(saved, tmp_path: Path) -> None:
    _, path = saved
    with pytest.raises(FileNotFoundError, match=re.escape("no/such/model.zip")):
        PPO.load("no/such/model.zip")
    empty = tmp_path / "empty.zip"
    empty.write_bytes(b"")
    with pytest.raises(ModelFileError, match="empty"):
        PPO.load(empty)
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ModelFileError, match="truncated or corrupt"):
        PPO.load(truncated)
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a zip at all" * 10)
    with pytest.raises(ModelFileError, match="wasn't a zip-file"):
        PPO.load(garbage)
    newer = tmp_path / "newer.zip"
    _rewrite(path, newer, lambda m: {**m, "format_version": 99})
    with pytest.raises(ModelFileError, match=r"format 99.*Upgrade"):
        PPO.load(newer)
    other_algo = tmp_path / "sac.zip"
    _rewrite(path, other_algo, lambda m: {**m, "algo": "sac"})
    with pytest.raises(ModelFileError, match="holds a 'sac' model, not 'ppo'"):
        PPO.load(other_algo)
    with pytest.raises(ModelFileError, match="Box\\(shape=\\(3,\\)"):
        PPO.load(path, env="Pendulum-v1")


def test_loading_never_unpickles(saved, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle

    def refuse(*args, **kwargs):
        raise AssertionError("pickle was used")

    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    monkeypatch.setattr(torch, "load", refuse)
    _, path = saved
    assert PPO.load(path).num_timesteps == 64


def test_a_failed_save_keeps_the_previous_file(
    saved, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, _ = saved
    target = tmp_path / "keep.zip"
    model.save(target)
    before = target.read_bytes()

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_model_file, "save_safetensors", disk_full)
    with pytest.raises(OSError, match="No space left"):
        model.save(target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.zip"], "a temporary file was left behind"


def test_non_json_hyperparameters_cannot_be_saved(tmp_path: Path) -> None:
    model = PPO(env="CartPole-v1", learning_rate=lambda progress: 1e-3 * progress, **SMALL)
    with pytest.raises(ModelFileError, match="plain JSON"):
        model.save(tmp_path / "x.zip")


def test_a_crafted_file_naming_a_function_never_calls_it(saved, tmp_path: Path) -> None:
    _, path = saved
    marker = tmp_path / "pwned"
    for field, value in [
        ("policy", "os:system"),
        ("policy", "builtins:exec"),
        ("policy", "subprocess:Popen"),
    ]:
        crafted = tmp_path / f"crafted_{value.replace(':', '_')}.zip"
        _rewrite(
            path,
            crafted,
            lambda m, field=field, value=value: {
                **m,
                "hyperparameters": {**m["hyperparameters"], field: value},
            },
        )
        with pytest.raises(ValueError, match=re.escape("not a subclass of torch.nn")):
            PPO.load(crafted)
    kwargs = {
        "features_extractor_class": "os:system",
        "features_extractor_kwargs": {"command": f"touch {marker}"},
    }
    crafted = tmp_path / "crafted_kwargs.zip"
    _rewrite(
        path, crafted, lambda m: {**m, "hyperparameters": {**m["hyperparameters"], "policy_kwargs": kwargs}}
    )
    with pytest.raises(ValueError, match=r"features_extractor_class=.os:system. is not allowed"):
        PPO.load(crafted)
    assert not marker.exists()
