"""Train SAC on Pendulum-v1 with rl-zoo3's settings, keep the best model with EvalCallback, reload it.

    python examples/sac_pendulum.py                 # 20k steps (rl-zoo3's budget): return around -150
    python examples/sac_pendulum.py --steps 2000    # a quick look

SAC's networks are 256 wide and it updates after every environment step, so this is the compute-bound
kind of run: expect tens of steps per second on a laptop CPU.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from lit_sb3 import SAC, EvalCallback, RLEnvDataModule, RLTrainer, evaluate_policy, tuned_hyperparameters

ENV_ID = "Pendulum-v1"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=None, help="environment steps (default: the tuned 20k)")
    parser.add_argument("--out", default="runs", help="folder for logs and models")
    args = parser.parse_args()
    torch.set_num_threads(1)

    tuned = tuned_hyperparameters("sac", ENV_ID)  # {"model": {"learning_rate": 0.001}, ...}
    steps = args.steps or tuned["trainer"]["max_steps"]
    model = SAC(**tuned["model"], seed=0)
    best = Path(args.out) / "sac_best"
    keep_best = EvalCallback(ENV_ID, n_eval_episodes=3, eval_freq=max(steps // 4, 1), best_model_save_path=best,
                             verbose=0)  # fmt: skip
    trainer = RLTrainer(
        max_steps=steps,
        run_name=f"sac_{ENV_ID}",
        default_root_dir=args.out,
        callbacks=[keep_best],
        enable_checkpointing=False,
    )
    trainer.fit(model, datamodule=RLEnvDataModule(train_env=ENV_ID, seed=0, **tuned["data"]))
    mean, std = evaluate_policy(model, ENV_ID, n_eval_episodes=5)
    print(f"after {model.num_timesteps} steps: mean_reward={mean:.1f} +/- {std:.1f}")
    best_model = SAC.load(best / "best_model.zip")
    print(
        f"best model (at {best_model.num_timesteps} steps): evaluation mean {keep_best.best_mean_reward:.1f}"
    )


if __name__ == "__main__":
    main()
