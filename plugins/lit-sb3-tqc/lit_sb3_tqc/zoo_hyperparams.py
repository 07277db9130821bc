"""rl-zoo3 2.9.2's tuned hyperparameters for tqc, as plain data (generated: do not edit by hand).

Written by ``scripts/import_zoo_hyperparams.py`` from rl-zoo3's ``hyperparams/tqc.yml``
(https://github.com/DLR-RM/rl-baselines3-zoo, MIT). ``n_timesteps``, ``n_envs``, ``normalize`` and
``atari`` are run settings (``tuned_hyperparameters`` splits them off); the rest are constructor arguments.
MuJoCo entries are shipped under -v4 (rl-zoo3's id) and -v5. The ``"atari"`` entry applies to every Atari id.
``LEFT_OUT`` lists rl-zoo3's entries whose environment does not run here, with the reason.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEFT_OUT", "ZOO_HYPERPARAMETERS"]

ZOO_HYPERPARAMETERS: dict[str, dict[str, Any]] = {
    "MountainCarContinuous-v0": {
        "n_timesteps": 50000,
        "learning_rate": 0.0003,
        "buffer_size": 50000,
        "batch_size": 512,
        "ent_coef": 0.1,
        "train_freq": 32,
        "gradient_steps": 32,
        "gamma": 0.9999,
        "tau": 0.01,
        "learning_starts": 0,
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -3.67, "net_arch": [64, 64], "use_expln": True},
    },
    "Pendulum-v1": {"n_timesteps": 20000, "learning_rate": 0.001},
    "LunarLanderContinuous-v3": {
        "n_timesteps": 500000,
        "learning_rate": "lin_7.3e-4",
        "buffer_size": 1000000,
        "batch_size": 256,
        "ent_coef": "auto",
        "gamma": 0.99,
        "tau": 0.01,
        "train_freq": 1,
        "gradient_steps": 1,
        "learning_starts": 10000,
        "policy_kwargs": {"net_arch": [400, 300]},
    },
    "BipedalWalker-v3": {
        "n_timesteps": 500000,
        "learning_rate": 0.00073,
        "buffer_size": 300000,
        "batch_size": 256,
        "ent_coef": "auto",
        "gamma": 0.98,
        "tau": 0.02,
        "train_freq": 64,
        "gradient_steps": 64,
        "learning_starts": 10000,
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -3, "net_arch": [400, 300], "use_expln": True},
    },
    "BipedalWalkerHardcore-v3": {
        "n_timesteps": 2000000,
        "learning_rate": "lin_7.3e-4",
        "buffer_size": 1000000,
        "batch_size": 256,
        "ent_coef": "auto",
        "gamma": 0.99,
        "tau": 0.01,
        "train_freq": 1,
        "gradient_steps": 1,
        "learning_starts": 10000,
        "policy_kwargs": {"net_arch": [400, 300]},
    },
    "HalfCheetah-v4": {"n_timesteps": 1000000, "learning_starts": 10000},
    "HalfCheetah-v5": {"n_timesteps": 1000000, "learning_starts": 10000},
    "Ant-v4": {"n_timesteps": 1000000, "learning_starts": 10000},
    "Ant-v5": {"n_timesteps": 1000000, "learning_starts": 10000},
    "Hopper-v4": {"n_timesteps": 1000000, "learning_starts": 10000, "top_quantiles_to_drop_per_net": 5},
    "Hopper-v5": {"n_timesteps": 1000000, "learning_starts": 10000, "top_quantiles_to_drop_per_net": 5},
    "Walker2d-v4": {"n_timesteps": 1000000, "learning_starts": 10000},
    "Walker2d-v5": {"n_timesteps": 1000000, "learning_starts": 10000},
    "Humanoid-v4": {"n_timesteps": 2000000, "learning_starts": 10000},
    "Humanoid-v5": {"n_timesteps": 2000000, "learning_starts": 10000},
    "Swimmer-v4": {"n_timesteps": 1000000, "learning_starts": 10000, "gamma": 0.999},
    "Swimmer-v5": {"n_timesteps": 1000000, "learning_starts": 10000, "gamma": 0.999},
}

LEFT_OUT: dict[str, str] = {
    "HalfCheetahBulletEnv-v0": "PyBullet is not installed",
    "AntBulletEnv-v0": "PyBullet is not installed",
    "HopperBulletEnv-v0": "PyBullet is not installed",
    "Walker2DBulletEnv-v0": "PyBullet is not installed",
    "ReacherBulletEnv-v0": "PyBullet is not installed",
    "HumanoidBulletEnv-v0": "PyBullet is not installed",
    "InvertedDoublePendulumBulletEnv-v0": "PyBullet is not installed",
    "InvertedPendulumSwingupBulletEnv-v0": "PyBullet is not installed",
    "MinitaurBulletEnv-v0": "PyBullet is not installed",
    "FetchReach-v1": "the environment's package is not installed",
    "FetchPush-v1": "the environment's package is not installed",
    "FetchSlide-v1": "the environment's package is not installed",
    "FetchPickAndPlace-v1": "the environment's package is not installed",
    "PandaReach-v1": "the environment's package is not installed",
    "PandaPush-v1": "the environment's package is not installed",
    "PandaSlide-v1": "the environment's package is not installed",
    "PandaPickAndPlace-v1": "the environment's package is not installed",
    "PandaStack-v1": "the environment's package is not installed",
    "parking-v0": "the environment's package is not installed",
    "CarRacing-v0": "needs rl-zoo3's own wrappers (FrameSkip, resize, history)",
    "A1Walking-v0": "the environment's package is not installed",
    "RocketLander-v0": "the environment's package is not installed",
}
