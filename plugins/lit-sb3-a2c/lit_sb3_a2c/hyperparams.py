"""A2C hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

"n_envs" and "n_timesteps" are run settings, every other key a constructor argument. rl-zoo3 also trains
Pendulum-v1 with observation/reward normalization (``normalize: true``) and gSDE (``use_sde: true``);
lit-sb3 0.1 has neither, so those two keys are left out and the entry learns more slowly than rl-zoo3's.
"""

from __future__ import annotations

from typing import Any

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
        "policy_kwargs": {"log_std_init": -2, "ortho_init": False},
    },
}
