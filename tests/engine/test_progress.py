"""The progress bar counts environment steps while training and episodes while evaluating."""

from __future__ import annotations

import re

import pytest
import torch

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer


@pytest.fixture(autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def test_test_and_validate_bars_count_episodes(capsys: pytest.CaptureFixture[str]) -> None:
    model = PPO("MlpPolicy", env="CartPole-v1", n_steps=32, seed=0)
    trainer = RLTrainer(max_steps=64, enable_progress_bar=True, logger=False, enable_checkpointing=False)
    trainer.test(model, env="CartPole-v1", n_eval_episodes=3, verbose=False)
    trainer.validate(model, env="CartPole-v1", n_eval_episodes=2, verbose=False)
    out = capsys.readouterr()
    text = out.out + out.err
    assert re.search(r"Evaluating: 3/3 episodes, mean reward \d+\.\d", text), text
    assert re.search(r"Evaluating: 2/2 episodes, mean reward \d+\.\d", text), text
    assert "DataLoader" not in text


def test_fit_bar_counts_steps_and_periodic_evaluations_count_episodes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    model = PPO("MlpPolicy", n_steps=64, seed=0)
    datamodule = RLEnvDataModule(train_env="CartPole-v1", val_env="CartPole-v1", seed=0)
    trainer = RLTrainer(
        max_steps=256,
        eval_every_n_steps=128,
        n_eval_episodes=2,
        enable_progress_bar=True,
        logger=False,
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=datamodule)
    out = capsys.readouterr()
    text = out.out + out.err
    assert re.search(r"Training.*256/256", text), text
    assert re.search(r"Evaluating: 2/2 episodes, mean reward \d+\.\d", text), text
    assert "DataLoader" not in text
