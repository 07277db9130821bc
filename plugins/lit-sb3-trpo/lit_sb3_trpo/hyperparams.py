"""TRPO hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

"n_timesteps" is the step budget; "n_envs" and "normalize" (observation and reward normalization, as
SB3's VecNormalize) configure RLEnvDataModule; every other key is a constructor argument
(``lit_sb3.tuned_hyperparameters("trpo", env_id)`` does the split).
"""

from __future__ import annotations

from typing import Any

from lit_sb3_trpo.zoo_hyperparams import ZOO_HYPERPARAMETERS

__all__ = ["TUNED"]

TUNED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "n_envs": 2,
        "n_timesteps": 100_000,
        "n_steps": 512,
        "batch_size": 512,
        "cg_damping": 1e-3,
        "gae_lambda": 0.98,
        "gamma": 0.99,
        "learning_rate": 1e-3,
        "n_critic_updates": 20,
    },
    "Pendulum-v1": {
        "n_envs": 2,
        "n_timesteps": 100_000,
        "n_steps": 1024,
        "gamma": 0.9,
        "n_critic_updates": 15,
        "use_sde": True,
        "sde_sample_freq": 4,
    },
    "Acrobot-v1": {
        "normalize": True,
        "n_envs": 2,
        "n_timesteps": 100_000,
        "n_steps": 1024,
    },
    "MountainCar-v0": {
        "normalize": True,
        "n_envs": 2,
        "n_timesteps": 100_000,
        "n_steps": 1024,
        "n_critic_updates": 20,
    },
    "LunarLander-v3": {
        "n_envs": 2,
        "n_timesteps": 200_000,
        "n_steps": 512,
        "cg_damping": 0.01,
        "gae_lambda": 0.98,
        "gamma": 0.99,
        "learning_rate": 1e-3,
        "n_critic_updates": 15,
    },
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
