"""rl-zoo3 2.9.2's tuned hyperparameters for crossq, as plain data (generated: do not edit by hand).

Written by ``scripts/import_zoo_hyperparams.py`` from rl-zoo3's ``hyperparams/crossq.yml``
(https://github.com/DLR-RM/rl-baselines3-zoo, MIT). ``n_timesteps``, ``n_envs``, ``normalize`` and
``atari`` are run settings (``tuned_hyperparameters`` splits them off); the rest are constructor arguments.
MuJoCo entries are shipped under -v4 (rl-zoo3's id) and -v5. The ``"atari"`` entry applies to every Atari id.
``LEFT_OUT`` lists rl-zoo3's entries whose environment does not run here, with the reason.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEFT_OUT", "ZOO_HYPERPARAMETERS"]

ZOO_HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "Pendulum-v1": {"n_timesteps": 20000, "policy_delay": 2, "policy_kwargs": {"net_arch": [256, 256]}},
    "LunarLanderContinuous-v3": {"n_timesteps": 200000, "buffer_size": 1000000, "learning_starts": 10000},
    "BipedalWalker-v3": {
        "n_timesteps": 200000,
        "buffer_size": 300000,
        "gamma": 0.98,
        "learning_starts": 10000,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [1024, 1024]}},
    },
    "HalfCheetah-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "HalfCheetah-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Ant-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Ant-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Hopper-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Hopper-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Walker2d-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Walker2d-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Humanoid-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Humanoid-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "HumanoidStandup-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "HumanoidStandup-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
    },
    "Swimmer-v4": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
        "gamma": 0.999,
    },
    "Swimmer-v5": {
        "buffer_size": 1000000,
        "learning_rate": 0.001,
        "learning_starts": 5000,
        "n_timesteps": 5000000,
        "policy_delay": 3,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
        "gamma": 0.999,
    },
}

LEFT_OUT: dict[str, str] = {
    "MountainCarContinuous-v0": "lit-sb3's CrossQ has no gSDE",
    "HalfCheetahBulletEnv-v0": "PyBullet is not installed",
    "AntBulletEnv-v0": "PyBullet is not installed",
    "HopperBulletEnv-v0": "PyBullet is not installed",
    "Walker2DBulletEnv-v0": "PyBullet is not installed",
}
