"""A custom network through ``policy_kwargs``: separate actor and critic sizes, ReLU, no orthogonal init.

    python examples/custom_policy.py
    python examples/custom_policy.py --steps 5000

``policy_kwargs`` is stored with the hyperparameters (classes as names, e.g. ``nn.ReLU`` -> "relu"), so
the saved model, Lightning checkpoints and `lit-sb3 fit --model.policy_kwargs ...` all rebuild the same
network. The same dict works for every algorithm whose policy takes these arguments (A2C, PPO, ...).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch import nn

import lit_sb3
from lit_sb3 import PPO, RLEnvDataModule, RLTrainer, evaluate_policy

ENV_ID = "CartPole-v1"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=50_000, help="environment steps (default 50000)")
    parser.add_argument("--out", default="runs", help="folder for logs and the saved model")
    args = parser.parse_args()
    torch.set_num_threads(1)

    policy_kwargs = {
        "net_arch": {"pi": [32, 32], "vf": [128, 128]},  # actor and critic get their own layer sizes
        "activation_fn": nn.ReLU,  # a class, or its name: "relu"
        "ortho_init": False,
    }
    model = PPO(
        policy_kwargs=policy_kwargs, n_steps=256, batch_size=64, learning_rate=1e-3, seed=0, env=ENV_ID
    )
    print(model.policy)  # built now, since env= was given: the layers above, with ReLU

    trainer = RLTrainer(
        max_steps=args.steps,
        run_name="ppo_custom_policy",
        default_root_dir=args.out,
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=ENV_ID, n_envs=4, seed=0))

    path = Path(args.out) / "ppo_custom_policy.zip"
    model.save(path)
    loaded = lit_sb3.load(path)
    print("saved policy_kwargs:", loaded.hparams["policy_kwargs"])
    mean, std = evaluate_policy(loaded, ENV_ID, n_eval_episodes=10)
    print(f"mean_reward={mean:.1f} +/- {std:.1f}")


if __name__ == "__main__":
    main()
