"""TRPO hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

"n_envs" and "n_timesteps" are run settings, every other key a constructor argument. rl-zoo3 trains
Pendulum-v1 with gSDE (``use_sde: true, sde_sample_freq: 4``), which lit-sb3 0.1 does not have yet; the
entry keeps the rest and explores with the default diagonal Gaussian. Entries that rl-zoo3 runs with
observation/reward normalization (Acrobot, MountainCar, ...) wait for that feature and are left out.
"""

from __future__ import annotations

from typing import Any

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
