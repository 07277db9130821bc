"""CrossQ hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/crossq.yml),
as plain data. ``n_timesteps`` and ``n_envs`` are run settings, the rest constructor arguments; everything
not listed keeps CrossQ's defaults.

Only entries reproduced faithfully are listed: rl-zoo3's MountainCarContinuous-v0 entry and its PyBullet
entries use gSDE, which lit-sb3's CrossQ does not offer yet (``CrossQ(use_sde=True)`` is refused).
"""

from __future__ import annotations

import copy
from typing import Any

from lit_sb3_crossq.zoo_hyperparams import ZOO_HYPERPARAMETERS

_MUJOCO: dict[str, Any] = {
    "n_timesteps": 5_000_000,
    "buffer_size": 1_000_000,
    "learning_rate": 1e-3,
    "learning_starts": 5000,
    "policy_delay": 3,
    "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [2048, 2048]}},
}

TUNED: dict[str, dict[str, Any]] = {
    "Pendulum-v1": {
        "n_timesteps": 20_000,
        "policy_delay": 2,
        "policy_kwargs": {"net_arch": [256, 256]},
    },
    "LunarLanderContinuous-v3": {
        "n_timesteps": 200_000,
        "buffer_size": 1_000_000,
        "learning_starts": 10_000,
    },
    "BipedalWalker-v3": {
        "n_timesteps": 200_000,
        "buffer_size": 300_000,
        "gamma": 0.98,
        "learning_starts": 10_000,
        "policy_kwargs": {"net_arch": {"pi": [256, 256], "qf": [1024, 1024]}},
    },
    **{
        env_id: copy.deepcopy(_MUJOCO)
        for env_id in (
            "HalfCheetah-v4",
            "Ant-v4",
            "Hopper-v4",
            "Walker2d-v4",
            "Humanoid-v4",
            "HumanoidStandup-v4",
        )
    },
    "Swimmer-v4": {**copy.deepcopy(_MUJOCO), "gamma": 0.999},
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
