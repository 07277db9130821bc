"""Fault catalogue, the load and save paths added after the first catalogue (issue 26): hyperparameter
files, SB3-shaped saves, export, SB3's vector envs. Each case ends in a clear LitSb3Error naming the file,
field or env and the fix; nothing runs code from a file, a failed write keeps the previous file.

Real files, real training, real processes."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer
from lit_sb3_core.errors import ModelFileError

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 0}


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real checkpoint of a 64-step PPO run."""
    root = tmp_path_factory.mktemp("run")
    trainer = RLTrainer(max_steps=64, default_root_dir=root, enable_progress_bar=False)
    trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    (path,) = root.rglob("*.ckpt")
    return path


# --- 1. No code from YAML -------------------------------------------------------------------------------


@pytest.fixture
def recording_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An imported module whose ``record`` leaves a marker file when called: the payload's target."""
    marker = tmp_path / "called"
    (tmp_path / "issue26_payload.py").write_text(
        textwrap.dedent(
            f"""
            def record(progress_remaining=1.0):
                open({str(marker)!r}, "w").write("called")
                return 3e-4
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("issue26_payload")
    yield marker
    sys.modules.pop("issue26_payload", None)


def test_a_python_name_tag_in_an_hparams_file_is_refused_and_never_called(
    checkpoint: Path, tmp_path: Path, recording_module: Path
) -> None:
    from lightning.pytorch.core.saving import load_hparams_from_yaml

    hparams = tmp_path / "hparams.yaml"
    hparams.write_text("learning_rate: !!python/name:issue26_payload.record\nn_steps: 32\n")
    # The payload is real: Lightning's own reader turns it into the module's function.
    assert callable(load_hparams_from_yaml(str(hparams))["learning_rate"])
    with pytest.raises(ModelFileError, match=r"hparams.yaml'.*build a Python object.*safe loader.*lin_3e-4"):
        PPO.load_from_checkpoint(checkpoint, hparams_file=hparams)
    assert not recording_module.exists()


def test_an_hparams_file_with_a_plain_schedule_string_still_loads(checkpoint: Path, tmp_path: Path) -> None:
    hparams = tmp_path / "hparams.yaml"
    hparams.write_text("learning_rate: lin_3e-4\nn_steps: 32\nbatch_size: 32\nn_epochs: 1\n")
    model = PPO.load_from_checkpoint(checkpoint, hparams_file=hparams)
    assert model.hparams["learning_rate"] == "lin_3e-4"
    model.learn(64, env="CartPole-v1")  # the schedule string works
    assert model.num_timesteps >= 64


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("learning_rate: [1, 2\n", r"is not valid YAML"),
        ("- 1\n- 2\n", r"must map argument names to values"),
        ("policy_kwargs: " + "[" * 5000 + "]" * 5000 + "\n", r"nested"),
    ],
    ids=["broken", "a list", "deeply nested"],
)
def test_a_broken_hparams_file_is_named(checkpoint: Path, tmp_path: Path, text: str, message: str) -> None:
    hparams = tmp_path / "hparams.yml"
    hparams.write_text(text)
    with pytest.raises(ModelFileError, match=r"hparams.yml'.*" + message):
        PPO.load_from_checkpoint(checkpoint, hparams_file=hparams)


def test_a_function_in_a_trusted_checkpoints_hyperparameters_is_refused(
    checkpoint: Path, tmp_path: Path, recording_module: Path
) -> None:
    import issue26_payload  # type: ignore[import-not-found]
    import torch

    data = torch.load(checkpoint, weights_only=False)
    data["hyper_parameters"]["learning_rate"] = issue26_payload.record
    tampered = tmp_path / "fn.ckpt"
    torch.save(data, tampered)
    with pytest.raises(
        ModelFileError, match=r"fn.ckpt'.*hyper_parameters.learning_rate is a function.*not a plain value"
    ):
        PPO.load_from_checkpoint(tampered, weights_only=False)
    assert not recording_module.exists()


# --- 2. Every save atomic; export never writes over its input --------------------------------------------


def _vec_normalize(steps: int = 20):  # type: ignore[no-untyped-def]
    import gymnasium as gym

    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize

    env = VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    env.reset()
    for _ in range(steps):
        env.step(np.array([env.action_space.sample()]))
    return env


def _full_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every later fsync fails as on a full disk: the data is written but never reaches the platter."""
    import errno

    def fail(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", fail)


def test_a_failed_vec_normalize_save_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lit_sb3.common.vec_env import VecNormalize

    env = _vec_normalize()
    path = tmp_path / "vecnormalize.pkl"
    env.save(path)
    before = path.read_bytes()
    for _ in range(20):
        env.step(np.array([env.action_space.sample()]))
    with monkeypatch.context() as patch:
        _full_disk(patch)
        with pytest.raises(OSError, match="No space left"):
            env.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["vecnormalize.pkl"]  # no temporary left
    VecNormalize.load(path, _vec_normalize(0).venv)  # the previous file still loads


def test_a_failed_evaluations_npz_write_keeps_the_previous_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gymnasium as gym

    from lit_sb3.common.callbacks import EvalCallback
    from lit_sb3_core.foundation import files

    writes = {"n": 0}
    real = files.write_atomically

    def counting(target, write):  # type: ignore[no-untyped-def]
        if Path(target).name == "evaluations.npz":
            writes["n"] += 1
            if writes["n"] == 2:
                _full_disk(monkeypatch)
        return real(target, write)

    monkeypatch.setattr("lit_sb3_core.sb3.callbacks.write_atomically", counting)
    callback = EvalCallback(gym.make("CartPole-v1"), eval_freq=32, n_eval_episodes=1, log_path=tmp_path)
    with pytest.raises(OSError, match="No space left"):
        PPO("MlpPolicy", "CartPole-v1", **SMALL).learn(128, callback=callback)
    monkeypatch.undo()
    with np.load(tmp_path / "evaluations.npz") as first:  # the first evaluation's file, whole
        assert first["timesteps"].tolist() == [32]
    assert [p.name for p in tmp_path.iterdir()] == ["evaluations.npz"]


def test_a_full_disk_during_train_keeps_its_evaluation_files_and_ends_in_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``lit-sb3 train``'s evaluations.npz: the disk fills up as the second evaluation is written."""
    from lit_sb3_core.cli import zoo_run
    from lit_sb3_core.cli.main import main
    from lit_sb3_core.foundation import files

    writes = {"n": 0}

    def filling_up(target, write):  # type: ignore[no-untyped-def]
        if Path(target).name == "evaluations.npz":
            writes["n"] += 1
            if writes["n"] == 2:
                _full_disk(monkeypatch)  # from here on every write fails, as on a full disk
        return files.write_atomically(target, write)

    monkeypatch.setattr(zoo_run, "write_atomically", filling_up)
    monkeypatch.chdir(tmp_path)
    code = main(["train", "--algo", "ppo", "--env", "CartPole-v1", "-n", "256", "--eval-freq", "64",
                 "--eval-episodes", "1", "--hyperparams", "n_envs:1", "n_steps:32", "batch_size:32", "n_epochs:1",
                 "-f", "logs", "--seed", "0"])  # fmt: skip
    monkeypatch.undo()
    assert writes["n"] == 2
    err = capsys.readouterr().err
    assert code == 2 and "lit-sb3 train: error: [Errno 28] No space left on device: " in err
    assert "Traceback" not in err
    run = tmp_path / "logs" / "ppo" / "CartPole-v1_1"
    with np.load(run / "evaluations.npz", allow_pickle=False) as first:  # the first evaluation's file, whole
        assert first["timesteps"].tolist() == [64] and first["results"].shape == (1, 1)
    assert PPO.load(run / "best_model.zip").num_timesteps == 64  # saved after the first evaluation
    leftovers = [p for p in run.rglob("*") if p.name.endswith(".tmp") or ".partial-" in p.name]
    assert not leftovers


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "model.zip"
    PPO("MlpPolicy", "CartPole-v1", **SMALL).learn(64).save(path)
    return path


def test_export_refuses_to_write_over_its_input_model(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lit_sb3_core.cli.main import main
    from lit_sb3_core.errors import ConfigurationError

    before = model_file.read_bytes()
    assert main(["export", str(model_file), "--out", str(model_file)]) == 2
    err = capsys.readouterr().err
    assert "lit-sb3 export: error:" in err and "Refusing to export over" in err and "model.onnx" in err
    model = PPO.load(model_file)
    with pytest.raises(ConfigurationError, match=r"Refusing to export over .*model.zip.*it is a model file"):
        model.export(model_file)
    assert model_file.read_bytes() == before
    PPO.load(model_file)  # still a model


def test_a_killed_exports_partial_file_is_removed_by_the_next_export(
    model_file: Path, tmp_path: Path
) -> None:
    import subprocess

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs, as a killed export's
    stale = tmp_path / f".policy.partial-{dead.pid}.onnx"
    stale.write_bytes(b"half an onnx graph")
    PPO.load(model_file).export(tmp_path / "policy.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["policy.onnx"]


# --- 3. step_timeout applies to every env source ----------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "who"),
    [
        ("DummyVecEnv", r"The training env 0 \(HangsAtStep\)"),
        ("SubprocVecEnv", r"The training env 1 did not return"),
        ("VecNormalize(DummyVecEnv)", r"The training env 0 \(HangsAtStep\)"),
    ],
)
def test_a_hung_env_in_a_given_sb3_vec_env_is_stopped_by_step_timeout(kind: str, who: str) -> None:
    import _fault_envs as fe

    from lit_sb3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecNormalize
    from lit_sb3_core.errors import EnvTimeoutError

    if kind == "SubprocVecEnv":
        venv = SubprocVecEnv([lambda: fe.HangsAtStep(at=20, index=1)] * 2)
    else:
        venv = DummyVecEnv([lambda: fe.HangsAtStep(at=20)] * 2)
        if kind.startswith("VecNormalize"):
            venv = VecNormalize(venv)
    model = PPO(n_steps=16, batch_size=32, n_epochs=1, seed=0)
    trainer = RLTrainer(max_steps=1000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    try:
        with pytest.raises(EnvTimeoutError, match=rf"{who}.* from step\(\) within step_timeout=1 s"):
            trainer.fit(model, datamodule=RLEnvDataModule(train_env=venv, step_timeout=1.0))
    finally:
        venv.close()


@pytest.mark.parametrize(
    ("kind", "who"),
    [
        ("SyncVectorEnv", r"The training env 0 \(HangsAtStep\) did not return"),
        ("AsyncVectorEnv", r"The training env 1 did not return"),
    ],
)
def test_a_hung_env_in_a_given_gymnasium_vector_env_is_stopped_by_step_timeout(kind: str, who: str) -> None:
    import _fault_envs as fe
    import gymnasium as gym

    from lit_sb3_core.errors import EnvTimeoutError

    make = gym.vector.AsyncVectorEnv if kind == "AsyncVectorEnv" else gym.vector.SyncVectorEnv
    index = 1 if kind == "AsyncVectorEnv" else None  # async: only worker 1 hangs, and it is named
    venv = make([lambda: fe.HangsAtStep(at=20, index=index, forever=60.0)] * 2,
                autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)  # fmt: skip
    model = PPO(n_steps=16, batch_size=32, n_epochs=1, seed=0)
    trainer = RLTrainer(max_steps=1000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    try:
        with pytest.raises(
            EnvTimeoutError, match=rf"{who}.* from step\(\) within step_timeout=2 s"
        ) as raised:
            trainer.fit(model, datamodule=RLEnvDataModule(train_env=venv, step_timeout=2))
        assert raised.value.step == 20
        if kind == "AsyncVectorEnv":  # the workers were ended and the env closed, not left waiting
            assert "workers were terminated" in str(raised.value)
            assert venv.closed
            assert all(not process.is_alive() for process in venv.processes)
    finally:
        venv.close()


# --- 4. The SB3 zip reader checks what lit-sb3's own format checks ----------------------------------------


@pytest.fixture(scope="module")
def sb3_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real model file written by Stable-Baselines3 (PPO, CartPole, net_arch 16)."""
    sb3 = pytest.importorskip("stable_baselines3")
    path = tmp_path_factory.mktemp("sb3") / "ppo.zip"
    model = sb3.PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1,
                    policy_kwargs={"net_arch": [16]}, seed=0)  # fmt: skip
    model.learn(32)
    model.save(path)
    return path


def _rewrite(source: Path, target: Path, member: str, change: Any) -> Path:
    """Copy an SB3 zip, with ``member``'s bytes replaced by ``change(old_bytes)``."""
    import zipfile

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        for item in old.infolist():
            payload = old.read(item.filename)
            new.writestr(item.filename, change(payload) if item.filename == member else payload)
    return target


def _tampered_data(source: Path, target: Path, edit: Any) -> Path:
    import json

    def change(payload: bytes) -> bytes:
        data = json.loads(payload)
        edit(data)
        return json.dumps(data).encode()

    return _rewrite(source, target, "data", change)


def _deep_dict_space(data: dict[str, Any]) -> None:
    data["observation_space"] = {
        ":type:": "<class 'gymnasium.spaces.dict.Dict'>",
        ":serialized:": "AAAA",
        "spaces": "{'a': " + "Dict('a': " * 3000 + "Discrete(2)" + ")" * 3000 + "}",
    }


SB3_FIELD_CASES: list[tuple[str, Any, str]] = [
    ("huge-box", lambda d: d["observation_space"].update(_shape=[100000, 100000]),
     r"observation_space._shape has the shape \(100000, 100000\).*more than the 16777216 elements"),
    ("huge-discrete", lambda d: d["action_space"].update(n=10**12),
     r"action_space.n must be an integer from 1 to 1048576, got 1000000000000"),
    ("deep-dict", _deep_dict_space, r"nests Dict spaces more than 32 levels deep"),
    ("huge-net-arch", lambda d: d["policy_kwargs"].update(net_arch=[100000, 100000]),
     r"data.policy_kwargs.net_arch asks for a layer of width 100000.*policy.pth.*not built"),
    ("huge-features-dim", lambda d: d["policy_kwargs"].update(features_extractor_kwargs={"features_dim": 10**6}),
     r"features_extractor_kwargs.features_dim is 1000000, but no weight in policy.pth has that size"),
    ("nan-timesteps", lambda d: d.update(num_timesteps=float("nan")),
     r"data.num_timesteps must be a non-negative integer, got nan"),
    ("negative-timesteps", lambda d: d.update(num_timesteps=-5),
     r"data.num_timesteps must be a non-negative integer, got -5"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "message"), [c[1:] for c in SB3_FIELD_CASES], ids=[c[0] for c in SB3_FIELD_CASES]
)
def test_a_tampered_sb3_field_is_refused_before_anything_is_allocated(
    sb3_file: Path, tmp_path: Path, edit: Any, message: str
) -> None:
    tampered = _tampered_data(sb3_file, tmp_path / "tampered.zip", edit)
    with pytest.raises(ModelFileError, match=r"tampered.zip.*" + message if "data." in message else message):
        PPO.load(tampered)
    PPO.load(sb3_file)  # the original still loads


def test_deep_json_in_an_sb3_file_is_refused_without_a_recursion_error(
    sb3_file: Path, tmp_path: Path
) -> None:
    deep = b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"
    tampered = _rewrite(sb3_file, tmp_path / "deep.zip", "data", lambda _: deep)
    with pytest.raises(ModelFileError, match=r"'data' entry of .*deep.zip.*nested too deeply"):
        PPO.load(tampered)


def test_oversized_sb3_members_are_refused_before_reading(sb3_file: Path, tmp_path: Path) -> None:
    info = _rewrite(sb3_file, tmp_path / "info.zip", "system_info.txt", lambda _: b"0" * (2 * 2**20))
    with pytest.raises(
        ModelFileError, match=r"'system_info.txt' entry of .*info.zip.*would unpack to 2097152"
    ):
        PPO.load(info)
    bomb = _rewrite(sb3_file, tmp_path / "bomb.zip", "policy.optimizer.pth", lambda _: bytes(100 * 2**20))
    assert bomb.stat().st_size < 2**20
    with pytest.raises(
        ModelFileError, match=r"'policy.optimizer.pth' entry .*would inflate .*decompression bomb"
    ):
        PPO.load(bomb)


def test_nan_weights_in_an_sb3_file_are_refused(sb3_file: Path, tmp_path: Path) -> None:
    import io

    import torch

    def poison(payload: bytes) -> bytes:
        state = torch.load(io.BytesIO(payload), weights_only=True)
        name = next(iter(state))
        state[name] = torch.full_like(state[name], float("nan"))
        buffer = io.BytesIO()
        torch.save(state, buffer)
        return buffer.getvalue()

    tampered = _rewrite(sb3_file, tmp_path / "nan.zip", "policy.pth", poison)
    with pytest.raises(ModelFileError, match=r"nan.zip'.*policy.pth: .* holds NaN or infinity"):
        PPO.load(tampered)


def test_nan_in_an_sb3_files_pytorch_variables_is_refused(tmp_path: Path) -> None:
    import io

    import torch

    from lit_sb3 import SAC

    sb3 = pytest.importorskip("stable_baselines3")
    real = tmp_path / "sac.zip"
    sb3.SAC("MlpPolicy", "Pendulum-v1", policy_kwargs={"net_arch": [16]}, seed=0).save(real)

    def poison(payload: bytes) -> bytes:
        variables = torch.load(io.BytesIO(payload), weights_only=True)
        variables["log_ent_coef"] = torch.full_like(variables["log_ent_coef"], float("nan"))
        buffer = io.BytesIO()
        torch.save(variables, buffer)
        return buffer.getvalue()

    tampered = _rewrite(real, tmp_path / "nan_sac.zip", "pytorch_variables.pth", poison)
    with pytest.raises(ModelFileError, match=r"nan_sac.zip.*pytorch_variables.pth: log_ent_coef holds NaN"):
        SAC.load(tampered)
    SAC.load(real)  # the original loads


def test_a_truncated_sb3_file_is_reported_as_truncated(sb3_file: Path, tmp_path: Path) -> None:
    data = sb3_file.read_bytes()
    truncated = tmp_path / "cut.zip"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFileError, match=r"cut.zip.*truncated"):
        PPO.load(truncated)


@pytest.fixture(scope="module")
def sb3_lstm_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real RecurrentPPO model file written by sb3-contrib (lstm_hidden_size 8, one LSTM layer)."""
    contrib = pytest.importorskip("sb3_contrib")
    path = tmp_path_factory.mktemp("sb3_lstm") / "lstm.zip"
    model = contrib.RecurrentPPO("MlpLstmPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1,
                                 policy_kwargs={"lstm_hidden_size": 8, "net_arch": [8]}, seed=0)  # fmt: skip
    model.save(path)
    return path


LSTM_CASES: list[tuple[str, Any, str]] = [
    ("huge-hidden", {"lstm_hidden_size": 10**6},
     r"data.policy_kwargs.lstm_hidden_size is 1000000, but no weight in policy.pth has that size"),
    ("hidden-not-int", {"lstm_hidden_size": 1e6},
     r"data.policy_kwargs.lstm_hidden_size must be a positive integer, got 1000000.0"),
    ("many-layers", {"n_lstm_layers": 10**5},
     r"data.policy_kwargs.n_lstm_layers is 100000, but policy.pth holds 1 LSTM layer"),
]  # fmt: skip


@pytest.mark.parametrize(("change", "message"), [c[1:] for c in LSTM_CASES], ids=[c[0] for c in LSTM_CASES])
def test_an_lstm_size_in_an_sb3_file_is_checked_against_its_weights_before_building(
    sb3_lstm_file: Path, tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    import warnings

    from lit_sb3 import RecurrentPPO

    tampered = _tampered_data(
        sb3_lstm_file, tmp_path / "lstm.zip", lambda d: d["policy_kwargs"].update(change)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fields SB3 stores only as pickles are named in a warning
        with pytest.raises(ModelFileError, match=r"lstm.zip'.*" + message + r".*not built"):
            RecurrentPPO.load(tampered)
        assert RecurrentPPO.load(sb3_lstm_file).policy.lstm_hidden_size == 8  # the original still loads


# --- 5. VecNormalize.load and ReplayBuffer.load validate before they allocate -----------------------------


def _rewrite_npz(source: Path, target: Path, change: Any) -> Path:
    with np.load(source, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    with open(target, "wb") as handle:
        np.savez(handle, **arrays)
    return target


def _settings(**changes: Any) -> Any:
    import json

    def change(arrays: dict[str, np.ndarray]) -> None:
        settings = json.loads(str(arrays["settings"]))
        settings.update(changes)
        arrays["settings"] = np.array(json.dumps(settings))

    return change


def _array(name: str, value: float) -> Any:
    def change(arrays: dict[str, np.ndarray]) -> None:
        arrays[name] = np.full_like(arrays[name], value)

    return change


VEC_NORMALIZE_CASES: list[tuple[str, Any, str]] = [
    ("nan-mean", _array("obs/mean", float("nan")), r"obs/mean must hold finite numbers"),
    ("negative-var", _array("obs/var", -1.0), r"obs/var must not be negative"),
    ("negative-clip", _settings(clip_obs=-1.0), r"settings.clip_obs must be a positive finite number, got -1.0"),
    ("nan-gamma", _settings(gamma=float("nan")), r"settings.gamma must be a number in \[0, 1\], got nan"),
    ("negative-epsilon", _settings(epsilon=-1e-8), r"settings.epsilon must be a positive finite number"),
    ("settings-not-json", lambda a: a.update(settings=np.array("{not json")), r"settings are not JSON"),
    ("wrong-size", lambda a: a.update({"obs/mean": np.zeros(10**6)}),
     r"statistics of shape \(1000000,\) .* for obs, the env needs \(4,\).*env they were gathered on"),
    ("missing-statistics", lambda a: a.pop("obs/var"), r"has no statistics 'obs/var'"),
    ("keys-of-another-env", _settings(norm_obs_keys=["pixels"]),
     r"the statistics do not fit this env \(norm_obs_keys is applicable only to Dict observation spaces"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"), [c[1:] for c in VEC_NORMALIZE_CASES], ids=[c[0] for c in VEC_NORMALIZE_CASES]
)
def test_a_tampered_vec_normalize_file_is_refused(tmp_path: Path, change: Any, message: str) -> None:
    from lit_sb3.common.vec_env import VecNormalize

    good = tmp_path / "vecnormalize.pkl"
    _vec_normalize().save(good)
    bad = _rewrite_npz(good, tmp_path / "bad.npz", change)
    with pytest.raises(ModelFileError, match=r"bad.npz: .*" + message) as refused:
        VecNormalize.load(bad, _vec_normalize(0).venv)
    assert refused.value.path == str(bad)
    VecNormalize.load(good, _vec_normalize(0).venv)


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DQN model file with its replay buffer beside it, as ``lit-sb3 train --save-replay-buffer`` leaves."""
    from lit_sb3 import DQN

    folder = tmp_path_factory.mktemp("dqn")
    model = DQN("MlpPolicy", "CartPole-v1", learning_starts=16, buffer_size=200, batch_size=16, seed=0)
    model.learn(64)
    model.save(folder / "CartPole-v1.zip")
    model.save_replay_buffer(folder / "replay_buffer.npz")
    return folder


def _lying_header(source: Path, target: Path, **changes: Any) -> Path:
    import json

    def change(arrays: dict[str, np.ndarray]) -> None:
        header = json.loads(bytes(arrays["__lit_sb3_replay_buffer__"]).decode())
        header.update(changes)
        arrays["__lit_sb3_replay_buffer__"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)

    return _rewrite_npz(source, target, change)


REPLAY_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("huge", {"buffer_size": 10**13, "rows": 10**13}, r"needs [\d.]+ GiB, more than this machine's"),
    ("inconsistent", {"buffer_size": 10**9}, r"rows=200 times n_envs=1 is not buffer_size=1000000000"),
    ("nan-gamma", {"gamma": float("nan")}, r"gamma must be a number in \[0, 1\], got nan"),
    ("bad-n-envs", {"n_envs": 0}, r"n_envs must be a positive integer, got 0"),
    ("huge-space", {"observation_space": {"type": "Box", "shape": [10**6, 10**6], "dtype": "float32",
                                          "low": -1.0, "high": 1.0}}, r"observation_space is not a valid space"),
    ("garbage-rng", {"rng": {"bit_generator": "nope"}}, r"cannot be restored"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "message"), [c[1:] for c in REPLAY_CASES], ids=[c[0] for c in REPLAY_CASES]
)
def test_a_lying_replay_buffer_file_is_refused_before_allocating(
    dqn_run: Path, tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    from lit_sb3_core.data.replay_buffer import ReplayBuffer
    from lit_sb3_core.errors import ConfigurationError

    bad = _lying_header(dqn_run / "replay_buffer.npz", tmp_path / "replay_buffer.npz", **changes)
    with pytest.raises(ConfigurationError, match=message):
        ReplayBuffer.load(bad)
    ReplayBuffer.load(dqn_run / "replay_buffer.npz")


def test_a_decompression_bomb_in_a_replay_buffer_file_is_refused_unread(
    dqn_run: Path, tmp_path: Path
) -> None:
    import shutil
    import zipfile

    from lit_sb3_core.data.replay_buffer import ReplayBuffer
    from lit_sb3_core.errors import ConfigurationError

    bomb = shutil.copy(dqn_run / "replay_buffer.npz", tmp_path / "replay_buffer.npz")
    with zipfile.ZipFile(bomb, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("padding.npy", bytes(65 * 2**20))  # 65 MiB of zeros in about 64 KiB
    with pytest.raises(
        ConfigurationError, match=r"replay_buffer.npz': padding.npy would inflate from .*decompression bomb"
    ):
        ReplayBuffer.load(bomb)
    ReplayBuffer.load(dqn_run / "replay_buffer.npz")


def test_train_continuing_with_a_lying_replay_buffer_ends_in_an_error_line(
    dqn_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from lit_sb3_core.cli.main import main

    agent = tmp_path / "agent"
    agent.mkdir()
    shutil.copy(dqn_run / "CartPole-v1.zip", agent)
    _lying_header(dqn_run / "replay_buffer.npz", agent / "replay_buffer.npz", buffer_size=10**13, rows=10**13)
    monkeypatch.chdir(tmp_path)
    code = main(["train", "--algo", "dqn", "--env", "CartPole-v1", "-i", str(agent / "CartPole-v1.zip"),
                 "-n", "64", "--eval-freq", "-1", "-f", "logs"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "lit-sb3 train: error:" in err and "replay_buffer.npz" in err and "Traceback" not in err


# --- 6. load_results / Monitor files ------------------------------------------------------------------------


@pytest.fixture
def monitor_folder(tmp_path: Path) -> Path:
    """A folder with one real monitor file (three CartPole episodes)."""
    import gymnasium as gym

    from lit_sb3.common.monitor import Monitor

    env = Monitor(gym.make("CartPole-v1"), str(tmp_path / "good"))
    env.reset(seed=0)
    episodes = 0
    while episodes < 3:
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            episodes += 1
            env.reset()
    env.close()
    return tmp_path


def test_a_fifo_or_device_named_monitor_csv_is_refused_without_blocking(monitor_folder: Path) -> None:

    pytest.importorskip("pandas")
    from lit_sb3.common.monitor import LoadMonitorResultsError, load_results

    assert len(load_results(str(monitor_folder))) == 3
    os.mkfifo(monitor_folder / "fifo.monitor.csv")
    with pytest.raises(
        LoadMonitorResultsError, match=r"fifo.monitor.csv is a FIFO, not a regular monitor file"
    ):
        load_results(str(monitor_folder))
    (monitor_folder / "fifo.monitor.csv").unlink()
    (monitor_folder / "zero.monitor.csv").symlink_to("/dev/zero")
    with pytest.raises(LoadMonitorResultsError, match=r"zero.monitor.csv is a device"):
        load_results(str(monitor_folder))
    (monitor_folder / "zero.monitor.csv").unlink()
    with open(monitor_folder / "huge.monitor.csv", "wb") as huge:  # sparse: 1 GiB + 1 byte, refused unread
        huge.truncate(2**30 + 1)
    with pytest.raises(
        LoadMonitorResultsError, match=r"huge.monitor.csv is larger than the 1073741824 bytes"
    ):
        load_results(str(monitor_folder))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('#{"t_start": 1.0, "env_id"\nr,l,t\n', r"bad.monitor.csv, line 1: the header is not JSON"),
        (
            "#[1, 2]\nr,l,t\n",
            r"bad.monitor.csv, line 1: the header must be a JSON object with a number t_start",
        ),
        (
            '#{"t_start": 1.0}\nr,l,t\n1.0,10,0.5\nten,10,0.6\n',
            r"bad.monitor.csv, line 4: r='ten' is not a number",
        ),
        ('#{"t_start": 1.0}\nr,t\n1.0,0.5\n', r"bad.monitor.csv, line 2: .* lack \['l'\]"),
        ('#{"t_start": 1.0}\nr,l,t\n1.0,10\n', r"bad.monitor.csv, line 3: 2 values for 3 columns"),
    ],
    ids=["broken-header", "header-not-object", "text-row", "missing-column", "short-row"],
)
def test_a_broken_monitor_file_is_named_with_its_line(monitor_folder: Path, text: str, message: str) -> None:
    pytest.importorskip("pandas")
    from lit_sb3.common.monitor import LoadMonitorResultsError, load_results

    (monitor_folder / "bad.monitor.csv").write_text(text)
    with pytest.raises(LoadMonitorResultsError, match=message):
        load_results(str(monitor_folder))


# --- 7. The rest of the earlier catalogue ------------------------------------------------------------------


def _rewrite_model(source: Path, target: Path, metadata: bytes) -> Path:
    import zipfile

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            new.writestr(item, metadata if item.filename == "metadata.json" else old.read(item.filename))
    return target


@pytest.mark.parametrize("depth", [5_000, 200_000])
def test_model_metadata_nested_deeply_is_refused_without_a_recursion_error(
    model_file: Path, tmp_path: Path, depth: int
) -> None:
    import json
    import zipfile

    with zipfile.ZipFile(model_file) as archive:
        metadata = json.loads(archive.read("metadata.json"))
    text = json.dumps(metadata).replace(
        '"hyperparameters": {', '"hyperparameters": {"x": ' + "[" * depth + "]" * depth + ", ", 1
    )
    tampered = _rewrite_model(model_file, tmp_path / "deep.zip", text.encode())
    with pytest.raises(ModelFileError, match=r"deep.zip'.* nested too deeply"):
        PPO.load(tampered)


def test_hyperparameters_nested_past_the_limit_are_refused(model_file: Path, tmp_path: Path) -> None:
    import json
    import zipfile

    with zipfile.ZipFile(model_file) as archive:
        metadata = json.loads(archive.read("metadata.json"))
    nested: Any = 1
    for _ in range(500):
        nested = [nested]
    metadata["hyperparameters"]["policy_kwargs"] = {"net_arch": nested}
    tampered = _rewrite_model(model_file, tmp_path / "nested.zip", json.dumps(metadata).encode())
    with pytest.raises(
        ModelFileError, match=r"nested.zip'.* nested more than 100 levels deep .*policy_kwargs"
    ):
        PPO.load(tampered)


@pytest.mark.parametrize(
    ("rng", "field"),
    [
        ({"numpy": 1}, r"lit_sb3.rng must be a dict of generator states .* no 'torch'"),
        ("garbage", r"lit_sb3.rng must be a dict of generator states"),
        ({"torch": "x", "numpy": {}, "python": {}}, r"lit_sb3.rng.torch must be a 1-D uint8 tensor"),
    ],
    ids=["missing-keys", "not-a-dict", "wrong-types"],
)
def test_a_checkpoint_with_garbage_rng_state_is_refused_on_load_and_resume(
    checkpoint: Path, tmp_path: Path, rng: Any, field: str
) -> None:
    import torch

    data = torch.load(checkpoint, weights_only=True)
    data["lit_sb3"]["rng"] = rng
    tampered = tmp_path / "rng.ckpt"
    torch.save(data, tampered)
    with pytest.raises(ModelFileError, match=r"rng.ckpt'.*" + field):
        PPO.load_from_checkpoint(tampered)
    trainer = RLTrainer(max_steps=128, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    with pytest.raises(ModelFileError, match=field):
        trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env="CartPole-v1"), ckpt_path=tampered)
    PPO.load_from_checkpoint(checkpoint)  # the original still loads


def test_an_observation_shape_that_changes_at_a_later_reset_names_the_env_and_step() -> None:
    import _fault_envs as fe

    from lit_sb3_core.errors import EnvError

    class WrongShapeAtThirdReset(fe.Healthy):
        def __init__(self) -> None:
            super().__init__()
            self.resets = 0

        def reset(self, **kwargs: Any) -> Any:
            obs, info = super().reset(**kwargs)
            self.resets += 1
            return (obs[:3] if self.resets > 2 else obs), info

    trainer = RLTrainer(max_steps=2000, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    with pytest.raises(
        EnvError, match=r"The training env \d \(WrongShapeAtThirdReset\) .* at vector step \d+ .*shape \(3,\)"
    ):
        trainer.fit(PPO(**SMALL), datamodule=RLEnvDataModule(train_env=WrongShapeAtThirdReset, n_envs=1))


def test_more_cpu_devices_than_cores_warns_with_the_default_strategy() -> None:

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with pytest.warns(
        UserWarning, match=rf"devices={cores + 6}\) on CPU starts {cores + 6} training processes"
    ):
        RLTrainer(max_steps=10, accelerator="cpu", devices=cores + 6, logger=False)


# --- 2 (continued). kill -9 in the middle of a save, a few times -------------------------------------------

KILLED_VEC_NORMALIZE_SAVER = """
import sys
import gymnasium as gym
import numpy as np
from gymnasium import spaces
from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize

class Wide(gym.Env):
    observation_space = spaces.Box(-1.0, 1.0, (200_000,), np.float32)
    action_space = spaces.Discrete(2)
    def reset(self, *, seed=None, options=None):
        return np.zeros(200_000, np.float32), {}
    def step(self, action):
        return np.ones(200_000, np.float32), 1.0, False, False, {}

env = VecNormalize(DummyVecEnv([Wide]))
env.reset()
env.step(np.array([0]))
target = sys.argv[1] + "/vecnormalize.pkl"
env.save(target)
print("ready", flush=True)
while True:  # the parent kills this process in the middle of one of these saves
    env.save(target)
"""


def _kill_mid_save(folder: Path) -> None:
    from _kill_mid_save import kill_mid_save

    kill_mid_save(folder, KILLED_VEC_NORMALIZE_SAVER, str(folder))


@pytest.mark.skipif(not hasattr(os, "O_TMPFILE"), reason="unnamed files (O_TMPFILE) are Linux's")
def test_a_vec_normalize_save_killed_with_sigkill_loses_nothing_and_leaves_no_temporary(
    tmp_path: Path,
) -> None:
    for _ in range(3):
        _kill_mid_save(tmp_path)  # killed while a file was being written (kill_mid_save waits for one)
        # The last complete file loads after every kill, and the killed write left nothing (it had no name
        # yet: the kernel removed it with the process).
        with np.load(tmp_path / "vecnormalize.pkl", allow_pickle=False) as archive:
            assert archive["obs/mean"].shape == (200_000,)
        assert [p.name for p in tmp_path.iterdir()] == ["vecnormalize.pkl"]


def test_checkpoint_callback_saves_vec_normalize_atomically_and_a_failed_save_keeps_the_earlier_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gymnasium as gym

    from lit_sb3.common.callbacks import CheckpointCallback
    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize

    saves = {"n": 0}
    real = VecNormalize.save

    def failing_second(self: Any, path: Any) -> None:
        saves["n"] += 1
        if saves["n"] == 2:
            _full_disk(monkeypatch)
        real(self, path)

    monkeypatch.setattr(VecNormalize, "save", failing_second)
    env = VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    callback = CheckpointCallback(save_freq=32, save_path=str(tmp_path), save_vecnormalize=True)
    with pytest.raises(OSError, match="No space left"):
        PPO("MlpPolicy", env, **SMALL).learn(128, callback=callback)
    monkeypatch.undo()
    (first,) = tmp_path.glob("*vecnormalize*")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the failed save left nothing
    VecNormalize.load(first, DummyVecEnv([lambda: gym.make("CartPole-v1")]))
