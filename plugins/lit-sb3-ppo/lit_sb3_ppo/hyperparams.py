"""PPO hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

Only entries reproduced faithfully are listed: rl-zoo3's Acrobot, MountainCar and Pendulum settings use
observation normalization (and gSDE for Pendulum), which lit-sb3 0.1 does not offer yet.
"""

from __future__ import annotations

from typing import Any

TUNED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "n_envs": 8,
        "n_timesteps": 100_000,
        "n_steps": 32,
        "batch_size": 256,
        "gae_lambda": 0.8,
        "gamma": 0.98,
        "n_epochs": 20,
        "ent_coef": 0.0,
        "learning_rate": "lin_0.001",
        "clip_range": "lin_0.2",
    },
}
