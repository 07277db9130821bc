"""Train PPO on CartPole-v1 with rl-zoo3's tuned hyperparameters, evaluate it, save it and load it back.

    python examples/ppo_cartpole.py                 # 100k steps, about a minute on a laptop CPU: return 500
    python examples/ppo_cartpole.py --steps 5000    # a quick look

TensorBoard logs go to runs/lightning_logs/ppo_CartPole-v1_<N>/ (`tensorboard --logdir runs`, or
`lit-sb3 plot runs -o curve.png`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import lit_sb3
from lit_sb3 import PPO, RLEnvDataModule, RLTrainer, evaluate_policy, tuned_hyperparameters

ENV_ID = "CartPole-v1"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=None, help="environment steps (default: the tuned 100k)")
    parser.add_argument("--out", default="runs", help="folder for logs and the saved model")
    args = parser.parse_args()
    torch.set_num_threads(1)  # small networks train fastest on one CPU thread

    # {"model": {...}, "data": {"n_envs": 8}, "trainer": {"max_steps": 100000}}
    tuned = tuned_hyperparameters("ppo", ENV_ID)
    model = PPO(**tuned["model"], seed=0)
    datamodule = RLEnvDataModule(train_env=ENV_ID, **tuned["data"], seed=0)
    trainer = RLTrainer(
        max_steps=args.steps or tuned["trainer"]["max_steps"],  # environment steps, over all 8 envs
        run_name=f"ppo_{ENV_ID}",
        default_root_dir=args.out,
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=datamodule)

    # Evaluation runs through Lightning's test loop and logs test/mean_reward.
    results = trainer.test(model, env=ENV_ID, n_eval_episodes=10, verbose=False)
    print(f"test/mean_reward after {model.num_timesteps} steps: {results[0]['test/mean_reward']:.1f}")

    path = Path(args.out) / "ppo_cartpole.zip"
    model.save(path)
    loaded = lit_sb3.load(path)  # any algorithm's model file; the file says which algorithm it holds
    mean, std = evaluate_policy(loaded, ENV_ID, n_eval_episodes=10)
    print(f"reloaded from {path}: mean_reward={mean:.1f} +/- {std:.1f}")
    datamodule.close()


if __name__ == "__main__":
    main()
