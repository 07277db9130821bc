"""Checkpoint a run with Lightning's ModelCheckpoint, then resume it with ``trainer.fit(..., ckpt_path=...)``.

    python examples/checkpoint_resume.py
    python examples/checkpoint_resume.py --steps 4096

The first trainer stops halfway, as an interrupted job would. The second continues from the checkpoint:
weights, optimizer state and the environment-step counter come back, so it trains only the remaining
steps toward the same ``max_steps`` budget.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from lightning.pytorch.callbacks import ModelCheckpoint

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer

ENV_ID = "CartPole-v1"
HYPERPARAMETERS = {"n_steps": 128, "batch_size": 64, "n_epochs": 4, "learning_rate": 1e-3, "seed": 0}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=40_000, help="total environment steps (default 40000)")
    parser.add_argument("--out", default="runs", help="folder for logs and checkpoints")
    args = parser.parse_args()
    torch.set_num_threads(1)
    checkpoints = Path(args.out) / "checkpoints"

    # First part: stops at half the budget. save_last keeps <dirpath>/last.ckpt up to date, and
    # every_n_train_steps counts Lightning batches (one per algorithm iteration), not environment steps.
    model = PPO(**HYPERPARAMETERS)
    trainer = RLTrainer(
        max_steps=args.steps // 2,
        run_name="ppo_resume",
        default_root_dir=args.out,
        callbacks=[ModelCheckpoint(dirpath=checkpoints, save_last=True, every_n_train_steps=10)],
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=ENV_ID, n_envs=4, seed=0))
    print(
        f"first run stopped at {model.num_timesteps} environment steps; checkpoint: {checkpoints / 'last.ckpt'}"
    )

    # Later, maybe in another process: a fresh model and trainer with the full budget resume the run.
    resumed = PPO(**HYPERPARAMETERS)
    trainer = RLTrainer(
        max_steps=args.steps,
        run_name="ppo_resume",
        default_root_dir=args.out,
        callbacks=[ModelCheckpoint(dirpath=checkpoints, save_last=True, every_n_train_steps=10)],
    )
    trainer.fit(
        resumed,
        datamodule=RLEnvDataModule(train_env=ENV_ID, n_envs=4, seed=0),
        ckpt_path=checkpoints / "last.ckpt",
    )
    print(f"resumed run finished at {resumed.num_timesteps} environment steps (budget {args.steps})")
    print(f"last reward: rollout/ep_rew_mean={resumed.last_metrics['rollout/ep_rew_mean']:.1f}")


if __name__ == "__main__":
    main()
