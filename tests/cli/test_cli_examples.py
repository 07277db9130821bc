"""Every script in examples/ runs as a newcomer would run it (with a small budget)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run_example(name: str, tmp_path: Path, child_env: dict[str, str], *args: str) -> str:
    env = {**child_env, "OMP_NUM_THREADS": "1"}
    env.pop("DISPLAY", None)
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--out", str(tmp_path), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    return result.stdout


def test_every_example_is_tested() -> None:
    tested = {
        "ppo_cartpole.py",
        "custom_policy.py",
        "checkpoint_resume.py",
        "ddp_cartpole.py",
        "sac_pendulum.py",
        "onnx_policy.py",  # run by tests/engine/test_export.py, in a process without lit-sb3
    }
    assert {path.name for path in EXAMPLES.glob("*.py")} <= tested


def test_ppo_cartpole(tmp_path: Path, child_env: dict[str, str]) -> None:
    out = run_example("ppo_cartpole.py", tmp_path, child_env, "--steps", "1024")
    assert re.search(r"test/mean_reward after 1024 steps: [\d.]+", out), out
    assert re.search(r"reloaded from .*ppo_cartpole.zip: mean_reward=[\d.]+ \+/- [\d.]+", out), out
    assert list((tmp_path / "lightning_logs" / "ppo_CartPole-v1_1").glob("events.out.tfevents.*"))


def test_custom_policy(tmp_path: Path, child_env: dict[str, str]) -> None:
    out = run_example("custom_policy.py", tmp_path, child_env, "--steps", "1024")
    assert "(0): Linear(in_features=4, out_features=32, bias=True)\n      (1): ReLU()" in out
    assert "Linear(in_features=128, out_features=1, bias=True)" in out
    assert (
        "saved policy_kwargs: {'net_arch': {'pi': [32, 32], 'vf': [128, 128]}, 'activation_fn': 'relu'" in out
    )


def test_checkpoint_resume(tmp_path: Path, child_env: dict[str, str]) -> None:
    out = run_example("checkpoint_resume.py", tmp_path, child_env, "--steps", "2048")
    assert "first run stopped at 1024 environment steps" in out
    assert "resumed run finished at 2048 environment steps (budget 2048)" in out
    assert (tmp_path / "checkpoints" / "last.ckpt").is_file()


def test_ddp_cartpole(tmp_path: Path, child_env: dict[str, str]) -> None:
    out = run_example("ddp_cartpole.py", tmp_path, child_env, "--steps", "2048")
    assert re.search(r"2 processes, 2048 steps: mean_reward=[\d.]+", out), out


def test_sac_pendulum(tmp_path: Path, child_env: dict[str, str]) -> None:
    out = run_example("sac_pendulum.py", tmp_path, child_env, "--steps", "400")
    assert re.search(r"after 400 steps: mean_reward=-[\d.]+ \+/- [\d.]+", out), out
    assert re.search(r"best model \(at \d+ steps\): evaluation mean -[\d.]+", out), out
    assert (tmp_path / "sac_best" / "best_model.zip").is_file()
