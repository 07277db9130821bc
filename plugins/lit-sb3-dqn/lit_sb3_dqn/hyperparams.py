"""DQN hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/dqn.yml),
as plain data. ``n_timesteps`` and ``n_envs`` are run settings, the rest constructor arguments.
"""

from __future__ import annotations

from typing import Any

from lit_sb3_dqn.zoo_hyperparams import ZOO_HYPERPARAMETERS

TUNED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "n_timesteps": 50_000,
        "learning_rate": 2.3e-3,
        "batch_size": 64,
        "buffer_size": 100_000,
        "learning_starts": 1000,
        "gamma": 0.99,
        "target_update_interval": 10,
        "train_freq": 256,
        "gradient_steps": 128,
        "exploration_fraction": 0.16,
        "exploration_final_eps": 0.04,
        "policy_kwargs": {"net_arch": [256, 256]},
    },
    "MountainCar-v0": {
        "n_timesteps": 120_000,
        "learning_rate": 4e-3,
        "batch_size": 128,
        "buffer_size": 10_000,
        "learning_starts": 1000,
        "gamma": 0.98,
        "target_update_interval": 600,
        "train_freq": 16,
        "gradient_steps": 8,
        "exploration_fraction": 0.2,
        "exploration_final_eps": 0.07,
        "policy_kwargs": {"net_arch": [256, 256]},
    },
    "Acrobot-v1": {
        "n_timesteps": 100_000,
        "learning_rate": 6.3e-4,
        "batch_size": 128,
        "buffer_size": 50_000,
        "learning_starts": 0,
        "gamma": 0.99,
        "target_update_interval": 250,
        "train_freq": 4,
        "gradient_steps": -1,
        "exploration_fraction": 0.12,
        "exploration_final_eps": 0.1,
        "policy_kwargs": {"net_arch": [256, 256]},
    },
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
