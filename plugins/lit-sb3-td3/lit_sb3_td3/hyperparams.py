"""TD3 hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/td3.yml),
as plain data. ``n_timesteps`` and ``n_envs`` are run settings, the rest constructor arguments; rl-zoo3's
``noise_type``/``noise_std`` become an ``action_noise`` spec.
"""

from __future__ import annotations

from typing import Any

from lit_sb3_td3.zoo_hyperparams import ZOO_HYPERPARAMETERS

TUNED: dict[str, dict[str, Any]] = {
    "Pendulum-v1": {
        "n_timesteps": 20_000,
        "gamma": 0.98,
        "buffer_size": 200_000,
        "learning_starts": 10_000,
        "action_noise": {"type": "normal", "sigma": 0.1},
        "gradient_steps": 1,
        "train_freq": 1,
        "learning_rate": 1e-3,
        "policy_kwargs": {"net_arch": [400, 300]},
    },
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
