"""Fault catalogue, Lightning checkpoints: every way of loading one refuses an unsafe, damaged or tampered
checkpoint with the same error and message, remote checkpoints load as safely as local ones, a full disk or
a kill -9 during a save never destroys the previous checkpoint, and a finished run resumed trains nothing.

Real files, real servers (a local http.server), a real tmpfs where the machine allows mounting one, real
processes and signals."""

from __future__ import annotations

import contextlib
import errno
import functools
import http.server
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from _kill_mid_save import kill_mid_save
from lightning.fabric.plugins.io.torch_io import TorchCheckpointIO

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.cli.main import main
from lit_sb3_core.engine import checkpoint_io
from lit_sb3_core.engine.checkpoint_io import AtomicCheckpointIO, read_checkpoint
from lit_sb3_core.errors import ModelFileError

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 0}


class Payload:
    """Unpickling this runs ``touch <marker>``: what a malicious checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real checkpoint of a 64-step PPO run (two iterations)."""
    root = tmp_path_factory.mktemp("run")
    trainer = RLTrainer(max_steps=64, default_root_dir=root, enable_progress_bar=False)
    trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    (path,) = root.rglob("*.ckpt")
    return path


def _trainer() -> RLTrainer:
    return RLTrainer(max_steps=128, logger=False, enable_checkpointing=False, enable_progress_bar=False)


def _datamodule() -> RLEnvDataModule:
    return RLEnvDataModule(train_env="CartPole-v1", val_env="CartPole-v1", test_env="CartPole-v1")


# Every way a checkpoint is loaded; each returns what it loaded, or raises.
PATHS: dict[str, Callable[[Path | str], Any]] = {
    "load_from_checkpoint": lambda path: PPO.load_from_checkpoint(path),
    "fit(ckpt_path)": lambda path: _trainer().fit(PPO(**SMALL), datamodule=_datamodule(), ckpt_path=path),
    "validate(ckpt_path)": lambda path: _trainer().validate(
        PPO(**SMALL, env="CartPole-v1"),
        datamodule=_datamodule(),
        ckpt_path=path,
        n_eval_episodes=1,
        verbose=False,
    ),
    "test(ckpt_path)": lambda path: _trainer().test(
        PPO(**SMALL, env="CartPole-v1"),
        datamodule=_datamodule(),
        ckpt_path=path,
        n_eval_episodes=1,
        verbose=False,
    ),
    "predict(ckpt_path)": lambda path: _trainer().predict(
        PPO(**SMALL, env="CartPole-v1"), observation=[0.0, 0.0, 0.0, 0.0], ckpt_path=path
    ),
}
CLI_PATHS = ("lit-sb3 test --ckpt_path", "lit-sb3 validate --ckpt_path")


def _refusal_everywhere(path: Path, capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The message each load path gives for ``path`` (all must refuse with ModelFileError)."""
    messages = set()
    for name, load in PATHS.items():
        with pytest.raises(ModelFileError) as info:
            load(path)
        messages.add(str(info.value))
        assert info.value.path == str(path), name
    for name in CLI_PATHS:
        command = name.split()[1]
        assert (
            main([command, "--ckpt_path", str(path), "--env", "CartPole-v1", "--trainer.logger", "false"])
            == 2
        )
        err = capsys.readouterr().err
        assert err.startswith(f"lit-sb3 {command}: error: "), err
        assert "Traceback" not in err
        messages.add(err.strip().partition("error: ")[2])
    return messages


def test_an_unsafe_checkpoint_is_refused_the_same_way_on_every_path(
    checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    state = torch.load(checkpoint, weights_only=True)
    state["lit_sb3"]["payload"] = Payload(marker)
    crafted = tmp_path / "crafted.ckpt"
    torch.save(state, crafted)
    (message,) = _refusal_everywhere(crafted, capsys)  # one message, whichever way it is loaded
    assert "refused to load the checkpoint" in message and "could run code" in message
    assert "posix.system" in message and "weights_only=False" in message
    assert not marker.exists()
    assert PPO.load_from_checkpoint(checkpoint).num_timesteps == 64  # nothing lost: the real one still loads


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"this is no checkpoint at all " * 20, "is not a checkpoint: it is neither a torch checkpoint"),
        (b"", "is empty (0 bytes)"),
        (None, "is truncated or corrupt"),  # the real checkpoint cut in half
    ],
    ids=["garbage", "empty", "truncated"],
)
def test_a_broken_checkpoint_is_named_for_what_it_is_on_every_path(
    checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, said: str
) -> None:
    broken = tmp_path / "broken.ckpt"
    data = checkpoint.read_bytes()
    broken.write_bytes(content if content is not None else data[: len(data) // 2])
    (message,) = _refusal_everywhere(broken, capsys)
    assert said in message
    assert "pickled" not in message  # garbage is not called "pickled objects that could run code"


def _tampered(checkpoint: Path, tmp_path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    state = torch.load(checkpoint, weights_only=True)
    change(state)
    path = tmp_path / "tampered.ckpt"
    torch.save(state, path)
    return path


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(state: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = state
        for key in parents:
            target = target[key]
        target[last] = value

    return change


def _nan_weights(state: dict[str, Any]) -> None:
    for key, tensor in state["state_dict"].items():
        if tensor.is_floating_point():
            state["state_dict"][key] = torch.full_like(tensor, float("nan"))


TAMPERED = {
    "num_timesteps NaN": (
        _set("lit_sb3.num_timesteps", float("nan")),
        "lit_sb3.num_timesteps must be a non-negative",
    ),
    "num_timesteps -5": (_set("lit_sb3.num_timesteps", -5), "lit_sb3.num_timesteps must be a non-negative"),
    "iterations missing": (lambda s: s["lit_sb3"].pop("iterations"), "has no lit_sb3.iterations"),
    "observation_space 5": (
        _set("lit_sb3.observation_space", 5),
        "lit_sb3.observation_space is not a valid space",
    ),
    "Box [1e6, 1e6]": (
        _set(
            "lit_sb3.observation_space",
            {"type": "Box", "low": 0, "high": 1, "shape": [10**6, 10**6], "dtype": "float32"},
        ),
        "more than the 16777216 elements",
    ),
    "Discrete(1e12)": (
        _set("lit_sb3.action_space", {"type": "Discrete", "n": 10**12}),
        "action_space.n must be",
    ),
    "normalization garbage": (_set("lit_sb3.normalization", "garbage"), "lit_sb3.normalization must be null"),
    "lit_sb3 not a dict": (_set("lit_sb3", "x"), "lit_sb3 must be a dict"),
    "episode_returns garbage": (
        _set("lit_sb3.episode_returns", "x"),
        "lit_sb3.episode_returns must be a list",
    ),
    "hyper_parameters []": (_set("hyper_parameters", []), "hyper_parameters must map argument names"),
    "NaN weights": (_nan_weights, "holds NaN or infinity"),
    "state_dict not a dict": (_set("state_dict", [1, 2]), "state_dict must map names to tensors"),
}


@pytest.mark.parametrize("case", list(TAMPERED))
@pytest.mark.parametrize("path", ["load_from_checkpoint", "fit(ckpt_path)"])
def test_a_tampered_field_is_named_with_the_file(
    checkpoint: Path, tmp_path: Path, case: str, path: str
) -> None:
    change, said = TAMPERED[case]
    tampered = _tampered(checkpoint, tmp_path, change)
    with pytest.raises(ModelFileError, match=rf"^'{tampered}': .*") as info:
        PATHS[path](tampered)
    assert said in str(info.value)


@pytest.mark.parametrize("value", ["tempfile:mkdtemp", "os:abort", "builtins:input", "this:x"])
def test_a_named_function_in_the_hyperparameters_never_runs(
    checkpoint: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    value: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import tempfile

    private = tmp_path / "tempdir"  # where tempfile.mkdtemp would create its folder, were it called
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    tampered = _tampered(
        checkpoint, tmp_path, _set("hyper_parameters.policy_kwargs", {"activation_fn": value})
    )
    this_imported = "this" in sys.modules
    with pytest.raises(
        ModelFileError, match=r"hyper_parameters.policy_kwargs.activation_fn=.* is not allowed"
    ) as info:
        PPO.load_from_checkpoint(tampered)
    assert (
        main(["test", "--ckpt_path", str(tampered), "--env", "CartPole-v1", "--trainer.logger", "false"]) == 2
    )
    assert str(info.value) in capsys.readouterr().err  # the command line says the same
    assert list(private.iterdir()) == []  # mkdtemp was not called
    assert ("this" in sys.modules) == this_imported  # the named module was not imported


def test_a_resume_into_a_model_of_other_spaces_names_both(checkpoint: Path) -> None:
    model = PPO(**SMALL, env="Acrobot-v1")
    with pytest.raises(ModelFileError) as info:
        _trainer().fit(model, datamodule=RLEnvDataModule(train_env="Acrobot-v1"), ckpt_path=checkpoint)
    message = str(info.value)
    assert message.startswith(f"'{checkpoint}': ")
    assert "the checkpoint holds a model for observations Box(shape=(4,)" in message
    assert "the model given to fit was built for observations Box(shape=(6,)" in message


def test_resuming_a_finished_run_trains_nothing(checkpoint: Path) -> None:
    model = PPO(**SMALL)
    trainer = RLTrainer(max_steps=64, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1"), ckpt_path=checkpoint)
    assert (model.num_timesteps, model.iterations) == (64, 2)  # not one more iteration (96, 3)
    # A larger budget continues from the checkpoint's counters.
    trainer = RLTrainer(max_steps=96, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(
        model := PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"), ckpt_path=checkpoint
    )
    assert (model.num_timesteps, model.iterations) == (96, 3)


# remote checkpoints ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _serving(folder: Path) -> Iterator[str]:
    """A real HTTP server on localhost serving ``folder``; yields its base URL."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_remote_checkpoint_loads_with_weights_only_and_an_unsafe_one_is_refused(
    checkpoint: Path, tmp_path: Path
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    shutil.copy(checkpoint, served / "good.ckpt")
    marker = tmp_path / "pwned"
    state = torch.load(checkpoint, weights_only=True)
    state["lit_sb3"]["payload"] = Payload(marker)
    torch.save(state, served / "unsafe.ckpt")
    (served / "garbage.ckpt").write_bytes(b"<html>not found</html>" * 10)
    with _serving(served) as url:
        assert PPO.load_from_checkpoint(f"{url}/good.ckpt").num_timesteps == 64
        for load in ("load_from_checkpoint", "fit(ckpt_path)", "test(ckpt_path)"):
            with pytest.raises(ModelFileError, match=r"refused to load the checkpoint.*could run code"):
                PATHS[load](f"{url}/unsafe.ckpt")
        with pytest.raises(ModelFileError, match="is not a checkpoint"):
            PPO.load_from_checkpoint(f"{url}/garbage.ckpt")
        with pytest.raises(FileNotFoundError, match="No checkpoint file at"):
            PPO.load_from_checkpoint(f"{url}/missing.ckpt")
        model = PPO(**SMALL)
        trainer = RLTrainer(max_steps=96, logger=False, enable_checkpointing=False, enable_progress_bar=False)
        trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1"), ckpt_path=f"{url}/good.ckpt")
        assert (model.num_timesteps, model.iterations) == (96, 3)  # resumed from the remote counters
    assert not marker.exists()


def test_a_protocol_without_its_filesystem_package_is_explained() -> None:
    pytest.importorskip("fsspec")
    with pytest.raises((ModelFileError, FileNotFoundError), match="s3"):
        read_checkpoint("s3://no-such-bucket-lit-sb3/run.ckpt")


# atomic saves ----------------------------------------------------------------------------------------


def _model_trainer(tmp_path: Path, checkpoint_io: Any = None) -> tuple[PPO, RLTrainer]:
    model = PPO(**SMALL)
    trainer = RLTrainer(
        max_steps=64,
        default_root_dir=tmp_path,
        logger=False,
        enable_progress_bar=False,
        plugins=[checkpoint_io] if checkpoint_io is not None else None,
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    return model, trainer


def test_rl_trainer_writes_checkpoints_atomically_by_default(tmp_path: Path) -> None:
    _, trainer = _model_trainer(tmp_path)
    assert isinstance(trainer.strategy.checkpoint_io, AtomicCheckpointIO)
    _, own = _model_trainer(tmp_path / "own", checkpoint_io=TorchCheckpointIO())
    assert type(own.strategy.checkpoint_io) is TorchCheckpointIO  # a CheckpointIO the user chose is kept


def test_a_failed_write_keeps_the_previous_checkpoint_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, trainer = _model_trainer(tmp_path)
    target = tmp_path / "saves" / "last.ckpt"
    trainer.save_checkpoint(target)
    before = target.read_bytes()

    def disk_full(obj: Any, handle: Any, *args: Any, **kwargs: Any) -> None:
        handle.write(b"PK\x03\x04 half of a checkpoint")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(checkpoint_io.torch, "save", disk_full)  # the write layer fails, as on a full disk
    with pytest.raises(OSError, match="No space left on device"):
        trainer.save_checkpoint(target)
    monkeypatch.undo()
    assert target.read_bytes() == before
    assert sorted(os.listdir(target.parent)) == ["last.ckpt"], "a temporary file was left behind"
    assert read_checkpoint(target)["lit_sb3"]["num_timesteps"] == 64


@contextlib.contextmanager
def _tiny_tmpfs(folder: Path, size: str) -> Iterator[Path]:
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a tmpfs here ({mounted.stderr.decode().strip()}); the injected failure covers it"
        )
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def _fill(folder: Path, leave: int) -> None:
    """Fill the filesystem of ``folder`` until ``leave`` bytes or fewer are free."""
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    with (folder / "filler").open("wb") as handle:
        with contextlib.suppress(OSError):
            handle.write(b"\0" * max(0, free - leave))


def test_a_full_disk_keeps_the_previous_checkpoint_where_lightning_alone_destroys_it(tmp_path: Path) -> None:
    model, trainer = _model_trainer(tmp_path / "run")
    with _tiny_tmpfs(tmp_path / "disk", "2m") as disk:
        target = disk / "last.ckpt"
        trainer.save_checkpoint(target)
        size = target.stat().st_size
        before = target.read_bytes()
        _fill(disk, leave=size // 2)  # room for half a checkpoint: the next save runs out of space
        model.num_timesteps = 999  # what the failed save would have written
        with pytest.raises(OSError) as info:
            trainer.save_checkpoint(target)
        assert info.value.errno == errno.ENOSPC  # a real full disk
        assert target.read_bytes() == before, "the previous checkpoint was damaged"
        assert sorted(os.listdir(disk)) == ["filler", "last.ckpt"], "a temporary file was left behind"
        assert read_checkpoint(target)["lit_sb3"]["num_timesteps"] == 64

        # A full disk with Lightning's own CheckpointIO truncates the previous file: what this guards against.
        plain = TorchCheckpointIO()
        (disk / "filler").unlink()
        state = torch.load(target, weights_only=True)
        plain.save_checkpoint(state, disk / "plain.ckpt")
        _fill(disk, leave=0)
        state["lit_sb3"]["grown"] = torch.zeros(2**16)  # the next checkpoint is larger (a growing buffer)
        with pytest.raises(OSError):
            plain.save_checkpoint(state, disk / "plain.ckpt")
        with pytest.raises(ModelFileError, match=r"truncated or corrupt|is empty"):
            read_checkpoint(disk / "plain.ckpt")


KILLED_SAVER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path

    kind, folder, files = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
    if files == "named":  # as on a filesystem or OS without unnamed files (NFS, macOS, Windows)
        del os.O_TMPFILE
    import torch
    from lit_sb3_core.engine.checkpoint_io import AtomicCheckpointIO

    torch.set_num_threads(1)
    if kind == "checkpoint":
        big = {"state_dict": {"w": torch.randn(4_000_000)}, "lit_sb3": None}  # 16 MB: saves take a while
        io = AtomicCheckpointIO()
        save = lambda: io.save_checkpoint(big, folder / "last.ckpt")
    else:
        from lit_sb3 import PPO
        model = PPO(env="CartPole-v1", policy_kwargs={"net_arch": [1500, 1500]}, seed=0)  # a 9 MB model file
        save = lambda: model.save(folder / "model.zip")
    print("ready", flush=True)
    while True:  # the parent kills this process in the middle of one of these saves
        save()
    """
)


def _kill_during_save(folder: Path, kind: str, files: str) -> None:
    """Start a process saving in a loop and SIGKILL it while a file is being written."""
    name = "last.ckpt" if kind == "checkpoint" else "model.zip"
    kill_mid_save(folder, KILLED_SAVER, kind, str(folder), files, after=name)


def _check_last_complete_save(folder: Path, kind: str) -> str:
    name = "last.ckpt" if kind == "checkpoint" else "model.zip"
    if kind == "checkpoint":
        assert torch.load(folder / name, weights_only=True)["state_dict"]["w"].shape == (4_000_000,)
    else:
        assert PPO.load(folder / name).policy.mlp_extractor.policy_net[0].out_features == 1500
    return name


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="unnamed files (O_TMPFILE) are Linux's")
@pytest.mark.parametrize("kind", ["checkpoint", "model file"])
def test_a_save_killed_with_sigkill_loses_nothing_and_leaves_no_temporary(tmp_path: Path, kind: str) -> None:
    for _ in range(3):
        _kill_during_save(tmp_path, kind, "unnamed")
        # Each kill landed while a file was being written (kill_mid_save waits for one); it had no name yet,
        # so the kernel removed it with the process: nothing but the last complete save is left.
        name = _check_last_complete_save(tmp_path, kind)
        assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_a_save_killed_with_sigkill_without_unnamed_files_leaves_a_temporary_the_next_save_removes(
    tmp_path: Path,
) -> None:
    for _ in range(2):
        _kill_during_save(tmp_path, "checkpoint", "named")
    temporaries = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert temporaries, "the kills left no temporary: the test did not kill a save in progress"
    name = _check_last_complete_save(tmp_path, "checkpoint")
    # The next successful save into the folder removes what the killed ones left.
    AtomicCheckpointIO().save_checkpoint({"state_dict": {}}, tmp_path / "next.ckpt")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "next.ckpt"])
