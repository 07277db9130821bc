"""Model files: round trips, refusals with a clear message, atomic writes, no unpickling."""

import json
import re
import warnings
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


def test_lambda_schedules_survive_training_and_save_as_numbers(tmp_path: Path) -> None:
    """Lightning drops unpicklable hyperparameters when training starts; a lambda schedule must still be
    in the file, as values (files hold no code), and load back as a schedule with a warning that says how
    to get the function itself."""
    model = PPO(
        env="CartPole-v1",
        learning_rate=lambda progress: 1e-3 * progress,
        clip_range=lambda progress: 0.1 + 0.2 * progress,
        **SMALL,
    )
    model.learn(64)
    path = tmp_path / "lambdas.zip"
    model.save(path)
    with zipfile.ZipFile(path) as archive:
        stored = json.loads(archive.read("metadata.json"))["hyperparameters"]
    assert (
        stored["learning_rate"][":schedule:"] == "sampled" and len(stored["learning_rate"]["values"]) == 1001
    )
    with pytest.warns(UserWarning, match=r"clip_range was a Python function.*custom_objects") as record:
        loaded = PPO.load(path)
    assert sum("was a Python function" in str(w.message) for w in record) == 2
    for progress in (1.0, 0.6173, 0.25, 0.0):
        assert loaded.lr_schedule(progress) == pytest.approx(1e-3 * progress, abs=1e-12)
        assert loaded.clip_range(progress) == pytest.approx(0.1 + 0.2 * progress)
        assert type(loaded.lr_schedule(progress)) is float
    loaded.save(tmp_path / "again.zip")  # a loaded sampled schedule saves as the same numbers
    with zipfile.ZipFile(tmp_path / "again.zip") as archive:
        assert (
            json.loads(archive.read("metadata.json"))["hyperparameters"]["clip_range"] == stored["clip_range"]
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        exact = PPO.load(path, custom_objects={"learning_rate": lambda p: 2e-3 * p, "clip_range": 0.3})
    assert exact.lr_schedule(0.5) == pytest.approx(1e-3) and exact.clip_range(0.5) == 0.3


def test_damaged_saved_schedules_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "a.zip"
    PPO(env="CartPole-v1", learning_rate=lambda progress: 1e-3 * progress, **SMALL).save(path)

    def damaged(meta: dict, schedule: dict) -> dict:
        meta["hyperparameters"]["learning_rate"] = schedule
        return meta

    for damage in (
        {":schedule:": "sampled", "values": [-1.0] * 1001},
        {":schedule:": "sampled", "values": [1.0]},
        {":schedule:": "exec", "code": "print(1)"},
    ):
        crafted = tmp_path / "crafted.zip"
        _rewrite(path, crafted, lambda meta, d=damage: damaged(meta, d))
        with pytest.raises(
            ModelFileError, match=r"hyperparameters\.learning_rate.*not a well-formed saved schedule"
        ):
            PPO.load(crafted)


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
