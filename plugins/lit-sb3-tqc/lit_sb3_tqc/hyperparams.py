"""TQC hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/tqc.yml),
as plain data. ``n_timesteps`` and ``n_envs`` are run settings, the rest constructor arguments.

Only entries checked here are listed: Pendulum-v1 (the settings are sb3-contrib's defaults but for the
learning rate; ``tests/test_tqc.py`` runs them for three seeds).
"""

from __future__ import annotations

from typing import Any

from lit_sb3_tqc.zoo_hyperparams import ZOO_HYPERPARAMETERS

TUNED: dict[str, dict[str, Any]] = {
    "Pendulum-v1": {
        "n_timesteps": 20_000,
        "learning_rate": 1e-3,
    },
}

# Every other rl-zoo3 entry whose environment runs here, generated from rl-zoo3's files
# (scripts/import_zoo_hyperparams.py); the entries above, checked by this plugin's tests, win.
TUNED = {**ZOO_HYPERPARAMETERS, **TUNED}
