"""What Lightning's loggers write rebuilds the model, for every first-party algorithm (issue 27).

Lightning writes ``hparams_initial`` into the run folder's ``hparams.yaml``; TRPO (``ent_coef``), DQN and
QR-DQN (``action_noise``), DDPG (``policy_delay``), CrossQ (``tau``) and MaskablePPO (``sde_sample_freq``) used
to write base-class arguments their constructors do not take, so ``Algo(**yaml.safe_load(...))`` raised.
Each algorithm here is fitted briefly with a CSV and a TensorBoard logger, and the files are read back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from gymnasium import spaces
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

from lit_sb3_core import RLEnvDataModule, RLTrainer, get_algo_class, list_algos, make_algo
from lit_sb3_core.testing import SpaceTestEnv


def masked_env() -> SpaceTestEnv:
    """An env with ``action_masks()``, for MaskablePPO."""
    return SpaceTestEnv(spaces.Box(-1, 1, (2,)), spaces.Discrete(3))


OFF_POLICY = {"learning_starts": 16, "buffer_size": 500, "batch_size": 16}
RUNS: dict[str, tuple[Any, dict[str, Any]]] = {
    "a2c": ("CartPole-v1", {"n_steps": 8}),
    "ars": ("Pendulum-v1", {"n_delta": 2, "policy_kwargs": {"net_arch": [8]}}),
    "crossq": ("Pendulum-v1", {**OFF_POLICY, "policy_kwargs": {"net_arch": [16]}}),
    "ddpg": ("Pendulum-v1", {**OFF_POLICY, "action_noise": {"type": "normal", "sigma": 0.1}}),
    "dqn": ("CartPole-v1", {**OFF_POLICY, "target_update_interval": 50}),
    "maskable_ppo": (masked_env, {"n_steps": 32, "batch_size": 32, "n_epochs": 1}),
    "ppo": ("CartPole-v1", {"n_steps": 32, "batch_size": 32, "n_epochs": 1}),
    "qrdqn": ("CartPole-v1", {**OFF_POLICY, "policy_kwargs": {"n_quantiles": 5}}),
    "recurrent_ppo": ("CartPole-v1", {"n_steps": 32, "batch_size": 32, "n_epochs": 1}),
    "sac": ("Pendulum-v1", {**OFF_POLICY, "policy_kwargs": {"net_arch": [16]}}),
    "td3": ("Pendulum-v1", {**OFF_POLICY, "action_noise": {"type": "normal", "sigma": 0.1}}),
    "tqc": ("Pendulum-v1", {**OFF_POLICY, "policy_kwargs": {"net_arch": [16], "n_quantiles": 5}}),
    "trpo": ("CartPole-v1", {"n_steps": 32, "batch_size": 32, "n_critic_updates": 1, "cg_max_steps": 3}),
}


def test_every_first_party_algorithm_is_covered() -> None:
    first_party = [name for name in list_algos() if get_algo_class(name).__module__.startswith("lit_sb3_")]
    assert sorted(first_party) == sorted(RUNS)


@pytest.mark.parametrize("name", sorted(RUNS))
def test_hparams_yaml_rebuilds_the_model(name: str, tmp_path: Path) -> None:
    env, kwargs = RUNS[name]
    model = make_algo(name, seed=0, **kwargs)
    loggers = [CSVLogger(tmp_path / "csv"), TensorBoardLogger(tmp_path / "tensorboard")]
    RLTrainer(max_steps=64, logger=loggers, enable_checkpointing=False, enable_progress_bar=False).fit(
        model, datamodule=RLEnvDataModule(train_env=env)
    )
    assert model.num_timesteps >= 64
    saved = json.loads(json.dumps(dict(model.hparams)))
    assert dict(model.hparams_initial) == dict(model.hparams)
    for logger in loggers:
        logged = yaml.safe_load((Path(str(logger.log_dir)) / "hparams.yaml").read_text())
        assert logged == saved, type(logger).__name__
        rebuilt = type(model)(env=env, **logged)
        assert json.loads(json.dumps(dict(rebuilt.hparams))) == logged
        for key, value in kwargs.items():
            assert logged[key] == value
