"""rl-zoo3 2.9.2's tuned hyperparameters for qrdqn, as plain data (generated: do not edit by hand).

Written by ``scripts/import_zoo_hyperparams.py`` from rl-zoo3's ``hyperparams/qrdqn.yml``
(https://github.com/DLR-RM/rl-baselines3-zoo, MIT). ``n_timesteps``, ``n_envs``, ``normalize`` and
``atari`` are run settings (``tuned_hyperparameters`` splits them off); the rest are constructor arguments.
MuJoCo entries are shipped under -v4 (rl-zoo3's id) and -v5. The ``"atari"`` entry applies to every Atari id.
``LEFT_OUT`` lists rl-zoo3's entries whose environment does not run here, with the reason.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEFT_OUT", "ZOO_HYPERPARAMETERS"]

ZOO_HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "atari": {
        "policy": "CnnPolicy",
        "n_timesteps": 10000000,
        "learning_starts": 50000,
        "exploration_fraction": 0.025,
        "optimize_memory_usage": False,
        "atari": True,
    },
    "CartPole-v1": {
        "n_timesteps": 50000,
        "learning_rate": 0.0023,
        "batch_size": 64,
        "buffer_size": 100000,
        "learning_starts": 1000,
        "gamma": 0.99,
        "target_update_interval": 10,
        "train_freq": 256,
        "gradient_steps": 128,
        "exploration_fraction": 0.16,
        "exploration_final_eps": 0.04,
        "policy_kwargs": {"net_arch": [256, 256], "n_quantiles": 10},
    },
    "MountainCar-v0": {
        "n_timesteps": 120000,
        "learning_rate": 0.004,
        "batch_size": 128,
        "buffer_size": 10000,
        "learning_starts": 1000,
        "gamma": 0.98,
        "target_update_interval": 600,
        "train_freq": 16,
        "gradient_steps": 8,
        "exploration_fraction": 0.2,
        "exploration_final_eps": 0.07,
        "policy_kwargs": {"net_arch": [256, 256], "n_quantiles": 25},
    },
    "LunarLander-v3": {
        "n_timesteps": 100000,
        "learning_rate": "lin_1.5e-3",
        "batch_size": 128,
        "buffer_size": 100000,
        "learning_starts": 10000,
        "gamma": 0.995,
        "target_update_interval": 1,
        "train_freq": 256,
        "gradient_steps": -1,
        "exploration_fraction": 0.24,
        "exploration_final_eps": 0.18,
        "policy_kwargs": {"net_arch": [256, 256], "n_quantiles": 170},
    },
    "Acrobot-v1": {
        "n_timesteps": 100000,
        "learning_rate": 0.00063,
        "batch_size": 128,
        "buffer_size": 50000,
        "learning_starts": 0,
        "gamma": 0.99,
        "target_update_interval": 250,
        "train_freq": 4,
        "gradient_steps": -1,
        "exploration_fraction": 0.12,
        "exploration_final_eps": 0.1,
        "policy_kwargs": {"net_arch": [256, 256], "n_quantiles": 25},
    },
}

LEFT_OUT: dict[str, str] = {}
