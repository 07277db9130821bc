"""A2C hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

"n_timesteps" is the step budget; "n_envs" and "normalize" (observation and reward normalization, as
SB3's VecNormalize) configure RLEnvDataModule; every other key is a constructor argument
(``lit_sb3.tuned_hyperparameters("a2c", env_id)`` does the split).
"""

from __future__ import annotations

from typing import Any

from lit_sb3_a2c.zoo_hyperparams import ZOO_HYPERPARAMETERS

__all__ = ["TUNED"]

TUNED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {
        "n_envs": 8,
        "n_timesteps": 500_000,
        "ent_coef": 0.0,
    },
    "LunarLander-v3": {  # rl-zoo3 lists it as LunarLander-v2, the same task before gymnasium 1.0
        "n_envs": 8,
        "n_timesteps": 200_000,
        "gamma": 0.995,
        "n_steps": 5,
        "learning_rate": "lin_0.00083",
        "ent_coef": 0.00001,
    },
    "Pendulum-v1": {
        "normalize": True,
        "n_envs": 8,
        "n_timesteps": 1_000_000,
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
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
