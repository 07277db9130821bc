"""RecurrentPPO hyperparameters tuned by rl-zoo3 (``hyperparams/ppo_lstm.yml`` in
https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

The ``*NoVel`` ids are registered by ``lit_sb3_ppo_recurrent.envs`` (rl-zoo3 zeroes the velocities, these
envs drop them: the same information). Entries that use observation normalization (``normalize: true``)
are left out until lit-sb3 offers it. rl-zoo3 uses the default policy (``MlpLstmPolicy``, 256 LSTM units)
for both entries.
"""

from __future__ import annotations

from typing import Any

TUNED: dict[str, dict[str, Any]] = {
    "CartPoleNoVel-v1": {
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
    "PendulumNoVel-v1": {
        "n_envs": 4,
        "n_timesteps": 100_000,
        "n_steps": 1024,
        "gae_lambda": 0.95,
        "gamma": 0.9,
        "n_epochs": 10,
        "ent_coef": 0.0,
        "learning_rate": 1e-3,
        "clip_range": 0.2,
        "use_sde": True,
        "sde_sample_freq": 4,
    },
}
