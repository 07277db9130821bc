"""`lit-sb3 train`, the README's train command, end to end in a subprocess."""

import subprocess
import sys
from pathlib import Path

from lit_sb3 import PPO


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lit_sb3_core", "train", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_train_uses_tuned_settings_evaluates_logs_and_saves(tmp_path: Path) -> None:
    result = run("--steps", "512", "--eval-episodes", "2", "--save", "model.zip", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Training PPO (tuned for CartPole-v1)" in result.stdout
    assert "n_steps=32" in result.stdout and "with 8 env(s)" in result.stdout
    assert "test/mean_reward" in result.stdout
    assert "512/512" in result.stdout  # the progress bar (Lightning draws it on stdout) counts env steps
    model = PPO.load(tmp_path / "model.zip")
    assert model.num_timesteps == 512
    assert list((tmp_path / "runs" / "lightning_logs").glob("ppo_CartPole-v1_1/events.out.tfevents.*"))


def test_overrides_and_defaults(tmp_path: Path) -> None:
    result = run("--steps", "64", "--no-tuned", "--n-envs", "2", "--hp", "n_steps=32", "batch_size=16",
                 "--eval-episodes", "1", cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "(defaults)" in result.stdout and "batch_size=16" in result.stdout


def test_unknown_algorithm_is_a_clear_error(tmp_path: Path) -> None:
    result = run("--algo", "ppp", "--steps", "10", cwd=tmp_path)
    assert result.returncode != 0
    assert "'ppo'" in result.stderr and "Traceback" not in result.stderr
