"""Memory pays off: on CartPole without velocities RecurrentPPO learns to balance, PPO with the same budget cannot.

``CartPoleNoVel-v1`` observes ``[x, theta]`` only. A memoryless policy cannot tell which way the pole is
moving and stays near 45 steps (measured: 44-45 for seeds 0-2 at 30k steps); RecurrentPPO infers the
velocities from successive observations (measured: 190-280 at 30k steps with 64 LSTM units, seeds 0-2;
310-420 at rl-zoo3's 100k budget, seeds 0-1).
Both use rl-zoo3's tuned CartPole settings (``ppo_lstm.yml`` / ``ppo.yml``).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from lit_sb3_ppo_recurrent import RecurrentPPO
from lit_sb3_ppo_recurrent.hyperparams import TUNED

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer, evaluate_policy

torch.set_num_threads(1)

ENV_ID = "CartPoleNoVel-v1"


def _zoo_settings() -> tuple[dict[str, Any], int]:
    settings = dict(TUNED[ENV_ID])
    n_envs = settings.pop("n_envs")
    settings.pop("n_timesteps")
    return settings, n_envs


def _train_and_evaluate(model: Any, steps: int, n_envs: int, seed: int) -> float:
    trainer = RLTrainer(max_steps=steps, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=ENV_ID, n_envs=n_envs, seed=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mean, _ = evaluate_policy(model, ENV_ID, n_eval_episodes=20)
    return mean


def test_recurrent_ppo_clearly_beats_ppo_without_velocities_ci_budget() -> None:
    settings, n_envs = _zoo_settings()
    # rl-zoo3's settings with a smaller LSTM (64 units instead of 256) to fit a CI budget.
    recurrent = RecurrentPPO(seed=0, policy_kwargs={"lstm_hidden_size": 64}, **settings)
    recurrent_return = _train_and_evaluate(recurrent, 30_000, n_envs, seed=0)
    memoryless = PPO(seed=0, **settings)  # the same hyperparameters, rl-zoo3's CartPole-v1 ones
    memoryless_return = _train_and_evaluate(memoryless, 30_000, n_envs, seed=0)
    assert memoryless_return < 100, f"PPO reached {memoryless_return:.0f} without velocities"
    assert recurrent_return > 150, f"RecurrentPPO reached only {recurrent_return:.0f}"
    assert recurrent_return > 2.5 * memoryless_return


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_recurrent_ppo_balances_without_velocities_full_budget(seed: int) -> None:
    # rl-zoo3's 100k budget (64 LSTM units): measured 418 (seed 0) and 309 (seed 1); PPO stays near 45.
    settings, n_envs = _zoo_settings()
    recurrent = RecurrentPPO(seed=seed, policy_kwargs={"lstm_hidden_size": 64}, **settings)
    assert _train_and_evaluate(recurrent, 100_000, n_envs, seed=seed) >= 250
