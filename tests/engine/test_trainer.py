from pathlib import Path

import numpy as np
import pytest
from lightning.pytorch.loggers import TensorBoardLogger

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1}


def quiet_trainer(max_steps: int, **kwargs) -> RLTrainer:
    kwargs.setdefault("logger", False)
    return RLTrainer(max_steps=max_steps, enable_progress_bar=False, enable_checkpointing=False, **kwargs)


@pytest.mark.parametrize("bad", [0, -5, 1.5, "100", True, None])
def test_max_steps_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ValueError, match="environment steps"):
        RLTrainer(max_steps=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["max_epochs", "min_epochs", "min_steps"])
def test_epoch_and_min_limits_are_rejected_with_the_reason(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name}.*budget of environment steps"):
        RLTrainer(max_steps=100, **{name: 3})


def test_default_logger_is_tensorboard_under_run_name_n(tmp_path: Path) -> None:
    first = RLTrainer(max_steps=10, run_name="exp", default_root_dir=tmp_path)
    assert isinstance(first.logger, TensorBoardLogger)
    assert Path(first.logger.log_dir) == tmp_path / "lightning_logs" / "exp_1"
    (tmp_path / "lightning_logs" / "exp_1").mkdir(parents=True)
    (tmp_path / "lightning_logs" / "exp_7").mkdir()
    second = RLTrainer(max_steps=10, run_name="exp", default_root_dir=tmp_path)
    assert Path(second.logger.log_dir).name == "exp_8"
    assert RLTrainer(max_steps=10, logger=False).logger is None
    odd = RLTrainer(max_steps=10, run_name="dqn_pkg.envs:Bits/v0", default_root_dir=tmp_path)
    assert Path(odd.logger.log_dir).name == "dqn_pkg.envs-Bits-v0_1"  # a portable folder name


def test_other_trainer_arguments_pass_through() -> None:
    trainer = RLTrainer(
        max_steps=10, accelerator="cpu", log_every_n_steps=7, logger=False, precision="32-true"
    )
    assert trainer.log_every_n_steps == 7
    assert trainer.accelerator.__class__.__name__ == "CPUAccelerator"


def test_budget_properties_follow_the_run() -> None:
    trainer = quiet_trainer(200)
    assert (trainer.rl_total_timesteps, trainer.rl_num_timesteps, trainer.rl_progress) == (200, 0, 0.0)
    assert not trainer.rl_budget_reached
    model = PPO(seed=0, **SMALL)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    # Whole rollouts of 32 steps x 2 envs until the budget: 4 iterations, 256 steps.
    assert trainer.rl_num_timesteps == model.num_timesteps == 256
    assert trainer.rl_progress == 1.0 and trainer.rl_budget_reached


def test_the_seed_api_verbatim(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    model = PPO("MlpPolicy")
    dm = RLEnvDataModule(train_env="CartPole-v1")
    trainer = RLTrainer(max_steps=2048, enable_progress_bar=True)
    trainer.fit(model, datamodule=dm)
    assert model.num_timesteps == 2048
    assert (tmp_path / "lightning_logs" / "run_1").is_dir()


def test_fit_refuses_dataloaders_and_other_datamodules() -> None:
    import lightning as L

    trainer = quiet_trainer(10)
    with pytest.raises(TypeError, match="environments"):
        trainer.fit(PPO(), train_dataloaders=[1, 2])
    with pytest.raises(TypeError, match="RLEnvDataModule"):
        trainer.fit(PPO(), datamodule=L.LightningDataModule())
    with pytest.raises(TypeError, match="needs the environment"):
        trainer.fit(PPO())


def test_fit_uses_the_model_env_when_no_datamodule() -> None:
    model = PPO(env="CartPole-v1", **SMALL)
    quiet_trainer(64).fit(model)
    assert model.num_timesteps == 64


def test_validate_and_test_return_and_log_the_evaluation(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    model = PPO(seed=0, **SMALL)
    dm = RLEnvDataModule(train_env="CartPole-v1", seed=0)
    trainer = RLTrainer(max_steps=64, default_root_dir=tmp_path, enable_progress_bar=False)
    trainer.fit(model, datamodule=dm)
    keys = {"mean_reward", "std_reward", "mean_episode_length", "std_episode_length", "n_eval_episodes"}
    (test,) = trainer.test(model, datamodule=dm, n_eval_episodes=4, verbose=False)
    assert set(test) == {f"test/{k}" for k in keys}
    assert test["test/n_eval_episodes"] == 4 and isinstance(test["test/n_eval_episodes"], int)
    (val,) = trainer.validate(
        model, env="CartPole-v1", n_eval_episodes=3, verbose=False, return_episode_rewards=True
    )
    assert {f"val/{k}" for k in keys} <= set(val)
    assert len(val["val/episode_rewards"]) == 3
    assert val["val/mean_reward"] == pytest.approx(np.mean(val["val/episode_rewards"]))
    events = EventAccumulator(str(trainer.logger.log_dir))
    events.Reload()
    assert "test/mean_reward" in events.Tags()["scalars"]


def test_evaluation_arguments_are_checked() -> None:
    model = PPO(env="CartPole-v1", **SMALL)
    trainer = quiet_trainer(10)
    with pytest.raises(ValueError, match="n_eval_episodes"):
        trainer.test(model, env="CartPole-v1", n_eval_episodes=0)
    with pytest.raises(AssertionError, match="below reward_threshold"):
        trainer.test(model, env="CartPole-v1", n_eval_episodes=2, reward_threshold=10_000, verbose=False)


def test_predict_returns_actions_and_states() -> None:
    model = PPO(env="CartPole-v1", **SMALL)
    trainer = quiet_trainer(10)
    actions, states = trainer.predict(model, observation=np.zeros((3, 4), dtype=np.float32))
    assert actions.shape == (3,) and states is None
    action, _ = trainer.predict(model, env="CartPole-v1")
    assert np.asarray(action).shape == (1,)
    with pytest.raises(ValueError, match="observation"):
        trainer.predict(model)


def test_evaluation_during_fit_every_n_env_steps_feeds_model_checkpoint(tmp_path: Path) -> None:
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    checkpoint = ModelCheckpoint(
        dirpath=tmp_path / "best", monitor="val/mean_reward", mode="max", save_top_k=1
    )
    trainer = RLTrainer(
        max_steps=1024, eval_every_n_steps=256, n_eval_episodes=2, default_root_dir=tmp_path,
        enable_progress_bar=False, callbacks=[checkpoint],
    )  # fmt: skip
    model = PPO(seed=0, **SMALL)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", val_env="CartPole-v1", n_envs=2))
    assert trainer.val_check_interval == 4  # 256 steps / (32 steps x 2 envs)
    events = EventAccumulator(trainer.logger.log_dir)
    events.Reload()
    steps = [event.step for event in events.Scalars("val/mean_reward")]
    assert steps == [256, 512, 768, 1024]
    assert checkpoint.best_model_path and checkpoint.best_model_score is not None
    assert "val/mean_reward" in trainer.callback_metrics
    # EarlyStopping reads the same metric, unchanged: an impossible delta stops after `patience` checks.
    stopper = EarlyStopping(monitor="val/mean_reward", mode="max", patience=1, min_delta=10_000)
    trainer = RLTrainer(max_steps=10_000, eval_every_n_steps=64, n_eval_episodes=1, logger=False,
                        enable_progress_bar=False, enable_checkpointing=False, callbacks=[stopper])  # fmt: skip
    model = PPO(seed=0, **SMALL)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", val_env="CartPole-v1", n_envs=2))
    assert model.num_timesteps == 128 and stopper.stopped_epoch == 0 and trainer.should_stop


def test_no_val_env_means_no_evaluation_during_fit() -> None:
    trainer = quiet_trainer(256, eval_every_n_steps=64)
    model = PPO(seed=0, **SMALL)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1"))
    assert "val/mean_reward" not in trainer.callback_metrics
