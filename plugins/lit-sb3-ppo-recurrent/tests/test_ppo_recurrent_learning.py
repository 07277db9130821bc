"""Memory pays off: on CartPole without velocities RecurrentPPO learns to balance, PPO with the same budget cannot.

``CartPoleNoVel-v1`` observes ``[x, theta]`` only. A memoryless policy cannot tell which way the pole is
moving and stays near 45 steps (measured: 43 at 30k steps, seed 0); RecurrentPPO infers the velocities from
successive observations. Both use rl-zoo3's full tuned settings (``ppo_lstm.yml``: observation
normalization, a 64-unit LSTM with 64-unit ReLU heads; PPO gets the same heads without the LSTM).

Measured (deterministic evaluation over 20 episodes, one torch thread): 227 at 30k steps (seed 0); at
rl-zoo3's 100k budget 445, 402, 194, 452, 496 for seeds 0-4 (sb3-contrib 2.9 with the same settings:
500, 500, 500, 500, 284). Returns at 100k vary a lot from seed to seed for both libraries, so the slow
test asserts clearly-learned balancing (>= 150, against PPO's ~45), not the solved 475 of the issue:
seed 2 stays near 180-195 at 100k. A multi-iteration lockstep run with sb3-contrib
(``test_ppo_recurrent_parity.py``) shows the training itself matches to float precision.
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
CI_STEPS = 30_000
CI_THRESHOLD = 150  # measured 227 (seed 0)
FULL_THRESHOLD = 150  # measured 445, 402, 194 (seeds 0, 1, 2)


def _zoo_settings() -> tuple[dict[str, Any], dict[str, Any]]:
    """rl-zoo3's entry split into constructor arguments and run settings (n_envs, normalize)."""
    settings = dict(TUNED[ENV_ID])
    run = {"n_envs": settings.pop("n_envs"), "normalize": settings.pop("normalize")}
    settings.pop("n_timesteps")
    return settings, run


def _train_and_evaluate(model: Any, steps: int, run: dict[str, Any], seed: int) -> float:
    trainer = RLTrainer(max_steps=steps, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=ENV_ID, seed=seed, **run))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mean, _ = evaluate_policy(model, ENV_ID, n_eval_episodes=20)
    return mean


def test_recurrent_ppo_clearly_beats_ppo_without_velocities_ci_budget() -> None:
    settings, run = _zoo_settings()
    # rl-zoo3's full settings (64-unit LSTM, observation normalization) on a CI budget.
    recurrent = RecurrentPPO(seed=0, **settings)
    recurrent_return = _train_and_evaluate(recurrent, CI_STEPS, run, seed=0)
    # The same hyperparameters and heads (rl-zoo3's CartPole-v1 PPO settings), without the LSTM.
    lstm_only = ("lstm_hidden_size", "enable_critic_lstm")
    policy_kwargs = {key: value for key, value in settings["policy_kwargs"].items() if key not in lstm_only}
    memoryless = PPO(seed=0, **{**settings, "policy_kwargs": policy_kwargs})
    memoryless_return = _train_and_evaluate(memoryless, CI_STEPS, run, seed=0)
    assert memoryless_return < 100, f"PPO reached {memoryless_return:.0f} without velocities"
    assert recurrent_return > CI_THRESHOLD, f"RecurrentPPO reached only {recurrent_return:.0f}"
    assert recurrent_return > 2.5 * memoryless_return


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recurrent_ppo_balances_without_velocities_full_budget(seed: int) -> None:
    # rl-zoo3's full entry and 100k budget; see the module docstring for the measured returns.
    settings, run = _zoo_settings()
    recurrent = RecurrentPPO(seed=seed, **settings)
    recurrent_return = _train_and_evaluate(recurrent, 100_000, run, seed=seed)
    assert recurrent_return >= FULL_THRESHOLD, f"RecurrentPPO reached only {recurrent_return:.0f}"
