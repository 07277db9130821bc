"""Tuned MaskablePPO hyperparameters, as plain data.

rl-zoo3 (https://github.com/DLR-RM/rl-baselines3-zoo) ships no ``ppo_mask`` table: environments with invalid
actions are project-specific. The table is empty rather than filled with values nobody tuned; PPO's tuned
settings (``lit_sb3_ppo.hyperparams``) are the usual starting point.
"""

from __future__ import annotations

from typing import Any

TUNED: dict[str, dict[str, Any]] = {}
