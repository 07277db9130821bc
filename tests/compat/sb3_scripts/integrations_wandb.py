# SB3 docs, guide/integrations.md ("Weights & Biases"), with stable_baselines3 renamed lit_sb3. Changed for
# the test: W&B runs offline (no network: WANDB_MODE=offline, set before wandb starts); 25000 -> 2048
# timesteps; the script checks that the callback saved the model where it says.
import os

os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("WANDB_SILENT", "true")

import wandb
from wandb.integration.sb3 import WandbCallback

from lit_sb3 import PPO

config = {
    "policy_type": "MlpPolicy",
    "total_timesteps": 2048,
    "env_id": "CartPole-v1",
}
run = wandb.init(
    project="sb3",
    config=config,
    sync_tensorboard=True,  # auto-upload sb3's tensorboard metrics
    # monitor_gym=True,  # auto-upload the videos of agents playing the game
    # save_code=True,  # optional
)

model = PPO(config["policy_type"], config["env_id"], verbose=1, tensorboard_log=f"runs/{run.id}")
model.learn(
    total_timesteps=config["total_timesteps"],
    callback=WandbCallback(
        model_save_path=f"models/{run.id}",
        verbose=2,
    ),
)
run.finish()

assert os.path.exists(f"models/{run.id}/model.zip")
assert PPO.load(f"models/{run.id}/model.zip").num_timesteps == 2048
