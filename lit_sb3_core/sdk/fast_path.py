"""The performance fast path of RLAlgorithm, in one place.

Everything here exists for speed alone and changes no result; with it switched off (a hook, a callback, a
profiler, DDP or a precision plugin that needs Lightning) the algorithm takes Lightning's public path.

* ``plain_attributes``: values written every environment step skip ``nn.Module.__setattr__``'s checks.
* ``_set_policy_mode``: train/eval flags recorded once at the start of training and replayed, instead of
  ``nn.Module.train`` walking every submodule twice an iteration.
* ``plain_calls``: while no module of the policy has hooks, its forward passes skip ``nn.Module.__call__``.
* ``plain_calls`` also routes fp32 ``nn.Linear`` layers through oneDNN when that opt-in route is switched on
  (``lit_sb3_core.nets.fast_matmul``).
* ``optimizer_step``: zero, backward, clip and step call torch directly where Lightning's wrappers would
  only call default (no-op) hooks; Lightning's step counters are kept. The step itself skips
  ``Optimizer.step``'s Python where it cannot matter (``lit_sb3_core.sdk.direct_steps``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, ClassVar, cast

import lightning as L
import torch
from lightning.pytorch.core.optimizer import LightningOptimizer
from torch import nn

from lit_sb3_core.engine.lightning_internals import (
    HOOK_NAME_ATTRIBUTE,
    count_optimizer_step,
    has_step_counters,
    is_overridden,
    trainer_callbacks,
    trainer_profiler,
)
from lit_sb3_core.nets.fast_matmul import routed
from lit_sb3_core.nets.torch_layers import hook_free, reads_training_mode
from lit_sb3_core.sdk.direct_steps import direct_step
from lit_sb3_core.sdk.optimization import Optimization, clip_grad_norm, precision_is_plain

__all__ = ["FastPath", "plain_calls"]


class FastPath(Optimization):
    """RLAlgorithm's fast path: the same steps as ``Optimization``'s where Lightning has nothing to add."""

    # Attributes that only ever hold plain values and change every environment step (or every Lightning
    # hook call, HOOK_NAME_ATTRIBUTE). ``nn.Module.__setattr__`` spends ~3 us checking whether a value is a
    # Parameter, Module or buffer; these skip that check. Subclasses add theirs.
    plain_attributes: ClassVar[frozenset[str]] = frozenset(
        {
            "num_timesteps",
            "last_obs",
            "last_episode_starts",
            "progress_remaining",
            "n_updates",
            "iterations",
            HOOK_NAME_ATTRIBUTE,
        }
    )
    # Recorded at the start of training (on_train_start): the policy's modules and their flags per mode.
    _mode_flags: Mapping[bool, list[tuple[nn.Module, bool]]] = MappingProxyType({})
    _plain_steps = False  # see _lightning_steps_are_plain
    _training_now = False  # between on_train_start and on_train_end

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.plain_attributes:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def on_train_start(self) -> None:
        # ``nn.Module.train`` walks every submodule through ``__setattr__`` (~10 us for a small policy);
        # collection and updates alternate every iteration (off-policy: every chunk), so record both
        # settings once and replay them. Modules whose forward ignores the mode are left alone.
        policy = self.require_policy()
        policy.train(False)
        eval_flags = [(m, m.training) for m in policy.modules() if reads_training_mode(m)]
        policy.train(True)
        train_flags = [(m, m.training) for m in policy.modules() if reads_training_mode(m)]
        self._mode_flags = {False: eval_flags, True: train_flags}
        self._plain_steps = self._lightning_steps_are_plain()
        self._training_now = True

    def on_train_end(self) -> None:
        self._training_now = False  # optimizer_step outside fit is plain torch (Optimization._optimizer_step)
        super().on_train_end()

    def _set_policy_mode(self, training: bool) -> None:
        """``policy.train(training)``, replayed from flags recorded at the start of training."""
        flags = self._mode_flags.get(training)
        if flags is None:  # outside fit (nothing recorded yet)
            self.require_policy().train(training)
            return
        for module, flag in flags:
            object.__setattr__(module, "training", flag)

    def _optimizer_step(
        self,
        optimizer: Any,
        loss: torch.Tensor,
        max_grad_norm: float | None = None,
        inputs: Sequence[torch.Tensor] | None = None,
    ) -> None:
        """Zero, backward (only into ``inputs`` when given), clip by global norm, step.

        Where Lightning's wrappers would only call no-op hooks (see ``_lightning_steps_are_plain``),
        backward and step call torch directly (saving ~100 us per update: a tenth of a DQN step on
        CartPole, a fifth of a PPO minibatch); otherwise Lightning's path (``Optimization._optimizer_step``).
        """
        # A step outside training (before on_train_start, after on_train_end) and a plain torch optimizer
        # take Optimization's path, which handles both.
        if not (self._plain_steps and self._training_now) or not isinstance(optimizer, LightningOptimizer):
            super()._optimizer_step(optimizer, loss, max_grad_norm, inputs)
            return
        raw = optimizer.optimizer
        for group in raw.param_groups:  # zero_grad(set_to_none=True) without its profiler record
            for param in group["params"]:
                param.grad = None
        loss.backward(inputs=inputs)
        if max_grad_norm is not None:
            clip_grad_norm(raw.param_groups, max_grad_norm)

        def step() -> None:
            if not direct_step(raw):  # torch's kernels without Optimizer.step's Python around them
                raw.step()

        count_optimizer_step(optimizer, step)  # keeps Lightning's trainer.global_step counting

    def _lightning_steps_are_plain(self) -> bool:
        """True when Lightning's backward/step wrappers would only call default (no-op) hooks.

        That is one device, full 32-bit precision or bf16 autocast (no gradient scaler), no profiler, and no
        callback or module hook around backward and the optimizer step. Then ``optimizer_step`` calls torch
        directly (saving ~100 us per update: a tenth of a DQN step on CartPole, a fifth of a PPO minibatch)
        while keeping Lightning's step counters.
        """
        from lightning.pytorch.callbacks import Callback
        from lightning.pytorch.profilers import PassThroughProfiler
        from lightning.pytorch.strategies import SingleDeviceStrategy

        optimizers = self.optimizers(use_pl_optimizer=True) if self.trainer.optimizers else []
        for optimizer in optimizers if isinstance(optimizers, list) else [optimizers]:
            if not has_step_counters(optimizer):
                return False  # a Lightning release without these step-counter hooks: take the public path
        trainer = self.trainer
        if type(trainer.strategy) is not SingleDeviceStrategy or not precision_is_plain(
            trainer.precision_plugin
        ):
            return False
        if not isinstance(trainer_profiler(trainer), PassThroughProfiler):
            return False
        hooks = ("on_before_backward", "on_after_backward", "on_before_optimizer_step")
        if any(is_overridden(hook, self, L.LightningModule) for hook in (*hooks, "backward")):
            return False
        callbacks = trainer_callbacks(trainer)
        return not any(is_overridden(hook, callback, Callback) for callback in callbacks for hook in hooks)


@contextlib.contextmanager
def plain_calls(module: nn.Module) -> Iterator[None]:
    """For the block, switch on the ``plain_calls`` flag of every submodule whose class has one (policies
    and Q-networks: their forward passes then use ``plain_forward``), provided ``module`` is ``hook_free``.

    Algorithms wrap each Lightning batch in it; hooks added between batches (by callbacks) are honoured.
    Within it the policy's ``nn.Linear`` layers take the oneDNN route where it is switched on (``routed``).
    """
    if not hook_free(module):
        yield
        return
    switched = [m for m in module.modules() if isinstance(getattr(type(m), "plain_calls", None), bool)]
    for m in switched:
        cast(Any, m).plain_calls = True
    try:
        with routed(module):
            yield
    finally:
        for m in switched:
            cast(Any, m).plain_calls = False
