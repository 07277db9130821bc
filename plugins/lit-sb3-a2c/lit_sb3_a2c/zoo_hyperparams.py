"""rl-zoo3 2.9.2's tuned hyperparameters for a2c, as plain data (generated: do not edit by hand).

Written by ``scripts/import_zoo_hyperparams.py`` from rl-zoo3's ``hyperparams/a2c.yml``
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
        "n_envs": 16,
        "n_timesteps": 10000000,
        "ent_coef": 0.01,
        "vf_coef": 0.25,
        "policy_kwargs": {"optimizer_class": "rmsprop_tf_like", "optimizer_kwargs": {"eps": 1e-05}},
        "atari": True,
    },
    "CartPole-v1": {"n_envs": 8, "n_timesteps": 500000, "ent_coef": 0.0},
    "LunarLander-v3": {
        "n_envs": 8,
        "n_timesteps": 200000,
        "gamma": 0.995,
        "n_steps": 5,
        "learning_rate": "lin_0.00083",
        "ent_coef": 1e-05,
    },
    "MountainCar-v0": {"normalize": True, "n_envs": 16, "n_timesteps": 1000000, "ent_coef": 0.0},
    "Acrobot-v1": {"normalize": True, "n_envs": 16, "n_timesteps": 500000, "ent_coef": 0.0},
    "Pendulum-v1": {
        "normalize": True,
        "n_envs": 8,
        "n_timesteps": 1000000,
        "ent_coef": 0.0,
        "max_grad_norm": 0.5,
        "n_steps": 8,
        "gae_lambda": 0.9,
        "vf_coef": 0.4,
        "gamma": 0.9,
        "use_rms_prop": True,
        "normalize_advantage": False,
        "learning_rate": "lin_7e-4",
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
    },
    "LunarLanderContinuous-v3": {
        "normalize": True,
        "n_envs": 4,
        "n_timesteps": 5000000,
        "ent_coef": 0.0,
        "max_grad_norm": 0.5,
        "n_steps": 8,
        "gae_lambda": 0.9,
        "vf_coef": 0.4,
        "gamma": 0.99,
        "use_rms_prop": True,
        "normalize_advantage": False,
        "learning_rate": "lin_7e-4",
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
    },
    "MountainCarContinuous-v0": {
        "normalize": True,
        "n_envs": 4,
        "n_steps": 100,
        "n_timesteps": 100000,
        "ent_coef": 0.0,
        "use_sde": True,
        "sde_sample_freq": 16,
        "policy_kwargs": {"log_std_init": 0.0, "ortho_init": False},
    },
    "BipedalWalker-v3": {
        "normalize": True,
        "n_envs": 16,
        "n_timesteps": 5000000,
        "ent_coef": 0.0,
        "max_grad_norm": 0.5,
        "n_steps": 8,
        "gae_lambda": 0.9,
        "vf_coef": 0.4,
        "gamma": 0.99,
        "use_rms_prop": True,
        "normalize_advantage": False,
        "learning_rate": "lin_0.00096",
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
    },
    "BipedalWalkerHardcore-v3": {
        "normalize": True,
        "n_envs": 32,
        "n_timesteps": 200000000,
        "ent_coef": 0.001,
        "max_grad_norm": 0.5,
        "n_steps": 8,
        "gae_lambda": 0.9,
        "vf_coef": 0.4,
        "gamma": 0.99,
        "use_rms_prop": True,
        "normalize_advantage": False,
        "learning_rate": "lin_0.0008",
        "use_sde": True,
        "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
    },
    "HalfCheetah-v4": {"normalize": True, "n_timesteps": 1000000},
    "HalfCheetah-v5": {"normalize": True, "n_timesteps": 1000000},
    "Ant-v4": {"normalize": True, "n_timesteps": 1000000},
    "Ant-v5": {"normalize": True, "n_timesteps": 1000000},
    "Hopper-v4": {"normalize": True, "n_timesteps": 1000000},
    "Hopper-v5": {"normalize": True, "n_timesteps": 1000000},
    "Walker2d-v4": {"normalize": True, "n_timesteps": 1000000},
    "Walker2d-v5": {"normalize": True, "n_timesteps": 1000000},
    "Humanoid-v4": {"normalize": True, "n_timesteps": 2000000},
    "Humanoid-v5": {"normalize": True, "n_timesteps": 2000000},
    "Swimmer-v4": {"normalize": True, "n_timesteps": 1000000, "gamma": 0.9999},
    "Swimmer-v5": {"normalize": True, "n_timesteps": 1000000, "gamma": 0.9999},
}

LEFT_OUT: dict[str, str] = {
    "HalfCheetahBulletEnv-v0": "PyBullet is not installed",
    "Walker2DBulletEnv-v0": "PyBullet is not installed",
    "AntBulletEnv-v0": "PyBullet is not installed",
    "HopperBulletEnv-v0": "PyBullet is not installed",
    "ReacherBulletEnv-v0": "PyBullet is not installed",
}
