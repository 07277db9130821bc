"""``lit-sb3 tune``: Optuna search with intermediate evaluations, pruning and per-family search spaces."""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from typing import Any

import optuna
import pytest
import torch
import yaml

import lit_sb3_core
from lit_sb3_core.cli.common import CliError
from lit_sb3_core.cli.main import main
from lit_sb3_core.cli.tune import _objective, sample_hyperparameters, search_space_family


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)  # `fit` without a logger saves its config.yaml in the working directory


def test_tune_reports_evaluations_and_prints_the_best(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage = f"sqlite:///{tmp_path / 'study.db'}"
    best = tmp_path / "best.yaml"
    code = main(
        [
            "tune", "--algo", "ppo", "--env", "CartPole-v1", "--trials", "3", "--steps", "512", "--evals", "2",
            "--eval-episodes", "2", "--hp", "n_steps=64", "n_epochs=2", "--storage", storage,
            "--save-config", str(best),
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "Finished 3 trials" in out and "Best hyperparameters:" in out and "n_steps: 64" in out
    assert "lit-sb3 fit --model ppo --data.train_env CartPole-v1" in out

    study = optuna.load_study(study_name="ppo_CartPole-v1", storage=storage)
    for trial in study.trials:
        assert trial.params.keys() >= {"learning_rate", "gamma", "clip_range"}  # PPO's space was searched
        assert "n_steps" not in trial.params  # fixed with --hp, so not searched
        if trial.state == optuna.trial.TrialState.COMPLETE:
            assert sorted(trial.intermediate_values) == [0, 1]  # one report per evaluation
            assert trial.value == trial.intermediate_values[1]
    config = yaml.safe_load(best.read_text())
    assert config["model"]["init_args"]["n_steps"] == 64
    assert config["data"]["train_env"] == "CartPole-v1"
    # The saved config trains as it is.
    assert main(["fit", "--config", str(best), "--trainer.max_steps", "64", "--trainer.logger", "false",
                 "--trainer.enable_checkpointing", "false", "--trainer.enable_progress_bar", "false"]) == 0  # fmt: skip


def test_a_trial_the_pruner_rejects_stops_early() -> None:
    study = optuna.create_study(direction="maximize", pruner=optuna.pruners.ThresholdPruner(lower=1e9))
    args = argparse.Namespace(env="CartPole-v1", steps=4096, evals=4, eval_episodes=2, n_envs=1, seed=0)
    trial = study.ask()
    with pytest.raises(optuna.TrialPruned):
        _objective(trial, lit_sb3_core.get_algo_class("ppo"), args, {"n_steps": 64, "n_epochs": 1})
    study.tell(trial, state=optuna.trial.TrialState.PRUNED)
    frozen = study.trials[0]
    assert list(frozen.intermediate_values) == [0]  # pruned after the first of four evaluations


class OffPolicyLike:
    """Stands for any off-policy algorithm: the family is read from the constructor's arguments."""

    def __init__(self, learning_rate: float = 1e-3, buffer_size: int = 100, batch_size: int = 32, tau: float = 0.005,
                 train_freq: int = 1, gradient_steps: int = 1, gamma: float = 0.99,
                 policy_kwargs: dict[str, Any] | None = None) -> None:  # fmt: skip
        pass


def test_search_spaces_follow_the_family_and_the_constructor() -> None:
    ppo = lit_sb3_core.get_algo_class("ppo")
    assert search_space_family(ppo) == "on-policy"
    assert search_space_family(OffPolicyLike) == "off-policy"
    with pytest.raises(CliError, match="no default search space for int"):
        search_space_family(int)

    studies = {
        cls: optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
        for cls in (ppo, OffPolicyLike)
    }
    for cls, study in studies.items():  # one study per algorithm, as `lit-sb3 tune` runs them
        accepted = set(inspect.signature(cls.__init__).parameters)
        for _ in range(5):
            sampled = sample_hyperparameters(study.ask(), cls, n_envs=1, fixed={"gamma": 0.9})
            assert set(sampled) <= accepted and "gamma" not in sampled
            cls(**sampled)
    off = sample_hyperparameters(studies[OffPolicyLike].ask(), OffPolicyLike, n_envs=1, fixed={})
    assert off["gradient_steps"] == off["train_freq"] and "buffer_size" in off and "n_epochs" not in off
    on = sample_hyperparameters(studies[ppo].ask(), ppo, n_envs=2, fixed={"n_steps": 8})
    assert on["batch_size"] <= 16  # never larger than the rollout


def test_bad_input_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tune", "--algo", "ppp", "--env", "CartPole-v1"]) == 2
    assert "Unknown algorithm 'ppp'. Did you mean 'ppo'?" in capsys.readouterr().err
    assert main(["tune", "--algo", "ppo", "--env", "CartPol-v1"]) == 2
    assert "Unknown environment id 'CartPol-v1'" in capsys.readouterr().err
    assert main(["tune", "--algo", "ppo", "--env", "CartPole-v1", "--trials", "0"]) == 2
    assert "--trials must be a positive integer" in capsys.readouterr().err
