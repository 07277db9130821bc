"""Train PPO on two processes with Lightning's DDP (DD-PPO style), on the CPU.

    python examples/ddp_cartpole.py                  # 2 processes x 4 envs, 60k steps in total
    python examples/ddp_cartpole.py --steps 4096     # a quick look

Each process owns its environments (seeded apart), collects its own rollouts and computes gradients on
them; DDP averages the gradients, so both processes hold the same policy. `max_steps` counts the steps of
all processes. See docs/distributed.md for GPUs and several nodes.
"""

from __future__ import annotations

import argparse

import torch

from lit_sb3 import PPO, RLEnvDataModule, RLTrainer, evaluate_policy


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=60_000, help="environment steps over all processes")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--out", default="runs", help="folder for logs")
    args = parser.parse_args()
    torch.set_num_threads(1)

    model = PPO(n_steps=32, batch_size=256, n_epochs=20, gae_lambda=0.8, gamma=0.98,
                learning_rate="lin_0.001", clip_range="lin_0.2", seed=0)  # fmt: skip
    trainer = RLTrainer(
        max_steps=args.steps,
        strategy="ddp",  # relaunches this script once per process
        accelerator="cpu",
        devices=args.processes,
        run_name="ppo_ddp",
        default_root_dir=args.out,
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env="CartPole-v1", n_envs=4, seed=0))
    if trainer.is_global_zero:  # every process runs this script; report once
        mean, std = evaluate_policy(model, "CartPole-v1", n_eval_episodes=10)
        print(
            f"{trainer.world_size} processes, {model.num_timesteps} steps: mean_reward={mean:.1f} +/- {std:.1f}"
        )


if __name__ == "__main__":
    main()
