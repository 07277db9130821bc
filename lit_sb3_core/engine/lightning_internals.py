"""Where lit-sb3 relies on Lightning beyond its documented API: every such use, in one place, with its reason.

The rest of the core uses Lightning's public API only. Each entry here has a test in
``tests/engine/test_lightning_internals.py`` that fails when the installed Lightning changes what the entry relies
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

``module_from_checkpoint``, ``migrate_checkpoint``, ``DEFAULT_MAP_LOCATION``
    ``Algo.load_from_checkpoint`` reads the file through lit-sb3's own reader (``engine/checkpoint_io.py``:
    always ``weights_only``, remote files in memory, every field validated) and then does what Lightning's
    ``_load_from_checkpoint`` does after its read: upgrade a checkpoint of an older Lightning
    (``lightning.pytorch.utilities.migration.utils._pl_migrate_checkpoint``) and rebuild the module from its
    hyperparameters and weights (``lightning.pytorch.core.saving._load_state``), reading with Lightning's
    default map location (``_default_map_location``). Lightning's public ``load_from_checkpoint`` reads the
    file itself, so it cannot be given an already validated checkpoint.

``attached_trainer`` is not an exception: it asks the public ``LightningModule.trainer`` property (which
raises when the module is attached to no Trainer) instead of reading ``module._trainer``; nor is
``detached_from_trainer``, which assigns the public property (its setter takes ``None``). Neither are
``trainer_callbacks`` and ``trainer_profiler``: public Trainer attributes that Lightning sets in its
connectors, where type checkers do not see them; they are read, typed, here once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

import lightning as L
from lightning.pytorch.core.saving import _default_map_location, _load_state
from lightning.pytorch.utilities.exceptions import SIGTERMException
from lightning.pytorch.utilities.migration.utils import _pl_migrate_checkpoint
from lightning.pytorch.utilities.model_helpers import is_overridden

if TYPE_CHECKING:
    from lightning.pytorch.core.optimizer import LightningOptimizer

__all__ = [
    "DEFAULT_MAP_LOCATION",
    "HOOK_NAME_ATTRIBUTE",
    "SIGTERMException",
    "attached_trainer",
    "count_optimizer_step",
    "detached_from_trainer",
    "ended_by_ctrl_c",
    "has_step_counters",
    "is_overridden",
    "migrate_checkpoint",
    "module_from_checkpoint",
    "set_validation_interval",
    "trainer_callbacks",
    "trainer_profiler",
]

HOOK_NAME_ATTRIBUTE = "_current_fx_name"
DEFAULT_MAP_LOCATION = _default_map_location


def attached_trainer(module: L.LightningModule) -> L.Trainer | None:
    """The Trainer ``module`` is attached to, or ``None`` (public API: the ``trainer`` property raises then)."""
    try:
        return module.trainer
    except RuntimeError:
        return None


@contextmanager
def detached_from_trainer(module: L.LightningModule) -> Iterator[None]:
    """Run hooks outside any Trainer (SB3's ``_setup_learn``): ``module`` is attached to none inside, and
    to the Trainer it had (the last ``learn``'s, whose optimizers it keeps) again afterwards."""
    trainer = attached_trainer(module)
    module.trainer = None
    try:
        yield
    finally:
        module.trainer = trainer


def trainer_callbacks(trainer: L.Trainer) -> list[L.Callback]:
    """``trainer.callbacks``, typed (Lightning sets it in a connector, out of type checkers' sight)."""
    callbacks: list[L.Callback] = cast(Any, trainer).callbacks
    return callbacks


def trainer_profiler(trainer: L.Trainer) -> Any:
    """``trainer.profiler``, typed (Lightning sets it in a connector, out of type checkers' sight)."""
    return cast(Any, trainer).profiler


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


def migrate_checkpoint(checkpoint: dict[str, Any], path: Any = None) -> dict[str, Any]:
    """``checkpoint`` upgraded to this Lightning's format (a no-op for one it wrote)."""
    return _pl_migrate_checkpoint(checkpoint, checkpoint_path=path)


def module_from_checkpoint(
    cls: type, checkpoint: dict[str, Any], strict: bool | None = None, **kwargs: Any
) -> Any:
    """``cls`` rebuilt from ``checkpoint``'s hyperparameters (``kwargs`` override them), its weights loaded and
    its ``on_load_checkpoint`` called, as ``load_from_checkpoint`` does after reading the file."""
    return _load_state(cls, checkpoint, strict=strict, **kwargs)
