"""One owner for "is the step budget spent?": RLTrainer.rl_budget_reached_at. The on-policy and off-policy
loops, their logging and the resume check all ask it, so a trainer that decides differently is obeyed."""

from __future__ import annotations

from typing import Any

import pytest

from lit_sb3 import PPO, SAC, RLEnvDataModule, RLTrainer


class HalfBudgetTrainer(RLTrainer):
    """Spends the budget at half of max_steps: every place that asks the trainer stops there."""

    def rl_budget_reached_at(self, num_timesteps: int) -> bool:
        return num_timesteps >= self.rl_total_timesteps // 2


def _trainer(cls: type[RLTrainer], max_steps: int, **kwargs: Any) -> RLTrainer:
    return cls(
        max_steps=max_steps, logger=False, enable_progress_bar=False, enable_checkpointing=False, **kwargs
    )


def test_the_trainer_decides_where_on_policy_training_stops() -> None:
    model = PPO(seed=0, n_steps=32, batch_size=32, n_epochs=1)
    trainer = _trainer(HalfBudgetTrainer, 512)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=2))
    # rollouts of 64 steps: the trainer says "spent" at 256 of 512
    assert model.num_timesteps == 256 and trainer.rl_budget_reached and model.budget.reached()


def test_the_trainer_decides_where_off_policy_training_stops() -> None:
    model = SAC(seed=0, learning_starts=16, batch_size=16, buffer_size=1000, policy_kwargs={"net_arch": [16]})
    trainer = _trainer(HalfBudgetTrainer, 120)
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="Pendulum-v1", n_envs=1))
    assert model.num_timesteps == 60 and trainer.rl_budget_reached


@pytest.mark.parametrize(("done", "expected"), [(0, False), (99, False), (100, True), (101, True)])
def test_rl_budget_reached_at_counts_environment_steps(done: int, expected: bool) -> None:
    assert _trainer(RLTrainer, 100).rl_budget_reached_at(done) is expected
