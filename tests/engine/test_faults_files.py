"""Untrusted and damaged files, beyond tests/engine/test_model_file.py: pickle payloads inside model zips and
checkpoints never run, Stable-Baselines3 zips and decompression bombs are named, and a write that the OS
refuses (a full disk) keeps the previous model file and replay buffer."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
import resource
import signal
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

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


def test_a_stable_baselines3_zip_loads_and_is_never_unpickled(tmp_path: Path) -> None:
    sb3 = pytest.importorskip("stable_baselines3")
    real = tmp_path / "sb3_ppo.zip"
    sb3.PPO("MlpPolicy", "CartPole-v1", device="cpu").save(real)
    marker = tmp_path / "pwned"
    crafted = _zip(tmp_path / "sb3_crafted.zip", {**_entries(real), "policy.pth": _pickled(marker, True)})
    assert PPO.load(real).observation_space.shape == (4,)  # weights only, readable fields only
    with pytest.raises(
        ModelFileError, match=r"policy.pth .* cannot be read as plain tensors.*weights_only=True"
    ):
        PPO.load(crafted)
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
        r"crafted.ckpt.: refused to load the checkpoint.*could run code.*posix.system.*weights_only=False"
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


# tampered model files: every field checked, one error naming the file and the field --------------------

from safetensors.torch import load as _st_load  # noqa: E402
from safetensors.torch import save as _st_save  # noqa: E402


def _rewritten(
    saved: Path, tmp_path: Path, metadata: Any = None, weights: Any = None, name: str = "tampered.zip"
) -> Path:
    entries = _entries(saved)
    if metadata is not None:
        entries["metadata.json"] = json.dumps(metadata(json.loads(entries["metadata.json"]))).encode()
    if weights is not None:
        entries["model.safetensors"] = _st_save(weights(_st_load(entries["model.safetensors"])))
    return _zip(tmp_path / name, entries)


def _meta(**changes: Any) -> Any:
    return lambda m: {**m, **changes}


def _hyper(**changes: Any) -> Any:
    return lambda m: {**m, "hyperparameters": {**m["hyperparameters"], **changes}}


def _floats(change: Any) -> Any:
    return lambda w: {k: change(v) if v.is_floating_point() else v for k, v in w.items()}


BOX_HUGE = {"type": "Box", "low": 0, "high": 1, "shape": [10**6, 10**6], "dtype": "float32"}
TAMPERED_FILES: dict[str, tuple[dict[str, Any], str]] = {
    "num_timesteps NaN": (
        {"metadata": _meta(num_timesteps=float("nan"))},
        "num_timesteps must be a non-negative",
    ),
    "num_timesteps -5": (
        {"metadata": _meta(num_timesteps=-5)},
        "num_timesteps must be a non-negative integer",
    ),
    "iterations True": ({"metadata": _meta(iterations=True)}, "iterations must be a non-negative integer"),
    "n_updates 1.5": ({"metadata": _meta(n_updates=1.5)}, "n_updates must be a non-negative integer"),
    "observation_space 5": (
        {"metadata": _meta(observation_space=5)},
        "observation_space is not a valid space",
    ),
    "Box [1e6, 1e6]": ({"metadata": _meta(observation_space=BOX_HUGE)}, "more than the 16777216 elements"),
    "Discrete(1e12)": (
        {"metadata": _meta(action_space={"type": "Discrete", "n": 10**12})},
        "action_space.n must be an integer from 1 to 1048576",
    ),
    "Box NaN bounds": (
        {"metadata": _meta(observation_space={**BOX_HUGE, "shape": [4], "low": float("nan")})},
        "observation_space.low holds NaN",
    ),
    "Box dtype object": (
        {"metadata": _meta(observation_space={**BOX_HUGE, "shape": [4], "dtype": "object"})},
        "observation_space.dtype must name a numeric dtype",
    ),
    "MultiDiscrete too large": (
        {"metadata": _meta(action_space={"type": "MultiDiscrete", "nvec": [2**19] * 4})},
        "nvec must hold positive integers summing to at most",
    ),
    "unknown space type": (
        {"metadata": _meta(action_space={"type": "Tuple"})},
        "action_space.type must be Box",
    ),
    "normalization garbage": ({"metadata": _meta(normalization="garbage")}, "normalization must be null or"),
    "normalization clip -1": (
        {
            "metadata": _meta(
                normalization={
                    "observation": True,
                    "reward": False,
                    "clip_obs": -1.0,
                    "clip_reward": 10.0,
                    "gamma": None,
                    "epsilon": 1e-8,
                }
            )
        },
        "normalization.clip_obs must be a positive finite number",
    ),
    "optimizer_param_groups params 'x'": (
        {"metadata": _meta(optimizer_param_groups=[[{"params": "x", "lr": 1e-3}]])},
        "optimizer_param_groups[0][0].params must be a list of parameter indices",
    ),
    "optimizer_param_groups lr NaN": (
        {"metadata": _meta(optimizer_param_groups=[[{"params": [0], "lr": float("nan")}]])},
        "optimizer_param_groups[0][0].lr must be finite",
    ),
    "optimizer_param_groups a dict": (
        {"metadata": _meta(optimizer_param_groups={"lr": 1})},
        "optimizer_param_groups must be a list",
    ),
    "hyperparameters []": (
        {"metadata": _meta(hyperparameters=[])},
        "hyperparameters must map argument names",
    ),
    "hyperparameter unknown": ({"metadata": _hyper(bogus=1)}, "unexpected keyword argument 'bogus'"),
    "vf_coef NaN": (
        {"metadata": _hyper(vf_coef=float("nan"))},
        "hyperparameters.vf_coef must be a finite number",
    ),
    "ent_coef inf": (
        {"metadata": _hyper(ent_coef=float("inf"))},
        "hyperparameters.ent_coef must be a finite",
    ),
    "policy_kwargs a list": (
        {"metadata": _hyper(policy_kwargs=[1])},
        "hyperparameters.policy_kwargs must be",
    ),
    "algo 5": ({"metadata": _meta(algo=5)}, "algo must be an algorithm's registry name"),
    "format_version '1'": (
        {"metadata": _meta(format_version="1")},
        "format_version must be a positive integer",
    ),
    "int weights": ({"weights": _floats(lambda v: v.to(torch.int64))}, "is int64, but the 'ppo' model"),
    "bool weights": ({"weights": _floats(lambda v: v > 0)}, "is bool, but the 'ppo' model"),
    "NaN weights": (
        {"weights": _floats(lambda v: torch.full_like(v, float("nan")))},
        "holds NaN or infinity",
    ),
    "inf weights": (
        {"weights": _floats(lambda v: torch.full_like(v, float("inf")))},
        "holds NaN or infinity",
    ),
    "a weight of another shape": (
        {"weights": lambda w: {**w, "policy.value_net.weight": torch.zeros(3, 3)}},
        "weights.policy.value_net.weight has shape [3, 3], but the 'ppo' model its metadata describes needs [1, 64]",
    ),
    "a weight missing": (
        {"weights": lambda w: {k: v for k, v in w.items() if k != "policy.value_net.bias"}},
        "the file lacks tensor policy.value_net.bias",
    ),
    "an extra weight": (
        {"weights": lambda w: {**w, "policy.extra": torch.zeros(2)}},
        "the file has unexpected tensor policy.extra",
    ),
    "weights inflating 1000x": (
        {
            "metadata": _hyper(policy_kwargs={"net_arch": [6_000, 6_000]}),
            "weights": lambda w: {
                **w,
                "policy.mlp_extractor.policy_net.2.weight": torch.zeros(6_000, 6_000),
            },
        },
        "model.safetensors would inflate from",
    ),
}


@pytest.mark.parametrize("case", list(TAMPERED_FILES))
def test_a_tampered_model_file_is_refused_naming_the_file_and_the_field(
    saved: Path, tmp_path: Path, case: str
) -> None:
    changes, said = TAMPERED_FILES[case]
    tampered = _rewritten(saved, tmp_path, **changes)
    with pytest.raises(ModelFileError) as info:
        PPO.load(tampered)
    assert str(info.value).startswith(f"'{tampered}': ")
    assert said in str(info.value)
    assert info.value.path == str(tampered)
    assert PPO.load(saved).num_timesteps == 64  # nothing lost: the genuine file still loads


def test_a_file_declaring_a_huge_model_is_refused_before_it_is_built(saved: Path, tmp_path: Path) -> None:
    # 1e5 x 1e5 hidden layers would be 40 GB of weights; the meta-device build sees the file holds 9 kB.
    tampered = _rewritten(saved, tmp_path, metadata=_hyper(policy_kwargs={"net_arch": [100_000, 100_000]}))
    with pytest.raises(
        ModelFileError, match=r"has shape \[64, 4\], but the 'ppo' model its metadata describes"
    ):
        PPO.load(tampered)


# names inside files: every algorithm, every field, nothing imported or called --------------------------

ALGORITHMS = {
    "PPO": "CartPole-v1", "A2C": "CartPole-v1", "TRPO": "CartPole-v1", "ARS": "CartPole-v1",
    "DQN": "CartPole-v1", "QRDQN": "CartPole-v1", "SAC": "Pendulum-v1", "TD3": "Pendulum-v1",
    "DDPG": "Pendulum-v1", "TQC": "Pendulum-v1", "CrossQ": "Pendulum-v1", "RecurrentPPO": "CartPole-v1",
    "MaskablePPO": "CartPole-v1",
}  # fmt: skip
NAMED_FIELDS = [
    "policy",
    "activation_fn",
    "features_extractor_class",
    "optimizer_class",
    "replay_buffer_class",
]
HOSTILE = ["tempfile:mkdtemp", "os:abort", "builtins:input", "this:x"]


@pytest.fixture(scope="module")
def algorithm_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import lit_sb3

    folder = tmp_path_factory.mktemp("algorithms")
    files = {}
    for name, env in ALGORITHMS.items():
        cls = getattr(lit_sb3, name)
        kwargs: dict[str, Any] = {"policy_kwargs": {"net_arch": [16]}}  # small files: quick to rewrite
        if "buffer_size" in cls.__init__.__code__.co_varnames:
            kwargs.update(buffer_size=100, batch_size=32)
        if name == "RecurrentPPO":
            kwargs["policy_kwargs"]["lstm_hidden_size"] = 8
        files[name] = Path(
            cls(env=env, seed=0, **kwargs).save(folder / f"{name}.zip") or folder / f"{name}.zip"
        )
    return files


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
def test_no_algorithm_imports_or_calls_what_a_file_names(
    algorithm_files: dict[str, Path], tmp_path: Path, algorithm: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    import lit_sb3

    cls = getattr(lit_sb3, algorithm)
    private = tmp_path / "tempdir"  # where tempfile.mkdtemp would create its folder, were it called
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    this_imported = "this" in sys.modules
    tried = 0
    for field in NAMED_FIELDS:
        if field == "replay_buffer_class" and "replay_buffer_class" not in cls.__init__.__code__.co_varnames:
            continue
        for value in HOSTILE:
            if field == "policy":
                change = _hyper(policy=value)
            elif field == "replay_buffer_class":
                change = _hyper(replay_buffer_class=value)
            else:
                change = lambda m, field=field, value=value: {  # noqa: E731
                    **m,
                    "hyperparameters": {
                        **m["hyperparameters"],
                        "policy_kwargs": {**(m["hyperparameters"].get("policy_kwargs") or {}), field: value},
                    },
                }
            tampered = _rewritten(algorithm_files[algorithm], tmp_path, metadata=change)
            with pytest.raises(ModelFileError, match=rf"{re.escape(value)}.* is not allowed") as info:
                cls.load(tampered)
            assert info.value.field is not None and info.value.field.endswith(field)
            tried += 1
    assert tried >= 12
    assert list(private.iterdir()) == [], "tempfile.mkdtemp ran"
    assert ("this" in sys.modules) == this_imported, "the module 'this' was imported"
    assert lit_sb3.load(algorithm_files[algorithm]).num_timesteps == 0  # the genuine file loads


CUSTOM_EXTRACTOR = textwrap.dedent(
    """
    import sys, torch
    from torch import nn
    from lit_sb3 import PPO
    from lit_sb3_core.sdk import BaseFeaturesExtractor

    class Tiny(BaseFeaturesExtractor):
        def __init__(self, observation_space, features_dim=8):
            super().__init__(observation_space, features_dim)
            self.linear = nn.Linear(4, features_dim)

        def forward(self, obs):
            return self.linear(obs)

    path = sys.argv[1]
    if sys.argv[2] == "save":
        PPO(env="CartPole-v1", policy_kwargs={"features_extractor_class": Tiny}, seed=0).save(path)
    model = PPO.load(path)  # the script that defines the extractor loads it back
    print(type(model.policy.features_extractor).__name__)
    """
)


def test_a_script_that_defines_an_extractor_saves_and_loads_it_and_another_program_is_told_how(
    tmp_path: Path,
) -> None:
    import subprocess

    script = tmp_path / "train.py"
    script.write_text(CUSTOM_EXTRACTOR)
    path = tmp_path / "custom.zip"
    done = subprocess.run([sys.executable, str(script), str(path), "save"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "Tiny"
    # This process never imported that script's __main__ module's class: refused, with what to do.
    with pytest.raises(
        ModelFileError, match=r"features_extractor_class='__main__:Tiny' is not allowed.*import it"
    ):
        PPO.load(path)
    # Passing the class itself (in custom_objects, SB3's way; a different policy_kwargs= is refused as in
    # SB3) loads it.
    from lit_sb3_core.nets.torch_layers import FlattenExtractor

    with pytest.raises(ModelFileError, match="weights"):  # a FlattenExtractor has none of Tiny's weights
        PPO.load(path, custom_objects={"policy_kwargs": {"features_extractor_class": FlattenExtractor}})


@pytest.mark.parametrize(
    ("field", "legacy"),
    [
        ("features_extractor_class", "lit_sb3_core.torch_layers:FlattenExtractor"),
        ("policy", "lit_sb3_core.policies:ActorCriticPolicy"),
    ],
)
def test_a_0_1_model_file_naming_legacy_paths_still_loads(
    saved: Path, tmp_path: Path, field: str, legacy: str
) -> None:
    if field == "policy":
        change = _hyper(policy=legacy)
    else:
        change = _hyper(policy_kwargs={field: legacy})
    model = PPO.load(_rewritten(saved, tmp_path, metadata=change))
    assert model.num_timesteps == 64


# replay buffer files --------------------------------------------------------------------------------


def _buffer_file(tmp_path: Path) -> Path:
    model = DQN(learning_starts=10, buffer_size=500, train_freq=4, seed=0).learn(64, env="CartPole-v1")
    return model.save_replay_buffer(tmp_path / "buffer")


def _rewrite_npz(path: Path, out: Path, header: Any = None, arrays: Any = None) -> Path:
    with np.load(path, allow_pickle=False) as data:
        contents = {name: data[name] for name in data.files}
    key = "__lit_sb3_replay_buffer__"  # the JSON header, stored as bytes
    meta = json.loads(bytes(contents[key]).decode())
    if header is not None:
        meta = header(meta)
    contents[key] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    if arrays is not None:
        contents = arrays(contents)
    np.savez(out, **contents)
    return out


BUFFER_CASES = {
    "a petabyte buffer": (
        lambda h: {**h, "buffer_size": 10**15, "rows": 10**15},
        None,
        "more than this machine's",
    ),
    "position outside": (lambda h: {**h, "pos": 10**6}, None, "position 1000000 outside"),
    "full 'yes'": (lambda h: {**h, "full": "yes"}, None, "full='yes', not true or false"),
    "header missing a key": (
        lambda h: {k: v for k, v in h.items() if k != "n_envs"},
        None,
        "no 'n_envs' in its header",
    ),
    "observations of another shape": (
        None,
        lambda c: {**c, "observations.": np.zeros((5, 1, 7), np.float32)},
        "array 'observations.' of shape (5, 1, 7)",
    ),
}


@pytest.mark.parametrize("case", list(BUFFER_CASES))
def test_a_tampered_replay_buffer_file_is_refused_before_it_is_used(tmp_path: Path, case: str) -> None:
    from lit_sb3_core.errors import ConfigurationError
    from lit_sb3_core.sdk import ReplayBuffer

    header, arrays, said = BUFFER_CASES[case]
    genuine = _buffer_file(tmp_path)
    tampered = _rewrite_npz(genuine, tmp_path / "tampered.npz", header, arrays)
    with pytest.raises(ConfigurationError, match=re.escape(said)):
        ReplayBuffer.load(tampered)
    assert ReplayBuffer.load(genuine).size() > 0  # the genuine file still loads


def test_an_array_the_buffer_does_not_store_is_never_read(tmp_path: Path) -> None:
    from lit_sb3_core.sdk import ReplayBuffer

    genuine = _buffer_file(tmp_path)
    extra = _rewrite_npz(genuine, tmp_path / "extra.npz", None, lambda c: {**c, "payload": np.zeros(3)})
    loaded, expected = ReplayBuffer.load(extra), ReplayBuffer.load(genuine)
    assert not hasattr(loaded, "payload") and loaded.size() == expected.size()
    assert np.array_equal(loaded.flat_actions, expected.flat_actions)
