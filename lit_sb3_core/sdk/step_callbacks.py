"""Stable-Baselines3's callback rhythm inside the collection loops: ``on_step`` after every vector-env step.

Lightning calls callbacks once per batch (an iteration, or several); SB3's ``BaseCallback`` is called after
every ``env.step`` with the loop's local variables (``self.locals``), around every rollout
(``on_rollout_start``/``on_rollout_end``), and stops training at the step where ``_on_step`` returns
``False``. :class:`StepCallbacks` holds the run's callbacks that follow that protocol
(``lit_sb3_core.sb3.callbacks.RLCallback`` and its subclasses, found among the trainer's callbacks when
training starts) and is what the loops call.

It costs nothing when empty: a loop tests ``if callbacks:`` once per step and builds the locals only when
there is someone to give them to (``locals`` turns gymnasium's infos into SB3's list with
``lit_sb3_core.sb3.vec_env_views.sb3_infos``). An algorithm with its own loop calls the same methods
(see ARS).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["StepCallbacks"]


class StepCallbacks:
    """The callbacks called on every environment step of a run, in the trainer's order.

    ``bool(callbacks)`` is False when there are none; the loops skip everything then.
    """

    __slots__ = ("callbacks", "calls")

    def __init__(self, callbacks: Iterable[Any] = ()) -> None:
        self.callbacks = tuple(callbacks)
        self.calls = 0  # steps dispatched so far (callbacks of algorithms without a step loop check it)

    def __bool__(self) -> bool:
        return bool(self.callbacks)

    def __len__(self) -> int:
        return len(self.callbacks)

    @staticmethod
    def locals(algorithm: Any, **values: Any) -> dict[str, Any]:
        """The locals SB3's collection loops give callbacks (``self.locals``), from a loop's variables.

        ``infos`` (gymnasium's dict of arrays, with ``terminated``/``truncated``) become SB3's list of dicts,
        ``env`` the training env as ``algorithm.get_env()`` gives it. Build it only when there are callbacks.
        """
        terminated, truncated = values.pop("terminated", None), values.pop("truncated", None)
        infos = values.get("infos")
        if isinstance(infos, dict) and terminated is not None and truncated is not None:
            from lit_sb3_core.sb3.vec_env_views import sb3_infos

            values["infos"] = sb3_infos(infos, terminated, truncated)
        values["env"] = algorithm.get_env()
        return {"self": algorithm, **values}

    def rollout_start(self) -> None:
        for callback in self.callbacks:
            callback.on_rollout_start()

    def step(self, step_locals: dict[str, Any]) -> bool:
        """Give every callback the step's locals and call ``on_step``; False if any asks to stop.

        All callbacks are called even when an earlier one asks to stop, as SB3's ``CallbackList`` does.
        """
        self.calls += 1
        keep_training = True
        for callback in self.callbacks:
            callback.update_locals(step_locals)
            keep_training = bool(callback.on_step()) and keep_training
        return keep_training

    def rollout_end(self, rollout_locals: dict[str, Any] | None = None) -> None:
        for callback in self.callbacks:
            if rollout_locals:
                callback.update_locals(rollout_locals)
            callback.on_rollout_end()
