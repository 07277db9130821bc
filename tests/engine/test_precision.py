"""Lightning precision plugins: ``RLTrainer(precision="bf16-mixed")`` trains, evaluates and predicts.

bf16 autocast roughly doubles the speed of SAC's 256-wide updates on CPUs with bf16 instructions (see
``benchmarks``); these tests check it works end to end and still learns.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from lit_sb3 import RLEnvDataModule, RLTrainer, evaluate_policy, make_algo


def _trainer(steps: int, **kwargs: object) -> RLTrainer:
    return RLTrainer(
        max_steps=steps,
        precision="bf16-mixed",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        **kwargs,
    )


def test_on_policy_training_validation_and_prediction_under_bf16_autocast() -> None:
    model = make_algo("ppo", n_steps=64, batch_size=64, n_epochs=2, seed=0)
    trainer = _trainer(512, eval_every_n_steps=256, n_eval_episodes=2)
    before = [p.detach().clone() for p in model.parameters()] if model.policy is not None else None
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", val_env="CartPole-v1", n_envs=2))
    assert model.num_timesteps == 512
    assert before is None or any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert all(p.dtype == torch.float32 for p in model.parameters()), "autocast must keep fp32 weights"
    (result,) = trainer.validate(model, datamodule=RLEnvDataModule(val_env="CartPole-v1"))
    assert np.isfinite(result["val/mean_reward"])
    actions, _ = model.predict(np.zeros((3, 4), dtype=np.float32))
    assert actions.shape == (3,)


def test_sac_learns_pendulum_under_bf16_autocast_on_the_fast_update_path() -> None:
    model = make_algo("sac", learning_rate=1e-3, batch_size=128, policy_kwargs={"net_arch": [64, 64]}, seed=0)
    trainer = _trainer(4000)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", seed=0))
    assert model._plain_steps, (
        "bf16 autocast needs no gradient scaler: updates should skip Lightning's wrappers"
    )
    env = gym.vector.SyncVectorEnv(
        [lambda: gym.make("Pendulum-v1")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    env.reset(seed=0)
    mean_reward, _ = evaluate_policy(model, env, n_eval_episodes=10)
    assert mean_reward > -700, mean_reward  # a random policy scores about -1200


@pytest.mark.parametrize("precision", ["16-mixed"])
def test_fp16_with_a_gradient_scaler_takes_lightnings_path(precision: str) -> None:
    if not torch.cuda.is_available():
        pytest.skip("fp16 mixed precision with a gradient scaler needs a GPU")
    model = make_algo("sac", learning_starts=50, batch_size=32, seed=0)
    RLTrainer(
        max_steps=300,
        precision=precision,
        accelerator="gpu",
        devices=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
    ).fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1"))
    assert not model._plain_steps
