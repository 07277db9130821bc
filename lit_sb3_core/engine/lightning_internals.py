"""Where lit-sb3 relies on Lightning beyond its documented API: every such use, in one place, with its reason.

The rest of the core uses Lightning's public API only. Each entry here has a test in
``tests/test_lightning_internals.py`` that fails when the installed Lightning changes what the entry relies
on, so an upgrade breaks loudly here rather than quietly in a training loop.

``count_optimizer_step``
    The fast path's direct optimizer step (``sdk/fast_path.py``) keeps ``trainer.global_step`` counting by
    calling ``LightningOptimizer._on_before_step``/``_on_after_step``, the hooks the manual-optimization loop
    installs and ``LightningOptimizer.step`` calls around the step. The public ``step`` costs ~100 us more
    per update (a tenth of a DQN step on CartPole); ``has_step_counters`` turns the fast path off where a
    release lacks the hooks.
``HOOK_NAME_ATTRIBUTE``
    Lightning writes ``module._current_fx_name`` before and after every hook it calls. RLAlgorithm lets
    that write skip ``nn.Module.__setattr__``'s checks (``plain_attributes``); nothing reads the value, so a
    rename only costs the saving.
``SIGTERMException``
    A long rollout polls the public ``trainer.received_sigterm`` every environment step and raises
    Lightning's ``SIGTERMException`` (the exception Lightning's loops raise between batches, documented for
    ``Callback.on_exception``), so a SIGTERM stops the run at the next step with Lightning's usual shutdown.
``set_validation_interval``
    ``RLTrainer(eval_every_n_steps=...)`` becomes Lightning's ``val_check_interval`` (in iterations) once
    ``fit`` knows the algorithm's environment steps per iteration, after the Trainer is constructed. The fit
    loop reads ``trainer.val_check_interval`` and ``check_val_every_n_epoch`` when it sets up its data.
``is_overridden``
    Lightning's helper (``lightning.pytorch.utilities.model_helpers``) that tells whether a module or a
    callback overrides a hook; the fast path is taken only when no backward/step hook is overridden.
``ended_by_ctrl_c``
    After a Ctrl+C, Lightning shuts ``fit`` down gracefully and then calls ``sys.exit(1)``; SB3's ``learn``
    lets the ``KeyboardInterrupt`` through, so ``learn`` recognises that exit (``sdk/sb3_glue.py``) and
    re-raises the interrupt.

``attached_trainer`` is not an exception: it asks the public ``LightningModule.trainer`` property (which
raises when the module is attached to no Trainer) instead of reading ``module._trainer``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import lightning as L
from lightning.pytorch.utilities.exceptions import SIGTERMException
from lightning.pytorch.utilities.model_helpers import is_overridden

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer

__all__ = [
    "HOOK_NAME_ATTRIBUTE",
    "SIGTERMException",
    "attached_trainer",
    "count_optimizer_step",
    "ended_by_ctrl_c",
    "has_step_counters",
    "is_overridden",
    "set_validation_interval",
]

HOOK_NAME_ATTRIBUTE = "_current_fx_name"


def attached_trainer(module: L.LightningModule) -> L.Trainer | None:
    """The Trainer ``module`` is attached to, or ``None`` (public API: the ``trainer`` property raises then)."""
    try:
        return module.trainer
    except RuntimeError:
        return None


def has_step_counters(optimizer: LightningOptimizer) -> bool:
    """Whether this Lightning release has the step-counter hooks ``count_optimizer_step`` calls."""
    return hasattr(optimizer, "_on_before_step") and hasattr(optimizer, "_on_after_step")


def count_optimizer_step(optimizer: LightningOptimizer, step: Callable[[], Any]) -> None:
    """Run ``step`` (the wrapped torch optimizer's step) between Lightning's step-counter hooks."""
    optimizer._on_before_step()
    step()
    optimizer._on_after_step()


def ended_by_ctrl_c(exit_: SystemExit, trainer: L.Trainer) -> bool:
    """Whether ``exit_`` is Lightning's ``sys.exit(1)`` after shutting a run down on Ctrl+C."""
    return isinstance(exit_.__context__, KeyboardInterrupt) and trainer.interrupted


def set_validation_interval(trainer: L.Trainer, iterations: int) -> None:
    """Validate every ``iterations`` training batches, counted over the whole run (epochs never end in RL:
    this also makes ModelCheckpoint and EarlyStopping act after each validation)."""
    trainer.val_check_interval = iterations
    trainer.check_val_every_n_epoch = None
