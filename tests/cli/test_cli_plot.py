"""``lit-sb3 plot``: learning curves from real TensorBoard event files and CSV logs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

import lit_sb3_core
from lit_sb3_core.cli.main import main
from lit_sb3_core.cli.plot import aggregate, find_runs, group_label, read_curve

METRIC = "rollout/ep_rew_mean"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def summary_row(out: str, label: str) -> list[str]:
    """The summary line of group ``label``: label, runs, last mean, ±, std, steps."""
    return next(line.split() for line in out.splitlines() if line.split()[:1] == [label])


def write_tensorboard(root: Path, version: str, offset: float, metric: str = METRIC) -> None:
    logger = TensorBoardLogger(save_dir=str(root), name="lightning_logs", version=version)
    for step in range(0, 1001, 100):
        logger.log_metrics({metric: step / 10 + offset}, step=step)
    logger.finalize("success")


def test_groups_runs_by_name_and_draws_mean_and_std(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n, offset in ((1, -1.0), (2, 1.0)):  # two seeds of one setting: mean = step / 10, std = 1
        write_tensorboard(tmp_path, f"ppo_CartPole-v1_{n}", offset)
    write_tensorboard(tmp_path, "a2c_CartPole-v1_1", 50.0)
    output = tmp_path / "out" / "curve.png"
    assert main(["plot", str(tmp_path / "lightning_logs"), "-o", str(output)]) == 0
    assert output.read_bytes()[:8] == PNG_MAGIC and output.stat().st_size > 20_000
    out = capsys.readouterr().out
    assert summary_row(out, "ppo_CartPole-v1") == ["ppo_CartPole-v1", "2", "100.00", "±", "1.00", "1000"]
    assert summary_row(out, "a2c_CartPole-v1") == ["a2c_CartPole-v1", "1", "150.00", "±", "0.00", "1000"]
    assert "3 run(s) in 2 group(s)" in out

    runs = find_runs(tmp_path)
    curves = [
        read_curve(run, METRIC, group_label(run)) for run in runs if group_label(run) == "ppo_CartPole-v1"
    ]
    steps, mean, std = aggregate([c for c in curves if c is not None])
    np.testing.assert_allclose(mean, steps / 10)
    np.testing.assert_allclose(std, 1.0)
    assert steps[0] == 0 and steps[-1] == 1000  # x-axis: environment steps as logged


def test_reads_csv_logs_and_groups_by_argument(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for version, offset in ((0, 0.0), (1, 4.0)):
        logger = CSVLogger(save_dir=str(tmp_path / "sac"), name="pendulum", version=version)
        for step in range(0, 501, 50):
            logger.log_metrics({"val/mean_reward": -step + offset}, step=step)
        logger.save()
    assert group_label(tmp_path / "sac" / "pendulum" / "version_0") == "pendulum"
    output = tmp_path / "eval.svg"
    code = main(
        [
            "plot",
            str(tmp_path / "sac"),
            "--group-by",
            "arg",
            "--metric",
            "val/mean_reward",
            "-o",
            str(output),
            "--smooth",
            "3",
        ]
    )
    assert code == 0
    assert output.read_text().lstrip().startswith("<?xml")
    assert summary_row(capsys.readouterr().out, "sac") == ["sac", "2", "-498.00", "±", "2.00", "500"]


def test_plots_a_real_training_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.set_num_threads(1)
    for seed in (0, 1):
        model = lit_sb3_core.make_algo("ppo", n_steps=64, batch_size=64, seed=seed)
        trainer = lit_sb3_core.RLTrainer(
            max_steps=1024, run_name="ppo_cartpole", default_root_dir=str(tmp_path), enable_progress_bar=False,
            enable_checkpointing=False,
        )  # fmt: skip
        trainer.fit(model, datamodule=lit_sb3_core.RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    output = tmp_path / "curve.png"
    assert main(["plot", str(tmp_path), "-o", str(output), "--title", "PPO CartPole"]) == 0
    assert output.read_bytes()[:8] == PNG_MAGIC
    assert summary_row(capsys.readouterr().out, "ppo_cartpole")[:2] == ["ppo_cartpole", "2"]


def test_bad_input_names_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plot", str(tmp_path / "missing")]) == 2
    assert "No such directory" in capsys.readouterr().err
    assert main(["plot", str(tmp_path)]) == 2
    assert "No logs below" in capsys.readouterr().err
    write_tensorboard(tmp_path, "run_1", 0.0, metric="train/loss")
    assert main(["plot", str(tmp_path), "-o", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err
    assert "No run logged 'rollout/ep_rew_mean'. Logged scalars: train/loss. Pick one with --metric." in err
