"""``lit-sb3 evaluate`` and ``lit-sb3 enjoy`` on a real saved model."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import torch

import lit_sb3_core
from lit_sb3_core.cli.main import main


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.set_num_threads(1)
    model = lit_sb3_core.make_algo("ppo", env="CartPole-v1", n_steps=64, batch_size=64, seed=0)
    model.learn(256)
    path = tmp_path_factory.mktemp("models") / "ppo_cartpole.zip"
    model.save(path)
    return path


def test_evaluate_prints_mean_and_std_over_the_episodes(
    model_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(model_file), "--env", "CartPole-v1", "--episodes", "4"]) == 0
    out = capsys.readouterr().out
    match = re.search(r"PPO on CartPole-v1: mean_reward=([\d.]+) \+/- ([\d.]+) over 4 episodes", out)
    assert match, out
    mean, std = float(match.group(1)), float(match.group(2))
    assert 1 <= mean <= 500 and std >= 0
    # The same seed gives the same episodes.
    assert main(["evaluate", str(model_file), "--env", "CartPole-v1", "--episodes", "4"]) == 0
    assert capsys.readouterr().out == out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["evaluate", "{model}", "--env", "Pendulum-v1"],
            "was saved for observations Box(shape=(4,), float32) and actions Discrete(2)",
        ),
        (
            ["evaluate", "{model}", "--env", "CartPol-v1"],
            "Unknown environment id 'CartPol-v1'. Did you mean 'CartPole-v1'",
        ),
        (["evaluate", "missing.zip", "--env", "CartPole-v1"], "No model file at 'missing.zip'"),
        (
            ["evaluate", "run.ckpt", "--env", "CartPole-v1"],
            "is a Lightning checkpoint, not a model file: evaluate it with `lit-sb3 test",
        ),
        (
            ["evaluate", "{model}", "--env", "CartPole-v1", "--env-kwargs", "[1]"],
            "--env-kwargs must be a JSON object",
        ),
        (["enjoy", "missing.zip", "--env", "CartPole-v1", "--video", "v"], "No model file at 'missing.zip'"),
    ],
)
def test_bad_input_is_one_clear_line(
    model_file: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([arg.replace("{model}", str(model_file)) for arg in args]) == 2
    err = capsys.readouterr().err
    assert f"lit-sb3 {args[0]}: error: " in err and message in err
    assert "Traceback" not in err


@pytest.mark.skipif(importlib.util.find_spec("moviepy") is None, reason="moviepy is not installed")
def test_enjoy_records_one_video_per_episode_headless(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    videos = tmp_path / "videos"
    assert (
        main(["enjoy", str(model_file), "--env", "CartPole-v1", "--video", str(videos), "--episodes", "2"])
        == 0
    )
    files = sorted(videos.glob("*.mp4"))
    assert [f.name for f in files] == ["ppo_cartpole-episode-0.mp4", "ppo_cartpole-episode-1.mp4"]
    assert all(f.stat().st_size > 1000 and f.read_bytes()[4:8] == b"ftyp" for f in files)  # real mp4 files
    out = capsys.readouterr().out
    assert "episode 2: return" in out and "Recorded 2 video(s)" in out


def test_enjoy_explains_a_missing_moviepy(
    model_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "moviepy" else real_find_spec(name, *a)
    )
    assert main(["enjoy", str(model_file), "--env", "CartPole-v1", "--video", str(tmp_path)]) == 2
    assert "--video needs moviepy, which is not installed: pip install moviepy" in capsys.readouterr().err


def test_enjoy_without_a_display_points_to_video(
    model_file: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["enjoy", str(model_file), "--env", "CartPole-v1"]) == 2
    assert "no display to open a window on" in capsys.readouterr().err
