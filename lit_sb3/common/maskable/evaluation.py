"""``sb3_contrib.common.maskable.evaluation``: ``evaluate_policy`` that applies the env's action masks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lit_sb3_core import evaluate_policy as _evaluate_policy

__all__ = ["evaluate_policy"]


def evaluate_policy(
    model: Any,
    env: Any,
    n_eval_episodes: int = 10,
    deterministic: bool = True,
    render: bool = False,
    callback: Callable[[dict[str, Any], dict[str, Any]], None] | None = None,
    reward_threshold: float | None = None,
    return_episode_rewards: bool = False,
    warn: bool = True,
    use_masking: bool = True,
) -> Any:
    """sb3-contrib's signature: with ``use_masking`` (the default) every action is chosen under the env's
    ``action_masks()`` of that step."""
    return _evaluate_policy(
        model,
        env,
        n_eval_episodes=n_eval_episodes,
        deterministic=deterministic,
        render=render,
        callback=callback,
        reward_threshold=reward_threshold,
        return_episode_rewards=return_episode_rewards,
        warn=warn,
        use_masking=use_masking,
    )
