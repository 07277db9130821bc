"""Exported policies (ONNX, TorchScript, torch.export) pick the actions ``predict(obs, deterministic=True)``
picks, for every first-party algorithm and every kind of space, on observations the environments returned;
and an exported ONNX file runs whole episodes in a process that has no lit-sb3 (only onnxruntime, numpy and
gymnasium)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import onnx
import onnxruntime
import pytest
import torch
from gymnasium import spaces

from lit_sb3 import RLEnvDataModule, make_algo
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.testing.envs import SpaceTestEnv

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "examples" / "onnx_policy.py"
FORMATS = {"onnx": ".onnx", "torchscript": ".pt", "torch-export": ".pt2"}
# Loading TorchScript is what the test is for; torch 2.10+ calls it deprecated.
pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning")

ON_POLICY = {"n_steps": 32, "batch_size": 32, "n_epochs": 2}
OFF_POLICY = {
    "learning_starts": 32,
    "buffer_size": 1_000,
    "batch_size": 32,
    "train_freq": 8,
    "gradient_steps": 2,
}
SMALL_NET = {"net_arch": [32, 32]}
MULTI_INPUT = {**ON_POLICY, "policy": "MultiInputPolicy"}


def space_env(observation_space: spaces.Space, action_space: spaces.Space):
    def make() -> SpaceTestEnv:
        return SpaceTestEnv(observation_space, action_space)

    return make


IMAGE = spaces.Box(0, 255, (36, 36, 1), np.uint8)  # channel-last uint8: transposed and scaled by 1/255
DICT = spaces.Dict({"position": spaces.Box(-1.0, 1.0, (2,), np.float32), "mode": spaces.Discrete(3)})
OBS = spaces.Box(-1.0, 1.0, (3,), np.float32)
OFFSET_BOX = spaces.Box(np.array([0.0, -3.0], np.float32), np.array([4.0, 1.0], np.float32))


@dataclass
class Case:
    algo: str
    env: Any
    kwargs: dict[str, Any] = field(default_factory=dict)
    normalize: bool | str = False
    steps: int = 128

    @property
    def id(self) -> str:
        env = self.env if isinstance(self.env, str) else ""
        parts = [self.algo, env, self.label, "normalized" if self.normalize else ""]
        return "-".join(part for part in parts if part)

    label: str = ""


CASES = [
    # on-policy actor-critics: every action space, Dict / image / discrete observations, normalization, gSDE
    Case("ppo", "CartPole-v1", ON_POLICY),
    Case("ppo", "Pendulum-v1", ON_POLICY, normalize=True),
    Case("ppo", "Pendulum-v1", {**ON_POLICY, "use_sde": True, "policy_kwargs": {"squash_output": True}}, label="gsde"),
    Case("ppo", space_env(DICT, spaces.MultiDiscrete([3, 2])), MULTI_INPUT, label="dict-multidiscrete"),
    Case("ppo", space_env(spaces.MultiDiscrete([3, 2]), spaces.MultiBinary(3)), ON_POLICY, label="md-binary"),
    Case("ppo", space_env(IMAGE, spaces.Discrete(3, start=1)), {**ON_POLICY, "policy": "CnnPolicy"}, label="image"),
    Case("ppo", space_env(spaces.Discrete(5), OFFSET_BOX), ON_POLICY, label="discrete-box"),
    Case("a2c", "CartPole-v1", {"n_steps": 8}),
    Case("a2c", "Pendulum-v1", {"n_steps": 8}, normalize=True),
    Case("trpo", "CartPole-v1", {"n_steps": 64, "batch_size": 32}),
    Case("trpo", "Pendulum-v1", {"n_steps": 64, "batch_size": 32}),
    Case("recurrent_ppo", "CartPole-v1", {**ON_POLICY, "policy_kwargs": {"lstm_hidden_size": 16}}),
    Case("recurrent_ppo", "Pendulum-v1", {**ON_POLICY, "policy_kwargs": {"lstm_hidden_size": 16}}, normalize=True),
    Case("maskable_ppo", space_env(OBS, spaces.Discrete(4)), ON_POLICY, label="discrete"),
    Case("maskable_ppo", space_env(DICT, spaces.MultiDiscrete([3, 2])), MULTI_INPUT, label="dict-multidiscrete"),
    Case("ars", "CartPole-v1", {"n_delta": 2}),
    Case("ars", "Pendulum-v1", {"n_delta": 2, "policy": "LinearPolicy"}, normalize="observation"),
    Case("dqn", "CartPole-v1", {**OFF_POLICY, "policy_kwargs": SMALL_NET}),
    Case("dqn", space_env(IMAGE, spaces.Discrete(3)), {**OFF_POLICY, "policy": "CnnPolicy"}, label="image"),
    Case("dqn", space_env(DICT, spaces.Discrete(3)), {**OFF_POLICY, "policy": "MultiInputPolicy"}, label="dict"),
    Case("qrdqn", "CartPole-v1", {**OFF_POLICY, "policy_kwargs": {**SMALL_NET, "n_quantiles": 5}}),
    Case("sac", "Pendulum-v1", {**OFF_POLICY, "policy_kwargs": SMALL_NET}),
    Case("sac", space_env(DICT, OFFSET_BOX), {**OFF_POLICY, "policy": "MultiInputPolicy"}, label="dict-box"),
    Case("sac", "Pendulum-v1", {**OFF_POLICY, "use_sde": True, "policy_kwargs": SMALL_NET}, label="gsde"),
    Case("td3", "Pendulum-v1", {**OFF_POLICY, "policy_kwargs": SMALL_NET}),
    Case("td3", space_env(IMAGE, OFFSET_BOX), {**OFF_POLICY, "policy": "CnnPolicy"}, label="image-box"),
    Case("ddpg", "Pendulum-v1", {**OFF_POLICY, "policy_kwargs": SMALL_NET}),
    Case("tqc", "Pendulum-v1", {**OFF_POLICY, "policy_kwargs": {**SMALL_NET, "n_quantiles": 5}}),
    Case("crossq", "Pendulum-v1", {**OFF_POLICY, "policy_kwargs": SMALL_NET}),
    Case("crossq", space_env(spaces.Discrete(5), OFFSET_BOX), {**OFF_POLICY, "policy_kwargs": SMALL_NET}, label="disc"),
]  # fmt: skip


_TRAINED: dict[str, Any] = {}


def train(case: Case) -> Any:
    """A briefly trained model (weights and normalization statistics moved); trained once per case."""
    if case.id not in _TRAINED:
        torch.set_num_threads(1)
        datamodule = RLEnvDataModule(train_env=case.env, normalize=case.normalize, seed=0)
        model = make_algo(case.algo, env=datamodule, seed=0, **case.kwargs)
        _TRAINED[case.id] = model.learn(case.steps)
    return _TRAINED[case.id]


def observations(env_source: Any, n: int = 16, seed: int = 1) -> Any:
    """``n`` observations from an env run with random actions (resets where an episode ends)."""
    env = gym.make(env_source) if isinstance(env_source, str) else env_source()
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    seen = [obs]
    while len(seen) < n:
        obs, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            obs, _ = env.reset()
        seen.append(obs)
    env.close()
    if isinstance(seen[0], dict):
        return {key: np.stack([np.asarray(o[key]) for o in seen]) for key in seen[0]}
    return np.stack([np.asarray(o) for o in seen])


def random_masks(model: Any, n: int, rng: np.random.Generator) -> np.ndarray:
    """Masks that leave at least one choice in every group, as an env would."""
    space = model.action_space
    groups = [int(space.n)] if isinstance(space, spaces.Discrete) else [int(k) for k in space.nvec]
    parts = []
    for size in groups:
        mask = rng.random((n, size)) < 0.5
        mask[np.arange(n), rng.integers(0, size, n)] = True
        parts.append(mask)
    return np.concatenate(parts, axis=1)


def obs_inputs(model: Any, obs: Any) -> list[np.ndarray]:
    if isinstance(model.observation_space, spaces.Dict):
        return [obs[key] for key in model.observation_space.spaces]
    return [obs]


def run_exported(path: Path, format: str, inputs: list[np.ndarray]) -> list[np.ndarray]:
    if format == "onnx":
        session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        return session.run(None, dict(zip(names, inputs)))
    tensors = [torch.as_tensor(np.asarray(x)) for x in inputs]
    module = torch.jit.load(str(path)) if format == "torchscript" else torch.export.load(str(path)).module()
    with torch.no_grad():
        out = module(*tensors)
    return [t.numpy() for t in (out if isinstance(out, tuple) else (out,))]


def assert_same_actions(exported: np.ndarray, expected: np.ndarray) -> None:
    assert exported.dtype == expected.dtype and exported.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(exported, expected, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(exported, expected)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_exported_policy_matches_predict(case: Case, tmp_path: Path) -> None:
    model = train(case)
    obs = observations(case.env)
    n = len(next(iter(obs.values()))) if isinstance(obs, dict) else len(obs)
    for format, suffix in FORMATS.items():
        path = model.export(tmp_path / f"policy{suffix}", format=format)
        if case.algo == "recurrent_ppo":
            check_recurrent(model, path, format, obs, n)
            continue
        inputs = obs_inputs(model, obs)
        kwargs = {}
        if case.algo == "maskable_ppo":
            masks = random_masks(model, n, np.random.default_rng(0))
            inputs.append(masks)
            kwargs["action_masks"] = masks
        expected, _ = model.predict(obs, deterministic=True, **kwargs)
        (actions,) = run_exported(path, format, inputs)
        assert_same_actions(actions, expected)
        assert model.action_space.contains(actions[0])


def check_recurrent(model: Any, path: Path, format: str, obs: np.ndarray, n: int) -> None:
    """Several steps with the state fed back (and one env starting a new episode midway)."""
    layers, size = model.recurrent_policy.lstm_state_shape
    hidden = cell = np.zeros((layers, 4, size), np.float32)
    state = None
    for step in range(4):
        batch = obs[step * 4 : step * 4 + 4]
        starts = np.array([step == 0, False, step == 2, False], np.float32)
        expected, state = model.predict(batch, state=state, episode_start=starts, deterministic=True)
        actions, hidden, cell = run_exported(path, format, [batch, hidden, cell, starts])
        assert_same_actions(actions, expected)
        np.testing.assert_allclose(hidden, state[0], atol=1e-5)
        np.testing.assert_allclose(cell, state[1], atol=1e-5)


def test_every_algorithm_is_covered() -> None:
    from lit_sb3 import list_algos

    assert {case.algo for case in CASES} == set(list_algos()) - {"her"}


def test_onnx_file_describes_itself(tmp_path: Path) -> None:
    model = make_algo("ppo", env="CartPole-v1", seed=0)
    path = model.export(tmp_path / "ppo.onnx")
    meta = json.loads({p.key: p.value for p in onnx.load(str(path)).metadata_props}["lit_sb3_export.json"])
    assert meta["algo"] == "ppo" and meta["action_space"] == {"type": "Discrete", "n": 2, "start": 0}
    assert meta["inputs"] == [{"name": "obs", "shape": ["batch", 4], "dtype": "float32"}]
    assert meta["outputs"] == [{"name": "actions", "shape": ["batch"], "dtype": "int64"}]
    assert not list(tmp_path.glob(".*partial*"))  # written beside the target, then renamed


def test_bad_export_requests_are_explained(tmp_path: Path) -> None:
    model = make_algo("ppo", env="CartPole-v1")
    with pytest.raises(ConfigurationError, match="use one of onnx, torchscript, torch-export"):
        model.export(tmp_path / "x.onnx", format="tflite")
    with pytest.raises(ConfigurationError, match=r"\.pt2"):
        model.export(tmp_path / "x.pt", format="torch-export")
    with pytest.raises(RuntimeError, match="has no policy yet"):
        make_algo("ppo").export(tmp_path / "x.onnx")


# Episodes without lit-sb3 ------------------------------------------------------------------------------
def by_id(case_id: str) -> Case:
    return next(case for case in CASES if case.id == case_id)


EPISODE_CASES = {
    "ppo": by_id("ppo-CartPole-v1"),
    "a2c": by_id("a2c-Pendulum-v1-normalized"),
    "trpo": by_id("trpo-CartPole-v1"),
    "recurrent_ppo": by_id("recurrent_ppo-CartPole-v1"),
    "maskable_ppo": Case(
        "maskable_ppo", "CartPole-v1", {**ON_POLICY, "use_masking": False}
    ),  # masks: all allowed
    "ars": by_id("ars-Pendulum-v1-normalized"),
    "dqn": by_id("dqn-CartPole-v1"),
    "qrdqn": by_id("qrdqn-CartPole-v1"),
    "sac": by_id("sac-Pendulum-v1"),
    "td3": by_id("td3-Pendulum-v1"),
    "ddpg": by_id("ddpg-Pendulum-v1"),
    "tqc": by_id("tqc-Pendulum-v1"),
    "crossq": by_id("crossq-Pendulum-v1"),
}


def test_episodes_run_from_onnx_files_alone(tmp_path: Path) -> None:
    """Every algorithm's ONNX file plays an episode in a process that cannot import lit-sb3 or torch; the
    actions it picked are the ones ``predict`` picks for the same observations."""
    models = {}
    commands = []
    for name, case in EPISODE_CASES.items():
        models[name] = model = train(case)
        model.export(tmp_path / f"{name}.onnx")
        commands.append([str(tmp_path / f"{name}.onnx"), case.env, str(tmp_path / f"{name}.npz")])
    script = (
        "import sys, runpy\n"
        # lit-sb3 and torch are importable in this venv: make sure the runner never uses them.
        "class Refuse:\n"
        "    def find_spec(self, name, *args):\n"
        "        if name.split('.')[0] in ('lit_sb3', 'lit_sb3_core', 'torch') or name.startswith('lit_sb3_'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        f"runner = {str(RUNNER)!r}\n"
        f"for policy, env, record in {commands!r}:\n"
        "    sys.argv = [runner, policy, '--env', env, '--seed', '3', '--record', record]\n"
        "    runpy.run_path(runner, run_name='__main__')\n"
        "print('modules:', sorted(m for m in sys.modules if m.startswith(('lit_sb3', 'torch'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "modules: []" in result.stdout
    for name, case in EPISODE_CASES.items():
        assert f"{name}.onnx on {case.env}: return" in result.stdout
        record = np.load(tmp_path / f"{name}.npz")
        obs, actions = record["observations"], record["actions"]
        assert len(actions) > 5 and len(obs) == len(actions)
        model = models[name]
        if name == "recurrent_ppo":
            state, expected = None, []
            for i, o in enumerate(obs):
                action, state = model.predict(
                    o, state=state, episode_start=np.array([i == 0]), deterministic=True
                )
                expected.append(action)
            expected = np.stack(expected)
        else:
            expected, _ = model.predict(obs, deterministic=True)
        assert_same_actions(actions, expected)
