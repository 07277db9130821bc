"""What ``RLTrainer`` does when a run goes wrong: interrupted, diverged, or handed an unsafe checkpoint.

* ``InterruptCheckpoint``: on Ctrl+C (``KeyboardInterrupt``) or ``SIGTERM`` during ``fit``, save a
  checkpoint that ``trainer.fit(..., ckpt_path=...)`` (or ``ckpt_path="last"``) resumes from. Lightning
  itself then finalizes the loggers, the datamodule closes its envs, and the process exits with
  Lightning's status (1 after Ctrl+C; a ``SIGTERMException``, a ``SystemExit``, after SIGTERM).
* ``diagnose_non_finite``: turn torch's "probability tensor contains either inf, nan" (raised deep in a
  distribution when NaN reaches the policy) into a ``NonFiniteError`` that says where the NaN came from.
* ``BudgetSpentAtStart``: resuming a run whose budget is spent trains nothing (not one more iteration).

Unsafe and damaged checkpoints are refused where every checkpoint is read,
:func:`lit_sb3_core.engine.checkpoint_io.read_checkpoint`.

On-policy rollouts also poll Lightning's SIGTERM flag at every environment step (single-process runs), so a
SIGTERM stops a long rollout at the next step instead of after it; the step counter is rolled back to the
start of the unfinished rollout, so the checkpoint describes the last complete iteration.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from lit_sb3_core.engine.lightning_internals import SIGTERMException
from lit_sb3_core.errors import NonFiniteError

__all__ = ["INTERRUPTED_CHECKPOINT", "BudgetSpentAtStart", "InterruptCheckpoint", "diagnose_non_finite"]

_log = logging.getLogger("lit_sb3_core")

INTERRUPTED_CHECKPOINT = "interrupted.ckpt"


class InterruptCheckpoint(Callback):
    """Save ``<checkpoint dir>/interrupted.ckpt`` when ``fit`` is interrupted by Ctrl+C or SIGTERM.

    The folder is the ``ModelCheckpoint``'s (``<log_dir>/checkpoints`` by default), so
    ``ckpt_path="last"`` finds it. Other exceptions save nothing: the state after a crash may be the cause
    (use Lightning's ``OnExceptionCheckpoint`` to save on every exception). A failure to save is logged and
    never hides the interruption.
    """

    def __init__(self, dirpath: str | Path | None = None) -> None:
        self.dirpath = dirpath
        self.saved_path: Path | None = None

    def _target(self, trainer: Any) -> Path:
        if self.dirpath is not None:
            return Path(self.dirpath) / INTERRUPTED_CHECKPOINT
        checkpoint = trainer.checkpoint_callback
        if isinstance(checkpoint, ModelCheckpoint) and checkpoint.dirpath:
            return Path(checkpoint.dirpath) / INTERRUPTED_CHECKPOINT
        return Path(trainer.log_dir or trainer.default_root_dir) / "checkpoints" / INTERRUPTED_CHECKPOINT

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        if not isinstance(exception, (KeyboardInterrupt, SIGTERMException)):
            return
        if trainer.state.fn != "fit" or getattr(pl_module, "policy", None) is None:
            return
        what = "Ctrl+C" if isinstance(exception, KeyboardInterrupt) else "SIGTERM"
        target = self._target(trainer)
        try:
            trainer.save_checkpoint(target, weights_only=False)
        except Exception as exc:
            _log.warning("lit-sb3: interrupted by %s, but the checkpoint could not be saved: %s", what, exc)
            return
        self.saved_path = target
        if trainer.is_global_zero:
            _log.warning(
                "lit-sb3: interrupted by %s after %d environment steps; saved %s. Resume with "
                "trainer.fit(model, datamodule=..., ckpt_path=%r) (or ckpt_path='last').",
                what,
                int(getattr(pl_module, "num_timesteps", 0)),
                target,
                str(target),
            )


def _non_finite_rows(obs: Any) -> list[int]:
    if isinstance(obs, Mapping):
        return sorted({row for value in obs.values() for row in _non_finite_rows(value)})
    array = np.asarray(obs)
    if array.dtype.kind not in "fc" or array.ndim == 0:
        return []
    bad = ~np.isfinite(array).reshape(len(array), -1).all(axis=1)
    return np.flatnonzero(bad).tolist()


def diagnose_non_finite(model: Any, exc: BaseException) -> NonFiniteError | None:
    """A ``NonFiniteError`` explaining ``exc`` when NaN/inf in the observations or parameters caused it."""
    summary = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    rows = (
        _non_finite_rows(getattr(model, "last_obs", None))
        if getattr(model, "last_obs", None) is not None
        else []
    )
    if rows:
        return NonFiniteError(
            f"Training stopped: the training env {rows[0]}"
            + (f" (and envs {rows[1:]})" if len(rows) > 1 else "")
            + f" returned an observation holding NaN or infinity, which the policy cannot act on ({summary}). "
            "Find where it comes from with RLEnvDataModule(check_finite=True), which stops at the first "
            "non-finite observation or reward and names the env and the action; then fix the environment or "
            "sanitize its output with a wrapper.",
            what="observation",
            env_index=rows[0],
        )
    policy = getattr(model, "policy", None)
    if isinstance(policy, torch.nn.Module):
        bad = [name for name, p in policy.named_parameters() if not bool(torch.isfinite(p).all())]
        if bad:
            return NonFiniteError(
                f"Training diverged: after {int(getattr(model, 'num_timesteps', 0))} environment steps the "
                f"policy's parameters hold NaN or infinity ({', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''}), "
                f"so it cannot act ({summary}). Usual causes: infinite or huge rewards or observations "
                "(RLEnvDataModule(check_finite=True) stops at the first one and names the env and the action), "
                "or a learning rate that is too high; normalize=True and max_grad_norm help. "
                "RLTrainer(detect_anomaly=True) names the operation that produced the first NaN gradient.",
                what="parameters",
            )
    return None


class BudgetSpentAtStart(Callback):
    """Stop ``fit`` before its first iteration when the step budget is already spent.

    Resuming a finished run (``ckpt_path=`` of a run that reached ``max_steps``) would otherwise collect and
    train one more iteration before the budget check at its end. ``RLTrainer`` installs this callback.
    """

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        total = getattr(trainer, "rl_total_timesteps", None)
        done = int(getattr(pl_module, "num_timesteps", 0))
        if total is not None and trainer.rl_budget_reached_at(done):
            trainer.should_stop = True
            if trainer.is_global_zero:
                _log.info(
                    "lit-sb3: the run has already taken %d of its %d environment steps; nothing to train. Raise "
                    "RLTrainer(max_steps=...) to train further.",
                    done,
                    total,
                )
