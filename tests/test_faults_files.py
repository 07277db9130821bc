"""Untrusted and damaged files, beyond tests/test_model_file.py: pickle payloads inside model zips and
checkpoints never run, Stable-Baselines3 zips and decompression bombs are named, and a write that the OS
refuses (a full disk) keeps the previous model file and replay buffer."""

from __future__ import annotations

import io
import json
import os
import pickle
import resource
import signal
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from lit_sb3 import DQN, PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.errors import ModelFileError

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 0}


class Payload:
    """Unpickling this runs ``touch <marker>``: what a malicious file would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "ppo.zip"
    PPO(**SMALL).learn(64, env="CartPole-v1").save(path)
    return path


def _zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def _entries(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def _pickled(marker: Path, via_torch: bool) -> bytes:
    buffer = io.BytesIO()
    if via_torch:
        torch.save({"weights": Payload(marker)}, buffer)
    else:
        pickle.dump(Payload(marker), buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("entry", ["model.safetensors", "optimizers.safetensors", "metadata.json"])
@pytest.mark.parametrize("via_torch", [True, False], ids=["torch.save", "pickle"])
def test_a_pickle_payload_in_place_of_an_entry_never_runs(
    saved: Path, tmp_path: Path, entry: str, via_torch: bool
) -> None:
    marker = tmp_path / "pwned"
    crafted = _zip(tmp_path / "crafted.zip", {**_entries(saved), entry: _pickled(marker, via_torch)})
    with pytest.raises(ModelFileError, match=r"truncated or corrupt|not a lit-sb3 model file"):
        PPO.load(crafted)
    assert not marker.exists()


def test_extra_pickle_entries_are_never_read(saved: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    extras = {"data.pkl": _pickled(marker, False), "policy.pth": _pickled(marker, True)}
    crafted = _zip(tmp_path / "extras.zip", {**_entries(saved), **extras})
    assert PPO.load(crafted).num_timesteps == 64
    assert not marker.exists()


def test_a_stable_baselines3_zip_is_named_and_never_unpickled(tmp_path: Path) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    real = tmp_path / "sb3_ppo.zip"
    sb3.PPO("MlpPolicy", "CartPole-v1", device="cpu").save(real)
    marker = tmp_path / "pwned"
    crafted = _zip(tmp_path / "sb3_crafted.zip", {**_entries(real), "policy.pth": _pickled(marker, True)})
    for path in (real, crafted):
        with pytest.raises(
            ModelFileError, match=r"is a Stable-Baselines3 model file.*never unpickles.*load_state_dict"
        ):
            PPO.load(path)
    assert not marker.exists()


def test_a_metadata_decompression_bomb_is_refused_unread(saved: Path, tmp_path: Path) -> None:
    # 64 MiB of JSON whitespace deflates to ~64 KiB; the declared size is refused before anything is read.
    bomb = b'{"library": "lit-sb3"' + b" " * (64 * 2**20) + b"}"
    crafted = _zip(tmp_path / "bomb.zip", {**_entries(saved), "metadata.json": bomb})
    assert crafted.stat().st_size < 2**20
    with pytest.raises(
        ModelFileError, match=r"metadata.json would unpack to 67108886 bytes \(at most 16777216"
    ):
        PPO.load(crafted)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ckpt")
    trainer = RLTrainer(max_steps=64, default_root_dir=root, enable_progress_bar=False)
    trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    (path,) = root.rglob("*.ckpt")
    return path


@pytest.mark.parametrize("weights_only", [True, None], ids=["weights_only=True", "default"])
def test_a_checkpoint_carrying_a_pickle_payload_never_runs_it(
    checkpoint: Path, tmp_path: Path, weights_only: bool | None
) -> None:
    marker = tmp_path / "pwned"
    state = torch.load(checkpoint, weights_only=True)
    state["lit_sb3"]["payload"] = Payload(marker)
    crafted = tmp_path / "crafted.ckpt"
    torch.save(state, crafted)
    message = (
        r"Refused to load the checkpoint .*crafted.ckpt.*could run code.*posix.system.*weights_only=False"
    )
    with pytest.raises(ModelFileError, match=message):
        PPO.load_from_checkpoint(crafted, weights_only=weights_only)
    trainer = RLTrainer(max_steps=128, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    with pytest.raises(ModelFileError, match=message):
        trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"), ckpt_path=crafted)
    assert not marker.exists()
    # The genuine checkpoint loads the safe way.
    assert PPO.load_from_checkpoint(checkpoint, weights_only=True).num_timesteps == 64


def test_a_checkpoint_of_another_algorithm_or_not_of_lit_sb3(checkpoint: Path, tmp_path: Path) -> None:
    from lit_sb3 import A2C

    with pytest.raises(ModelFileError, match=r"holds a 'ppo' model, not 'a2c'.*get_algo_class"):
        A2C.load_from_checkpoint(checkpoint, weights_only=True)
    state = torch.load(checkpoint, weights_only=True)
    del state["lit_sb3"]
    plain = tmp_path / "plain.ckpt"
    torch.save(state, plain)
    with pytest.raises(ModelFileError, match="not written by a lit-sb3 algorithm"):
        PPO.load_from_checkpoint(plain, weights_only=True)


def _disk_full(limit: int):
    """Writes past ``limit`` bytes fail as on a full disk (EFBIG; SIGXFSZ ignored), until restored."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))

    def restore() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)

    return restore


def test_a_full_disk_keeps_the_previous_model_file_and_replay_buffer(tmp_path: Path) -> None:
    model = DQN(learning_starts=50, buffer_size=2_000, train_freq=4, seed=0).learn(300, env="CartPole-v1")
    model_path = model.save(tmp_path / "dqn.zip") or tmp_path / "dqn.zip"
    buffer_path = model.save_replay_buffer(tmp_path / "buffer")
    before = {path: path.read_bytes() for path in (model_path, buffer_path)}
    model.learn(100, reset_num_timesteps=False)  # new contents, so a partial write would show

    restore = _disk_full(4096)
    try:
        with pytest.raises(OSError, match="File too large") as model_error:
            model.save(model_path)
        with pytest.raises(OSError, match="File too large") as buffer_error:
            model.save_replay_buffer(buffer_path)
    finally:
        restore()
    assert model_error.value.errno == buffer_error.value.errno == 27  # EFBIG, a real failed write
    for path, data in before.items():
        assert path.read_bytes() == data, f"{path.name} was damaged by the failed save"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["buffer.npz", "dqn.zip"], (
        "temporary files were left"
    )
    assert DQN.load(model_path).num_timesteps == 300
    reloaded = DQN.load(model_path)
    reloaded.load_replay_buffer(buffer_path)
    assert reloaded.replay_buffer is not None and reloaded.replay_buffer.size() == 300
    assert np.isfinite(reloaded.replay_buffer.rewards[:300]).all()


def test_a_truncated_replay_buffer_is_refused_clearly(tmp_path: Path) -> None:
    model = DQN(learning_starts=50, buffer_size=1_000, seed=0).learn(100, env="CartPole-v1")
    path = model.save_replay_buffer(tmp_path / "buffer")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(ValueError, match="is not a lit-sb3 replay buffer file"):
        model.load_replay_buffer(path)
    (tmp_path / "json.npz").write_text(json.dumps({"not": "a buffer"}))
    with pytest.raises(ValueError, match="is not a lit-sb3 replay buffer file"):
        model.load_replay_buffer(tmp_path / "json.npz")
