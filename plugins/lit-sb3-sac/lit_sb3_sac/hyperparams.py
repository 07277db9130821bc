"""SAC hyperparameters tuned by rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo, hyperparams/sac.yml),
as plain data. ``n_timesteps`` and ``n_envs`` are run settings, the rest constructor arguments.

Only entries reproduced faithfully are listed: rl-zoo3's other classic-control entry
(MountainCarContinuous-v0) uses gSDE, which lit-sb3 0.1 does not offer yet.
"""

from __future__ import annotations

from typing import Any

TUNED: dict[str, dict[str, Any]] = {
    "Pendulum-v1": {
        "n_timesteps": 20_000,
        "learning_rate": 1e-3,
    },
}
