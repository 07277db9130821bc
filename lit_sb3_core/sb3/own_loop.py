"""SB3's own training loop as user code runs it on a model: ``_setup_learn``, then ``collect_rollouts``.

SB3's ``learn`` is a loop over ``collect_rollouts`` and ``train``; its tests and some users' training loops
call those steps themselves. lit-sb3's algorithms provide them as views over their own loop (``learn``
still runs the loop through Lightning): ``collect_rollouts`` collects from the model's training env into
the model's buffer, so the env and buffer it is given must be those. ``check_own_loop`` says so when they
are not, and ``RolloutReturn`` is what the off-policy ``collect_rollouts`` returns, as in SB3.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["RolloutReturn", "check_own_loop"]


class RolloutReturn(NamedTuple):
    """SB3's result of an off-policy ``collect_rollouts``: steps taken over all envs, episodes finished,
    and whether training goes on (False: a callback asked to stop)."""

    episode_timesteps: int
    n_episodes: int
    continue_training: bool


def check_own_loop(model: Any, env: Any, buffer: Any, own_buffer: Any, callback: Any) -> None:
    """Refuse, with the fix, what ``collect_rollouts`` cannot fill: a model whose run ``_setup_learn`` has not
    prepared, an env other than its training env, a buffer other than its own, a callback not SB3's."""
    from lit_sb3_core.sb3.callbacks import RLCallback

    name = type(model).__name__
    if model.vector_env is None or own_buffer is None:
        raise RuntimeError(
            f"{name}.collect_rollouts needs a prepared run: call model._setup_learn(total_timesteps) first "
            "(as SB3's learn does)."
        )
    if not model._is_training_env(env):
        raise ValueError(
            f"collect_rollouts steps the model's training env: pass model.get_env(), got {type(env).__name__} "
            "(model.set_env(env), then _setup_learn, to collect from another)."
        )
    if buffer is not own_buffer:
        raise ValueError(
            f"collect_rollouts fills the model's own buffer: pass the model's, got {type(buffer).__name__}."
        )
    if callback is not None and not isinstance(callback, RLCallback):
        raise TypeError(
            f"collect_rollouts takes the BaseCallback _setup_learn returns, got {type(callback).__name__}."
        )
