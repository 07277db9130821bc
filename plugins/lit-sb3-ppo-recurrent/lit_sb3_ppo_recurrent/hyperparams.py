"""RecurrentPPO hyperparameters tuned by rl-zoo3 (``hyperparams/ppo_lstm.yml`` in
https://github.com/DLR-RM/rl-baselines3-zoo), as plain data.

The ``*NoVel`` ids are registered by ``lit_sb3_ppo_recurrent.envs`` (rl-zoo3 zeroes the velocities, these
envs drop them: the same information). ``"n_envs"``, ``"n_timesteps"`` and ``"normalize"`` are run
settings (datamodule and trainer: ``RLEnvDataModule(n_envs=..., normalize=...)``,
``RLTrainer(max_steps=...)``); the rest are RecurrentPPO's constructor arguments. rl-zoo3 normalizes
only the observations of ``CartPoleNoVel-v1`` (VecNormalize with ``norm_obs=True, norm_reward=False``:
here ``"normalize": "observation"``) and gives it a 64-unit LSTM with 64-unit ReLU heads;
``PendulumNoVel-v1`` uses the default policy (``MlpLstmPolicy``, 256 LSTM units).
"""

from __future__ import annotations

from typing import Any

from lit_sb3_ppo_recurrent.zoo_hyperparams import ZOO_HYPERPARAMETERS

TUNED: dict[str, dict[str, Any]] = {
    "CartPoleNoVel-v1": {
        "n_envs": 8,
        "n_timesteps": 100_000,
        "normalize": "observation",
        "n_steps": 32,
        "batch_size": 256,
        "gae_lambda": 0.8,
        "gamma": 0.98,
        "n_epochs": 20,
        "ent_coef": 0.0,
        "learning_rate": "lin_0.001",
        "clip_range": "lin_0.2",
        "policy_kwargs": {
            "ortho_init": False,
            "activation_fn": "relu",
            "lstm_hidden_size": 64,
            "enable_critic_lstm": True,
            "net_arch": {"pi": [64], "vf": [64]},
        },
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

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
