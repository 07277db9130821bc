"""ARS hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/ars.yml).

Plain data, as rl-zoo3 writes it, for the environments gymnasium provides. "n_envs", "n_timesteps" and
"normalize" are run settings (datamodule and trainer), the rest ARS's arguments. rl-zoo3's
``normalize: "dict(norm_obs=True, norm_reward=False)"`` is ``"normalize": "observation"`` (ARS-v2).
"""

from __future__ import annotations

from typing import Any

from lit_sb3_ars.zoo_hyperparams import ZOO_HYPERPARAMETERS

# rl-zoo3's "&pendulum-params" anchor, which several entries extend.
_PENDULUM: dict[str, Any] = {
    "n_envs": 1,
    "n_timesteps": 2_000_000,
    "policy": "MlpPolicy",
    "normalize": "observation",
    "learning_rate": 0.018,
    "n_delta": 4,
    "n_top": 1,
    "delta_std": 0.1,
    "policy_kwargs": {"net_arch": [16]},
    "zero_policy": False,
}

# MuJoCo settings rl-zoo3 marks "closest to the original paper".
_MUJOCO: dict[str, dict[str, Any]] = {
    "Swimmer-v4": {"n_timesteps": 2_000_000, "learning_rate": 0.02, "delta_std": 0.01, "n_delta": 1, "n_top": 1,
                   "alive_bonus_offset": 0},
    "Hopper-v4": {"n_timesteps": 7_000_000, "learning_rate": 0.01, "delta_std": 0.025, "n_delta": 8, "n_top": 4,
                  "alive_bonus_offset": -1, "normalize": "observation"},
    "HalfCheetah-v4": {"n_timesteps": 12_500_000, "learning_rate": 0.02, "delta_std": 0.03, "n_delta": 32,
                       "n_top": 4, "alive_bonus_offset": 0, "normalize": "observation"},
    "Walker2d-v4": {"n_timesteps": 75_000_000, "learning_rate": 0.03, "delta_std": 0.025, "n_delta": 40,
                    "n_top": 30, "alive_bonus_offset": -1, "normalize": "observation"},
    "Ant-v4": {"n_timesteps": 75_000_000, "learning_rate": 0.015, "delta_std": 0.025, "n_delta": 60, "n_top": 20,
               "alive_bonus_offset": -1, "normalize": "observation"},
    "Humanoid-v4": {"n_timesteps": 250_000_000, "learning_rate": 0.02, "delta_std": 0.0075, "n_delta": 256,
                    "n_top": 256, "alive_bonus_offset": -5, "normalize": "observation"},
}  # fmt: skip

TUNED: dict[str, dict[str, Any]] = {
    "CartPole-v1": {"n_envs": 1, "n_timesteps": 50_000, "policy": "LinearPolicy", "n_delta": 2},
    "Pendulum-v1": dict(_PENDULUM),
    "LunarLanderContinuous-v3": {**_PENDULUM, "n_timesteps": 2_000_000},
    "Acrobot-v1": {**_PENDULUM, "n_timesteps": 500_000},
    "MountainCar-v0": {**_PENDULUM, "n_delta": 8, "n_timesteps": 500_000},
    "MountainCarContinuous-v0": {**_PENDULUM, "n_timesteps": 500_000, "delta_std": 0.2},
    **{env_id: {"n_envs": 1, "policy": "LinearPolicy", **values} for env_id, values in _MUJOCO.items()},
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
