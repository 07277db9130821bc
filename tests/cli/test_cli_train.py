"""``lit-sb3 train``, ``enjoy`` and ``record-video`` with rl-zoo3's flags and log folder layout, end to end."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from lit_sb3 import PPO
from lit_sb3_core.cli.main import main
from lit_sb3_core.cli.zoo_layout import parse_value


@pytest.fixture(autouse=True)
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPLAY", raising=False)
    torch.set_num_threads(1)


def test_zoo_flags_layout_continue_and_enjoy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["train", "--algo", "ppo", "--env", "CartPole-v1", "-n", "512", "--eval-freq", "256",
            "--eval-episodes", "2", "--save-freq", "256", "--hyperparams", "n_envs:2", "batch_size:64",
            "learning_rate:0.001", "policy_kwargs:dict(net_arch=[32], activation_fn=nn.ReLU)",
            "-f", "logs", "--seed", "3"]  # fmt: skip
    assert main(args) == 0  # batch_size: the tuned 256 is more than 2 envs' rollout of 2 * 32 steps
    out = capsys.readouterr().out
    assert "Training PPO (tuned for CartPole-v1)" in out and "with 2 env(s)" in out
    assert "512/512" in out  # the fit bar counts environment steps
    assert re.search(r"Evaluating: 2/2 episodes, mean reward \d+\.\d", out)
    run = tmp_path / "logs" / "ppo" / "CartPole-v1_1"
    names = {p.name for p in run.iterdir()}
    assert {"CartPole-v1.zip", "best_model.zip", "evaluations.npz", "CartPole-v1", "hparams.yaml"} <= names
    assert {"rl_model_256_steps.zip", "rl_model_512_steps.zip"} <= names and list(run.glob("events.out.*"))
    evaluations = np.load(run / "evaluations.npz")
    assert evaluations["timesteps"].tolist() == [256, 512] and evaluations["results"].shape == (2, 2)
    config = yaml.safe_load((run / "CartPole-v1" / "config.yml").read_text())
    assert config["learning_rate"] == 0.001 and config["n_envs"] == 2 and config["n_timesteps"] == 512
    assert config["batch_size"] == 64
    assert config["policy_kwargs"] == {"net_arch": [32], "activation_fn": "torch.nn:ReLU"}
    assert yaml.safe_load((run / "CartPole-v1" / "args.yml").read_text())["seed"] == 3
    model = PPO.load(run / "CartPole-v1.zip")
    assert model.num_timesteps == 512 and model.hparams["learning_rate"] == 0.001

    # -i continues the model in a new run folder; counters go on
    agent = str(run / "CartPole-v1.zip")
    assert main(["train", "--algo", "ppo", "--env", "CartPole-v1", "-i", agent, "-n", "128", "--eval-freq", "-1",
                 "--eval-episodes", "1", "-f", "logs", "--n-envs", "2"]) == 0  # fmt: skip
    assert "Continuing" in capsys.readouterr().out
    assert PPO.load(tmp_path / "logs/ppo/CartPole-v1_2/CartPole-v1.zip").num_timesteps == 640

    # enjoy finds the latest run, the best model, a checkpoint
    assert (
        main(["enjoy", "--algo", "ppo", "--env", "CartPole-v1", "-f", "logs", "--no-render", "-n", "50"]) == 0
    )
    assert "Loading logs/ppo/CartPole-v1_2/CartPole-v1.zip" in capsys.readouterr().out
    for flags, expected in [
        (["--exp-id", "1", "--load-best"], "CartPole-v1_1/best_model.zip"),
        (["--exp-id", "1", "--load-checkpoint", "256"], "CartPole-v1_1/rl_model_256_steps.zip"),
        (["--exp-id", "1", "--load-last-checkpoint"], "CartPole-v1_1/rl_model_512_steps.zip"),
    ]:
        assert (
            main(["enjoy", "--algo", "ppo", "--env", "CartPole-v1", "--no-render", "--episodes", "1", *flags])
            == 0
        )
        out = capsys.readouterr().out
        assert expected in out and "episode 1: return" in out
    assert (
        main(["enjoy", "--algo", "ppo", "--env", "CartPole-v1", "--exp-id", "1", "--load-checkpoint", "7"])
        == 2
    )
    assert "checkpoints there: 256, 512" in capsys.readouterr().err

    if importlib.util.find_spec("moviepy") is not None:
        assert (
            main(["record-video", "--algo", "ppo", "--env", "CartPole-v1", "-n", "60", "-o", "videos"]) == 0
        )
        (video,) = (tmp_path / "videos").glob("*.mp4")
        assert video.name == "final-model-ppo-CartPole-v1-step-0-to-step-60.mp4"
        assert video.read_bytes()[4:8] == b"ftyp"


def test_tracking_with_wandb_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("wandb", reason="pip install 'lit-sb3-core[loggers]'")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    assert main(["train", "--algo", "a2c", "--env", "CartPole-v1", "-n", "64", "--eval-freq", "-1",
                 "--eval-episodes", "1", "--track", "--wandb-project-name", "zoo", "-tags", "ci"]) == 0  # fmt: skip
    import wandb

    wandb.finish()
    (run_file,) = (tmp_path / "logs" / "a2c" / "CartPole-v1_1").glob("wandb/offline-run-*/run-*.wandb")
    assert run_file.stat().st_size > 0


def test_overrides_and_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["train", "--steps", "64", "--no-tuned", "--n-envs", "2", "--hp", "n_steps=32", "batch_size=16",
                 "--eval-episodes", "1", "--eval-freq", "0"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "(defaults)" in out and "batch_size=16" in out


def test_compile_is_auto_unless_chosen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """rl-zoo3's budgets are the runs' real lengths: lit-sb3 train compiles where it pays back (auto)."""
    short = ["train", "--steps", "64", "--no-tuned", "--hp", "n_steps=32", "batch_size=16", "--eval-freq", "0",
             "--eval-episodes", "1"]  # fmt: skip
    assert main([*short, "--save", "auto.zip"]) == 0
    assert f"Compile: auto, the update compiles for budgets from {PPO.compile_pays_after:,} steps" in (
        capsys.readouterr().out
    )
    assert PPO.load(tmp_path / "auto.zip").compile_choice == "auto"
    assert main([*short, "--compile", "off", "--save", "off.zip"]) == 0
    assert PPO.load(tmp_path / "off.zip").compile_choice is False
    assert "Compile:" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--algo", "ppp"], "'ppo'"),
        (["--algo", "ars", "--compile", "on"], "--compile on: ARS has no compiled update"),
        (["--hyperparams", "n_stepz:8"], "--hyperparams names n_stepz, which PPO does not take"),
        (["--hyperparams", "learning_rate"], "--hyperparams expects KEY:VALUE pairs"),
        (
            ["--hyperparams", "policy_kwargs:dict(net_arch=__import__('os'))"],
            "values are parsed, never executed",
        ),
        (["-i", "nothere.zip"], "-i/--trained-agent must be a model .zip file"),
    ],
)
def test_bad_input_is_one_clear_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["train", "-n", "16", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("flag", "instead"),
    [
        ("-optimize", "lit-sb3 tune"),
        ("--n-trials", "lit-sb3 tune"),
        ("--conf-file", "lit-sb3 fit --config FILE"),
        ("--gym-packages", "--env my_package:MyEnv-v0"),
    ],
)
def test_zoo_flags_without_a_meaning_here_name_the_lit_sb3_way(flag: str, instead: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "lit_sb3_core", "train", flag, "x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert f"{flag} is an rl-zoo3 option" in result.stderr and instead in result.stderr


def test_values_are_parsed_never_executed() -> None:
    assert (
        parse_value("0.001") == 0.001
        and parse_value("True") is True
        and parse_value("lin_0.001") == "lin_0.001"
    )
    assert parse_value("MlpPolicy") == "MlpPolicy" and parse_value("[64, 64]") == [64, 64]
    assert parse_value("dict(pi=[64], vf=[64])") == {"pi": [64], "vf": [64]}
    assert parse_value("{'a': 1, 'b': -2.5}") == {"a": 1, "b": -2.5}
    assert parse_value("th.nn.Tanh") == "torch.nn:Tanh"
