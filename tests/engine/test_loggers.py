"""Lightning's loggers record SB3's metric names against environment steps, and the hyperparameters once per
run: TensorBoard (the default), CSV, MLflow (local file store) and Weights & Biases (offline). Each test trains,
evaluates, and reads the records back from what the logger wrote to disk."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer

N_STEPS, BUDGET = 64, 256
STEPS = [64, 128, 192, 256]  # one record per iteration, x = environment steps
SB3_NAMES = {"rollout/ep_rew_mean", "rollout/ep_len_mean", "time/fps", "train/loss", "train/approx_kl"}


def train_and_test(logger: Any, tmp_path: Path) -> PPO:
    torch.set_num_threads(1)
    model = PPO("MlpPolicy", n_steps=N_STEPS, seed=0)
    trainer = RLTrainer(
        max_steps=BUDGET, logger=logger, default_root_dir=str(tmp_path), enable_checkpointing=False
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", seed=0))
    trainer.test(model, env="CartPole-v1", n_eval_episodes=2, verbose=False)
    return model


def test_tensorboard_is_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lightning.pytorch.loggers import TensorBoardLogger
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    calls = []
    log_hyperparams = TensorBoardLogger.log_hyperparams
    monkeypatch.setattr(
        TensorBoardLogger,
        "log_hyperparams",
        lambda self, *a, **k: calls.append(a) or log_hyperparams(self, *a, **k),
    )
    train_and_test(None, tmp_path)
    run = tmp_path / "lightning_logs" / "run_1"
    scalars: dict[str, list[int]] = {}
    for events in sorted(run.glob("events.out.tfevents.*")):  # fit and test each open a file
        accumulator = EventAccumulator(str(events))
        accumulator.Reload()
        for tag in accumulator.Tags()["scalars"]:
            scalars.setdefault(tag, []).extend(event.step for event in accumulator.Scalars(tag))
    assert SB3_NAMES <= set(scalars)
    assert scalars["rollout/ep_rew_mean"] == STEPS and scalars["train/loss"] == STEPS
    assert scalars["test/mean_reward"] == [BUDGET]
    assert len(calls) == 1  # fit and test on one trainer: one record of the hyperparameters
    assert yaml.safe_load((run / "hparams.yaml").read_text())["n_steps"] == N_STEPS


def test_csv(tmp_path: Path) -> None:
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(save_dir=str(tmp_path), name="csv")
    train_and_test(logger, tmp_path)
    with open(Path(logger.log_dir) / "metrics.csv") as file:
        rows = list(csv.DictReader(file))
    assert SB3_NAMES <= set(rows[0])
    steps = [int(row["step"]) for row in rows if row["rollout/ep_rew_mean"]]
    assert steps == STEPS
    assert [int(row["step"]) for row in rows if row["test/mean_reward"]] == [BUDGET]
    assert yaml.safe_load((Path(logger.log_dir) / "hparams.yaml").read_text())["n_steps"] == N_STEPS


def test_mlflow_local_file_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mlflow", reason="pip install 'lit-sb3-core[loggers]'")
    from lightning.pytorch.loggers import MLFlowLogger
    from mlflow.tracking import MlflowClient

    # MLflow 3 keeps its file store only on request (a database backend needs SQLAlchemy).
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    logger = MLFlowLogger(experiment_name="lit-sb3", tracking_uri=uri)
    train_and_test(logger, tmp_path)
    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(logger.run_id)
    assert SB3_NAMES <= set(run.data.metrics)
    history = client.get_metric_history(logger.run_id, "rollout/ep_rew_mean")
    assert [m.step for m in history] == STEPS
    assert [m.step for m in client.get_metric_history(logger.run_id, "test/mean_reward")] == [BUDGET]
    assert run.data.params["n_steps"] == str(N_STEPS) and run.data.params["gamma"] == "0.99"


def wandb_records(path: Path) -> list[Any]:
    """The records of an offline W&B run file (``run-<id>.wandb``: LevelDB's log format of protobufs)."""
    from wandb.proto import wandb_internal_pb2

    data, records, chunks = path.read_bytes(), [], []
    assert data[:4] == b":W&B"
    position, block = 7, 32768
    while position + 7 <= len(data):
        if block - position % block < 7:  # a block's tail too short for a header is padding
            position += block - position % block
            continue
        length, kind = int.from_bytes(data[position + 4 : position + 6], "little"), data[position + 6]
        chunks.append(data[position + 7 : position + 7 + length])
        position += 7 + length
        if kind in (1, 4):  # a full record, or the last piece of one
            record = wandb_internal_pb2.Record()
            record.ParseFromString(b"".join(chunks))
            records.append(record)
            chunks = []
    return records


def finished_wandb_records(path: Path, timeout: float = 60.0) -> list[Any]:
    """The run file's records once W&B's service has written them all (its ``exit`` record comes last).

    ``wandb.finish()`` can return before the service process has flushed the file: on a loaded machine the
    history rows were not there yet when read (CI, 2026-12-03)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            records = wandb_records(path)
        except Exception:  # a record cut short by the writer: read again
            if time.monotonic() > deadline:
                raise
            records = []
        kinds = [record.WhichOneof("record_type") for record in records]
        if "exit" in kinds or time.monotonic() > deadline:
            assert "exit" in kinds, f"{path} has no exit record after {timeout:.0f} s: {kinds}"
            return records
        time.sleep(0.2)


def test_wandb_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wandb = pytest.importorskip("wandb", reason="pip install 'lit-sb3-core[loggers]'")
    import json

    from lightning.pytorch.loggers import WandbLogger

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    wandb.finish()  # a run left open by an earlier test would be reused, and write elsewhere
    logger = WandbLogger(project="lit-sb3", save_dir=str(tmp_path), offline=True)
    try:
        train_and_test(logger, tmp_path)
    finally:
        wandb.finish()
    (run_file,) = tmp_path.glob("wandb/offline-run-*/run-*.wandb")
    records = finished_wandb_records(run_file)
    history = [
        {(item.key or "/".join(item.nested_key)): json.loads(item.value_json) for item in record.history.item}
        for record in records
        if record.WhichOneof("record_type") == "history"
    ]
    training = [row for row in history if "rollout/ep_rew_mean" in row]
    assert SB3_NAMES <= set(training[0])
    # Lightning's WandbLogger puts the step it is given beside the metrics: environment steps.
    assert [row["trainer/global_step"] for row in training] == STEPS
    assert [row["trainer/global_step"] for row in history if "test/mean_reward" in row] == [BUDGET]
    configs = [record.config for record in records if record.WhichOneof("record_type") == "config"]
    assert len(configs) == 1
    assert json.loads({u.key: u.value_json for u in configs[0].update}["n_steps"]) == N_STEPS
