"""Gradient steps of RLAlgorithm through Lightning's public API: optimizers, backward, clipping, DDP.

Algorithms call ``optimizer_step(optimizer, loss, max_grad_norm)`` for every gradient update instead of
Lightning's optimizer calls (manual optimization). The faster direct path lives in ``sdk/fast_path.py``
and falls back to this one whenever Lightning has work to do around backward or the step.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import torch

from lit_sb3_core.engine.lightning_internals import attached_trainer
from lit_sb3_core.sdk.kept_optimizers import keeps_optimizers, kept_optimizers
from lit_sb3_core.sdk.part import AlgorithmPart

__all__ = ["Optimization", "clip_grad_norm", "fitting", "make_optimizer", "precision_is_plain"]


class Optimization(AlgorithmPart):
    """RLAlgorithm's optimizers and gradient steps (a part of RLAlgorithm)."""

    average_gradients_per_step: ClassVar[bool] = False
    """Under DDP, whether ``optimizer_step`` averages the gradients over the ranks itself (backward under
    ``no_sync``, then one all-reduce of the stepped optimizer's gradients) instead of DDP's reducer.

    DDP's reducer expects one backward over every parameter per forward, and fails with "parameters that
    were not used in producing loss" otherwise. Set it True in an algorithm whose gradient steps each cover
    part of the module: several optimizers (SAC: the temperature, the critics, the actor), or phases with
    parameters of their own (an auxiliary value head trained in a phase of its own, on-policy or off).
    OffPolicyAlgorithm sets it. Costs one all-reduce per step, as DDP's reducer does.
    """
    average_gradients_itself: ClassVar[bool] = False
    """Deprecated (0.2) private name of ``average_gradients_per_step``; setting it still works."""

    optimizer_attributes: ClassVar[tuple[str, ...]] = ("policy.optimizer",)
    """SB3's names of the optimizers ``configure_optimizers`` returns, in its order (``sdk/kept_optimizers.py``):
    ``model.policy.optimizer`` by default; SAC's family ``actor.optimizer``, ``critic.optimizer`` and
    ``ent_coef_optimizer``. A name without a dot is a property of the algorithm itself."""

    @keeps_optimizers
    def configure_optimizers(self) -> torch.optim.Optimizer | list[torch.optim.Optimizer] | None:
        """One optimizer over the whole policy; return a list to train parts with optimizers of their own.

        Called once per policy, when it is built (as SB3 builds its optimizers); every fit steps the same
        optimizers (``sdk/kept_optimizers.py``), so an override may use what ``setup_model`` and the
        constructor set before ``super().__init__``.
        """
        return self.make_optimizer(self.require_policy().parameters())

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """An optimizer assigned under its SB3 name during the run (``model.policy.optimizer = ...`` in a
        callback) is stepped from this batch on, as SB3 steps it from its next update."""
        kept = kept_optimizers(self)
        if kept is not None and kept.read_names(self):
            self.trainer.optimizers = kept.optimizers

    def make_optimizer(self, params: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
        """The policy's ``optimizer_class`` (with its ``optimizer_kwargs``) over ``params`` at the initial
        learning rate: what ``configure_optimizers`` builds each optimizer with.

        ``update_learning_rate`` sets every optimizer it is given from the schedule. Adam and AdamW run
        fused (one kernel for all parameters) unless ``optimizer_kwargs`` choose ``fused``/``foreach``.
        """
        policy = self.require_policy()
        cls = getattr(policy, "optimizer_class", torch.optim.Adam)
        kwargs = getattr(policy, "optimizer_kwargs", None) or {}
        return make_optimizer(cls, params, self.lr_schedule(1.0), kwargs)

    def optimizer_step(self, *args: Any, **kwargs: Any) -> None:
        """``optimizer_step(optimizer, loss, max_grad_norm=None, inputs=None)``: zero, backward, clip, step.

        The one call an algorithm makes per gradient update (see ``_optimizer_step``). Lightning's
        automatic-optimization hook of the same name takes other arguments and is never called under
        manual optimization; the untyped signature keeps this one compatible with it for type checkers.
        """
        self._optimizer_step(*args, **kwargs)

    def _optimizer_step(
        self,
        optimizer: Any,
        loss: torch.Tensor,
        max_grad_norm: float | None = None,
        inputs: Sequence[torch.Tensor] | None = None,
    ) -> None:
        """Zero, backward (only into ``inputs`` when given), clip by global norm, step.

        Algorithms call this for every gradient step instead of Lightning's optimizer calls, with an
        optimizer from ``self.optimizers()`` (Lightning's wrapper) or a plain ``torch.optim.Optimizer``.
        During fit, backward goes through Lightning (precision plugins, DDP); Lightning's step counter
        (``trainer.global_step``) counts the steps of its wrapped optimizers only. Outside fit (no trainer
        running: a test, a hand-written loop, fine-tuning a loaded model) it is plain torch: zero_grad,
        ``loss.backward()``, the same clipping, ``step()``, with no precision plugin and no DDP. With full
        32-bit precision (or bf16 autocast) the clipping runs as three foreach kernels instead of
        Lightning's ``clip_gradients`` (several times slower on small networks); other precision plugins
        (AMP, which must unscale first) go through Lightning.
        """
        if not fitting(self):
            raw = getattr(optimizer, "optimizer", optimizer)  # a LightningOptimizer left from a finished fit
            raw.zero_grad(set_to_none=True)
            loss.backward(inputs=inputs)
            if max_grad_norm is not None:
                clip_grad_norm(raw.param_groups, max_grad_norm)
            raw.step()
            return
        optimizer.zero_grad(set_to_none=True)
        ddp_model: Any = self.trainer.strategy.model if self.world_size > 1 else None
        averages = self.average_gradients_per_step or self.average_gradients_itself
        if averages and ddp_model is not None and hasattr(ddp_model, "no_sync"):
            with ddp_model.no_sync():
                self.manual_backward(loss, **({} if inputs is None else {"inputs": inputs}))
            self._average_gradients_over_ranks(optimizer)
        elif inputs is None:
            self.manual_backward(loss)
        else:
            self.manual_backward(loss, inputs=inputs)
        if max_grad_norm is not None:
            if precision_is_plain(self.trainer.precision_plugin):
                clip_grad_norm(optimizer.param_groups, max_grad_norm)
            else:
                self.clip_gradients(
                    optimizer, gradient_clip_val=max_grad_norm, gradient_clip_algorithm="norm"
                )
        optimizer.step()

    def _average_gradients_over_ranks(self, optimizer: Any) -> None:
        """Replace the gradients ``optimizer`` steps with their mean over all ranks (one all-reduce).

        Which parameters have a gradient depends only on the code path, so it is the same on every rank.
        """
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if not grads:
            return
        flat = torch.cat([grad.reshape(-1) for grad in grads])
        torch.distributed.all_reduce(flat)
        flat /= self.world_size
        offset = 0
        for grad in grads:
            grad.copy_(flat[offset : offset + grad.numel()].view_as(grad))
            offset += grad.numel()

    def update_learning_rate(self, optimizers: Any) -> float:
        """Set every optimizer's learning rate from the schedule; returns the value (logged by SB3)."""
        lr = self.lr_schedule(self.progress_remaining)
        for optimizer in optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]:
            for group in optimizer.param_groups:
                group["lr"] = lr
        return lr


def fitting(module: Any) -> bool:
    """Whether ``module`` is attached to a Trainer that is running (``fit``, or an evaluation loop)."""
    from lightning.pytorch.trainer.states import TrainerStatus

    trainer = attached_trainer(module)
    return trainer is not None and trainer.state.status == TrainerStatus.RUNNING


def precision_is_plain(plugin: Any) -> bool:
    """Whether backward and step need nothing from the precision plugin: 32-bit, or autocast without a
    gradient scaler (bf16-mixed); the forward pass's autocast is Lightning's, around ``training_step``."""
    from lightning.pytorch.plugins.precision import MixedPrecision, Precision

    return type(plugin) is Precision or (type(plugin) is MixedPrecision and plugin.scaler is None)


@torch.no_grad()
def clip_grad_norm(param_groups: list[dict[str, Any]], max_norm: float) -> None:
    """``torch.nn.utils.clip_grad_norm_`` over an optimizer's parameters, in three foreach kernels."""
    grads = [p.grad for group in param_groups for p in group["params"] if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    torch._foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp_(max=1.0))


def make_optimizer(
    optimizer_class: Callable[..., torch.optim.Optimizer], params: Any, lr: float, kwargs: dict[str, Any]
) -> torch.optim.Optimizer:
    """Build an optimizer, choosing torch's fused (Adam, AdamW) or foreach (RMSprop, SGD) implementation
    unless the caller chose one.

    Both update all parameters in a few kernel calls; with the small networks of RL that makes an optimizer
    step markedly cheaper than torch's CPU default, a Python loop over the parameters (RMSprop for A2C's
    policy: 150 -> 100 us). The numerics are the same algorithm.
    """
    params = list(params)
    kwargs = dict(kwargs)
    chosen = {"fused", "foreach"} & set(kwargs)
    plain = params and all(p.device.type in ("cpu", "cuda") and p.dtype.is_floating_point for p in params)
    if not chosen and plain:
        if optimizer_class in (torch.optim.Adam, torch.optim.AdamW):
            kwargs["fused"] = True
        elif optimizer_class in (torch.optim.RMSprop, torch.optim.SGD):
            kwargs["foreach"] = True
    return optimizer_class(params, lr=lr, **kwargs)
