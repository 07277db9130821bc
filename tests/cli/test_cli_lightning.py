"""``lit-sb3 fit|validate|test``: LightningCLI with registry names, --zoo, configs and checkpoints."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import torch
import yaml

import lit_sb3_core
from lit_sb3_core.cli.main import main
from lit_sb3_core.errors import ConfigurationError

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_CONFIG = REPO / "examples" / "configs" / "ppo_cartpole.yaml"
QUIET = ["--trainer.enable_progress_bar", "false"]


@pytest.fixture(autouse=True)
def _one_thread(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    torch.set_num_threads(1)
    monkeypatch.chdir(tmp_path)  # anything a command writes by default lands in the test's folder


def fit(*args: str) -> int:
    return main(["fit", *args, *QUIET])


def test_fit_accepts_a_registry_name_and_writes_logs_config_and_checkpoint(tmp_path: Path) -> None:
    code = fit(
        "--model", "ppo", "--data.train_env", "CartPole-v1", "--trainer.max_steps", "256",
        "--model.n_steps", "64", "--trainer.default_root_dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0
    run = tmp_path / "lightning_logs" / "ppo_CartPole-v1_1"  # run named after algorithm and env
    assert list(run.glob("events.out.tfevents.*"))
    assert list((run / "checkpoints").glob("*.ckpt"))
    config = yaml.safe_load((run / "config.yaml").read_text())
    assert config["model"]["class_path"].endswith(".PPO")
    assert config["model"]["init_args"]["n_steps"] == 64
    # The model inherits the run's seed, so the environments are seeded too and the config reproduces it.
    assert config["seed_everything"] == 0
    assert config["model"]["init_args"]["seed"] == 0


def test_zoo_sets_tuned_defaults_that_later_options_override(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["fit", "--model", "ppo", "--zoo", "CartPole-v1", "--model.n_epochs", "3", "--print_config"])
    assert exited.value.code == 0
    config = yaml.safe_load(capsys.readouterr().out)
    tuned = lit_sb3_core.tuned_hyperparameters("ppo", "CartPole-v1")
    assert config["trainer"]["max_steps"] == tuned["trainer"]["max_steps"]
    assert config["data"] == {**config["data"], "train_env": "CartPole-v1", "n_envs": tuned["data"]["n_envs"]}
    assert config["model"]["init_args"]["learning_rate"] == tuned["model"]["learning_rate"]
    assert config["model"]["init_args"]["n_steps"] == tuned["model"]["n_steps"]
    assert config["model"]["init_args"]["n_epochs"] == 3  # the explicit option wins over the tuned value


def test_print_config_reproduces_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(
            [
                "fit",
                "--config",
                str(EXAMPLE_CONFIG),
                "--trainer.max_steps",
                "512",
                "--seed_everything",
                "7",
                "--print_config",
            ]
        )
    printed = tmp_path / "printed.yaml"
    printed.write_text(capsys.readouterr().out)
    assert fit("--config", str(printed), "--trainer.default_root_dir", str(tmp_path / "a")) == 0
    assert fit("--config", str(printed), "--trainer.default_root_dir", str(tmp_path / "b")) == 0
    saved = [
        yaml.safe_load((tmp_path / root / "lightning_logs" / "ppo_CartPole-v1_1" / "config.yaml").read_text())
        for root in ("a", "b")
    ]
    assert saved[0]["seed_everything"] == 7 and saved[0]["model"]["init_args"]["seed"] == 7
    weights = [
        torch.load(
            tmp_path / root / "lightning_logs" / "ppo_CartPole-v1_1" / "checkpoints" / "last.ckpt",
            weights_only=True,
        )["state_dict"]
        for root in ("a", "b")
    ]
    assert weights[0].keys() == weights[1].keys()
    for key in weights[0]:
        torch.testing.assert_close(weights[0][key], weights[1][key])  # same seed, same config: same run


def test_example_config_trains_then_test_and_validate_evaluate_its_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        fit(
            "--config",
            str(EXAMPLE_CONFIG),
            "--trainer.max_steps",
            "512",
            "--trainer.default_root_dir",
            str(tmp_path),
        )
        == 0
    )
    last = tmp_path / "lightning_logs" / "ppo_CartPole-v1_1" / "checkpoints" / "last.ckpt"
    assert last.is_file()
    capsys.readouterr()
    # No --model: the checkpoint names its algorithm.
    assert (
        main(
            [
                "test",
                "--ckpt_path",
                str(last),
                "--env",
                "CartPole-v1",
                "--n_eval_episodes",
                "2",
                "--trainer.logger",
                "false",
            ]
        )
        == 0
    )
    assert "test/mean_reward" in capsys.readouterr().out
    assert (
        main(
            [
                "validate",
                "--ckpt_path",
                str(last),
                "--data.train_env",
                "CartPole-v1",
                "--n_eval_episodes",
                "2",
                "--trainer.logger",
                "false",
            ]
        )
        == 0
    )
    assert "val/mean_reward" in capsys.readouterr().out


def test_every_registered_algorithm_parses_and_its_printed_config_round_trips(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command-line risk is each algorithm's signature: jsonargparse must read it and dump it back."""
    from lit_sb3_core.registry.registry import list_algos

    algos = list_algos()
    assert "ppo" in algos
    for name in algos:
        with pytest.raises(SystemExit):
            main(
                [
                    "fit",
                    "--model",
                    name,
                    "--data.train_env",
                    "CartPole-v1",
                    "--trainer.max_steps",
                    "64",
                    "--print_config",
                ]
            )
        printed = capsys.readouterr().out
        config = yaml.safe_load(printed)
        assert (
            config["model"]["class_path"].rpartition(".")[2] == lit_sb3_core.get_algo_class(name).__name__
        ), name
        path = tmp_path / f"{name}.yaml"
        path.write_text(printed)
        with pytest.raises(SystemExit):
            main(["fit", "--config", str(path), "--print_config"])
        assert yaml.safe_load(capsys.readouterr().out) == config, name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["fit", "--model", "ppp", "--data.train_env", "CartPole-v1", "--trainer.max_steps", "64"],
            "Unknown algorithm 'ppp'. Did you mean 'ppo'?",
        ),
        (
            ["fit", "--model", "ppo", "--data.train_env", "CartPol-v1", "--trainer.max_steps", "64"],
            "Unknown environment id 'CartPol-v1'. Did you mean 'CartPole-v1'",
        ),
        (["fit", "--config", "missing.yaml"], "No config file at 'missing.yaml'"),
        (
            ["fit", "--model", "ppo", "--zoo", "CartPol-v1"],
            "PPO has no tuned hyperparameters for 'CartPol-v1'. Did you mean 'CartPole-v1'?",
        ),
        (["fit", "--zoo", "CartPole-v1"], "--zoo needs the algorithm: add --model NAME"),
        (
            ["test", "--ckpt_path", "missing.ckpt", "--env", "CartPole-v1"],
            "No checkpoint file at 'missing.ckpt'",
        ),
        (
            [
                "fit",
                "--model",
                "ppo",
                "--data.train_env",
                "CartPole-v1",
                "--trainer.max_steps",
                "64",
                "--threads",
                "0",
            ],
            "--threads must be a positive integer, got 0.",
        ),
    ],
)
def test_bad_input_is_one_clear_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*args, *QUIET]) == 2
    err = capsys.readouterr().err
    assert f"lit-sb3 {args[0]}: error: {message}" in err
    assert "Traceback" not in err


def test_a_checkpoint_of_another_algorithm_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = tmp_path / "other.ckpt"
    box = {"type": "Box", "low": -1.0, "high": 1.0, "shape": [4], "dtype": "float32"}
    state = {"algo": "ppo", "num_timesteps": 0, "iterations": 0, "n_updates": 0, "observation_space": box}
    state["action_space"] = {"type": "Discrete", "n": 2, "start": 0}
    torch.save({"state_dict": {}, "hyper_parameters": {}, "lit_sb3": state}, fake)
    code = main(["test", "--ckpt_path", str(fake), "--model", "a2c", "--env", "CartPole-v1"])
    assert code == 2
    assert "holds a 'ppo' model, but --model is lit_sb3_a2c.a2c.A2C" in capsys.readouterr().err
    torch.save({"state_dict": {}}, fake)
    assert main(["test", "--ckpt_path", str(fake), "--env", "CartPole-v1"]) == 2
    assert "was not written by a lit-sb3 algorithm" in capsys.readouterr().err


def test_help_documents_the_lit_sb3_additions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["fit", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert "--zoo ENV_ID" in out and "registry name" in out and "--trainer.max_steps" in out


def test_tuned_hyperparameters_split_model_data_and_trainer() -> None:
    tuned = lit_sb3_core.tuned_hyperparameters("PPO", "CartPole-v1")
    assert tuned["trainer"] == {"max_steps": 100_000}
    assert tuned["data"] == {"n_envs": 8}
    cls = lit_sb3_core.get_algo_class("ppo")
    assert set(tuned["model"]) <= set(inspect.signature(cls.__init__).parameters)
    cls(**tuned["model"])  # valid constructor arguments
    with pytest.raises(ConfigurationError, match="has no tuned hyperparameters for 'Nope-v0'"):
        lit_sb3_core.tuned_hyperparameters("ppo", "Nope-v0")


def test_tuned_entries_that_fit_nowhere_are_refused() -> None:
    from lit_sb3_core.engine.tuned import split_tuned

    cls = lit_sb3_core.get_algo_class("ppo")
    with pytest.raises(ConfigurationError, match="frame_stack"):
        split_tuned(cls, {"n_timesteps": 10, "frame_stack": 4})
