"""An update of several networks, written once, run eagerly or as one compiled program.

Off-policy actor-critic methods step several optimizers per gradient step (SAC: the critics, the actor and
the entropy temperature) and then move their target networks: eagerly, hundreds of operators dispatched
one at a time from Python (~360 per SAC step on 256-unit networks, benchmarks/README.md). An algorithm
writes its update once, as ``update(steps, *batch)``: ``steps.minimize(i, loss, *args)`` for the gradient
step of its ``i``-th optimizer, ordinary torch code on its policy for the rest (target updates). An
``UpdateProgram`` runs it

* eagerly: ``minimize`` evaluates the loss and steps the optimizer with the algorithm's ``optimizer_step``
  (Lightning's backward, precision plugins, DDP, step counters), backward only into that optimizer's
  parameters;
* compiled (``compiled=True``): the whole update as one ``torch.compile(fullgraph=True)`` program. The
  policy is evaluated with its weights as the program's inputs (``torch.func.functional_call``);
  ``minimize`` takes the loss's gradients with respect to its optimizer's parameters
  (``torch.func.grad_and_value``) and applies Adam/AdamW/RMSprop as tensor operations, in place, so a later loss
  of the same update reads the new weights (SAC's actor loss reads the critics just stepped).

The compiled program keeps what ``CompiledStep`` keeps (compiled_update.py): the weights are updated in
place, the optimizers' state lives in each optimizer under torch's names (``state_dict()``, checkpoints and a
resumed eager run read it), learning rates enter as tensors (schedules do not recompile), Lightning's step
counters count each optimizer stepped, inductor's caches are on disk. A compiled program draws random
numbers differently from eager torch, so an update that samples takes its noise as an input, drawn
outside in the order the eager update would draw it: the two runs then learn the same weights within
float rounding (tests/sdk/test_update_program.py).

A loss may update the policy's buffers in place, as a batch-normalization layer in training mode updates
its running statistics (CrossQ): inside ``minimize`` the buffers enter the gradient transform as inputs
(``torch.func`` refuses in-place writes to tensors it captures), so the program writes them where eager
code writes them, in the same order. Train/eval switches of modules between losses are compiled in too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import torch
from torch import nn

from lit_sb3_core.engine.lightning_internals import count_optimizer_step, has_step_counters
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk.compiled_optimizers import (
    OptimizerSettings,
    ParameterState,
    check_compilable,
    optimizer_settings,
    optimizer_states,
    optimizer_update,
)
from lit_sb3_core.sdk.compiled_update import clip_by_global_norm, compile_program

__all__ = ["GradientSteps", "UpdateProgram"]


class GradientSteps(Protocol):
    """What an update function is given: one optimizer's gradient step on a loss."""

    def minimize(
        self,
        index: int,
        loss: Callable[..., Any],
        *args: Any,
        has_aux: bool = False,
        max_grad_norm: float | None = None,
    ) -> Any:
        """Step optimizer ``index`` on ``loss(*args)`` (with ``has_aux``, ``(loss, aux)``: ``aux`` is passed
        through untouched); returns what ``loss`` returned, the loss detached in the compiled program."""
        ...


Update = Callable[..., Any]  # update(steps: GradientSteps, *batch) -> the values to log


class UpdateProgram:
    """``update`` on ``algorithm``'s policy, eagerly or as one compiled program (see the module docstring).

    Args:
        algorithm: the ``RLAlgorithm`` whose ``policy`` holds every network the update reads or writes.
        update: ``update(steps, *batch)``, written with ``steps.minimize``; what it returns comes back.
        compiled: run it as one compiled program. Its optimizers must be Adam/AdamW/RMSprop (one group)
            over the policy's parameters; one process; bf16 autocast (``precision="bf16-mixed"``) is
            compiled into the program, other autocast dtypes are refused. The first call compiles (seconds
            with a warm on-disk cache, minutes cold); each distinct value of a Python argument of
            ``batch`` (a flag such as "update the targets now") is a program of its own, as is a change
            of autocast.

    ``program(optimizers, *batch)``: ``optimizers`` as the algorithm's ``self.optimizers()`` returns them
    (Lightning's wrappers or plain torch optimizers), indexed by ``minimize``'s ``index``.
    """

    def __init__(self, algorithm: Any, update: Update, compiled: bool = False) -> None:
        self.algorithm = algorithm
        self.update = update
        self.compiled = compiled
        self._policy: nn.Module | None = None
        self._names: list[str] = []
        self._tensors: list[torch.Tensor] = []
        self._positions_by_optimizers: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
        self._lrs: list[torch.Tensor] = []
        self._programs: dict[torch.dtype | None, Callable[..., Any]] = {}  # by the autocast dtype (None: off)
        self._program: Callable[..., Any] | None = None
        self._device_type = "cpu"

    def __call__(self, optimizers: Sequence[Any], *batch: Any) -> Any:
        if not self.compiled:
            return self.update(_EagerSteps(self.algorithm, optimizers), *batch)
        raw = [_unwrap(optimizer) for optimizer in optimizers]
        self._prepare(raw)
        layout = self._trained_positions(raw)
        states = []
        for optimizer, trained in zip(raw, layout, strict=True):
            params = [self._tensors[i] for i in trained]
            for param in params:  # the eager step leaves no stale gradient behind either (zero_grad)
                param.grad = None
            states.append(optimizer_states(optimizer, params))
        while len(self._lrs) < len(raw):
            self._lrs.append(torch.zeros((), dtype=torch.float32, device=self._tensors[0].device))
        for lr, optimizer in zip(self._lrs, raw, strict=False):
            lr.fill_(float(optimizer.param_groups[0]["lr"]))
        settings = tuple(optimizer_settings(optimizer) for optimizer in raw)
        assert self._program is not None
        # The program sets autocast itself (compiled in): the caller's (Lightning's) is switched off around it,
        # its weight cache too, so the program's entry state (guarded) is the same whichever autocast called it.
        with torch.autocast(self._device_type, enabled=False, cache_enabled=False):
            result, stepped = self._program(
                self._tensors, layout, states, self._lrs[: len(raw)], settings, *batch
            )
        for index in stepped:  # Lightning's counters (trainer.global_step) count each optimizer stepped
            if has_step_counters(optimizers[index]) and optimizers[index] is not raw[index]:
                count_optimizer_step(optimizers[index], lambda: None)
        return result

    # set-up ---------------------------------------------------------------------------------------------
    def _prepare(self, optimizers: list[torch.optim.Optimizer]) -> None:
        """Check what cannot be compiled; (re)build the program for the algorithm's current policy."""
        algorithm = self.algorithm
        if getattr(algorithm, "world_size", 1) > 1:
            raise ConfigurationError(
                f"{type(algorithm).__name__}(compile=True) compiles the single-process update (no gradient "
                "all-reduce); train with compile=False under DDP."
            )
        policy = algorithm.require_policy()
        device = next(policy.parameters()).device
        autocast = _autocast_dtype(algorithm, device)
        for optimizer in optimizers:
            check_compilable(optimizer)
        if policy is not self._policy:  # a new policy (set_parameters, load): its own tensors and programs
            self._policy = policy
            named = [*policy.named_parameters(), *policy.named_buffers()]
            self._names = [name for name, _ in named]
            self._tensors = [tensor for _, tensor in named]
            self._positions_by_optimizers = {}
            self._programs = {}
        self._device_type = device.type
        program = self._programs.get(autocast)
        if program is None:
            program = self._programs[autocast] = self._compile(policy, device.type, autocast)
        self._program = program

    def _trained_positions(self, optimizers: list[torch.optim.Optimizer]) -> tuple[tuple[int, ...], ...]:
        """For each optimizer, the positions of its parameters among the policy's tensors."""
        key = tuple(id(optimizer) for optimizer in optimizers)
        layout = self._positions_by_optimizers.get(key)
        if layout is None:
            position = {id(tensor): i for i, tensor in enumerate(self._tensors)}
            rows = []
            for optimizer in optimizers:
                params = optimizer.param_groups[0]["params"]
                missing = [p for p in params if id(p) not in position]
                if missing:
                    raise ConfigurationError(
                        f"compile=True needs every optimizer to train parameters of the policy; "
                        f"{type(optimizer).__name__} trains {len(missing)} tensor(s) outside it. Train with "
                        "compile=False, or keep the trained tensors in the policy."
                    )
                rows.append(tuple(position[id(p)] for p in params))
            layout = self._positions_by_optimizers[key] = tuple(rows)
        return layout

    def _compile(
        self, policy: nn.Module, device_type: str, autocast: torch.dtype | None
    ) -> Callable[..., Any]:
        """The update as a pure function of the policy's tensors and the optimizers' states, compiled. It
        closes over the policy and the update only, so no guard depends on which optimizer objects come.

        ``autocast``: the update's forward passes run under ``torch.autocast(device_type, autocast)``
        inside the program (the matrix products in bf16); weights, gradients and optimizer state stay float32.
        """
        holder, names, update = _Holder(policy), [f"policy.{name}" for name in self._names], self.update
        buffer_names = [f"policy.{name}" for name, _ in policy.named_buffers()]

        def program(
            tensors: list[torch.Tensor],
            layout: tuple[tuple[int, ...], ...],
            states: list[list[ParameterState]],
            lrs: list[torch.Tensor],
            settings: tuple[OptimizerSettings, ...],
            *batch: Any,
        ) -> tuple[Any, tuple[int, ...]]:
            weights = dict(zip(names, tensors, strict=True))
            steps = _TracedSteps(
                holder,
                weights,
                [[names[i] for i in row] for row in layout],
                buffer_names,
                states,
                lrs,
                settings,
            )
            with torch.autocast(device_type, dtype=autocast, enabled=autocast is not None):
                result = torch.func.functional_call(holder, weights, (update, steps, *batch))
            return result, tuple(steps.stepped)

        return compile_program(program)


class _Holder(nn.Module):
    """Holds the policy as a submodule, so ``functional_call`` swaps its weights while any function runs."""

    def __init__(self, policy: nn.Module) -> None:
        super().__init__()
        self.policy = policy

    def forward(self, function: Callable[..., Any], *args: Any) -> Any:
        return function(*args)


class _EagerSteps:
    """``minimize`` as eager torch: the loss, then the algorithm's ``optimizer_step``."""

    def __init__(self, algorithm: Any, optimizers: Sequence[Any]) -> None:
        self.algorithm = algorithm
        self.optimizers = optimizers

    def minimize(
        self,
        index: int,
        loss: Callable[..., Any],
        *args: Any,
        has_aux: bool = False,
        max_grad_norm: float | None = None,
    ) -> Any:
        optimizer = self.optimizers[index]
        value = loss(*args)
        trained = [p for group in _unwrap(optimizer).param_groups for p in group["params"]]
        self.algorithm.optimizer_step(
            optimizer, value[0] if has_aux else value, max_grad_norm, inputs=trained
        )
        return value


class _TracedSteps:
    """``minimize`` inside the compiled program: gradients by ``torch.func``, the optimizer applied in place."""

    def __init__(
        self,
        holder: _Holder,
        weights: dict[str, torch.Tensor],
        trained: list[list[str]],
        buffers: list[str],
        states: list[list[ParameterState]],
        lrs: list[torch.Tensor],
        settings: tuple[OptimizerSettings, ...],
    ) -> None:
        self.holder, self.weights, self.trained, self.buffers = holder, weights, trained, buffers
        self.states, self.lrs, self.settings = states, lrs, settings
        self.stepped: list[int] = []

    def minimize(
        self,
        index: int,
        loss: Callable[..., Any],
        *args: Any,
        has_aux: bool = False,
        max_grad_norm: float | None = None,
    ) -> Any:
        names, holder = self.trained[index], self.holder

        def loss_of(trained: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor]) -> Any:
            return torch.func.functional_call(holder, {**trained, **buffers}, (loss, *args), strict=False)

        # The buffers are inputs (not differentiated) so that the loss may write them in place.
        grads_by_name, value = torch.func.grad_and_value(loss_of, has_aux=has_aux)(
            {name: self.weights[name] for name in names}, {name: self.weights[name] for name in self.buffers}
        )
        grads = [grads_by_name[name] for name in names]
        with torch.no_grad():
            if max_grad_norm is not None:
                grads = clip_by_global_norm(grads, float(max_grad_norm))
            for name, grad, state in zip(names, grads, self.states[index], strict=True):
                optimizer_update(self.weights[name], grad, state, self.lrs[index], self.settings[index])
        self.stepped.append(index)
        if has_aux:
            return value[0].detach(), value[1]
        return value.detach()


def _autocast_dtype(algorithm: Any, device: torch.device) -> torch.dtype | None:
    """The autocast dtype the update runs under (Lightning's ``precision="bf16-mixed"``), None without
    autocast. bf16 is compiled in; float16 is refused: it needs a gradient scaler, which the program has not."""
    if not torch.is_autocast_enabled(device.type):
        return None
    dtype = torch.get_autocast_dtype(device.type)
    if dtype != torch.bfloat16:
        raise ConfigurationError(
            f"{type(algorithm).__name__}(compile=True) compiles bf16 autocast (precision='bf16-mixed'), not "
            f"{dtype} autocast, whose gradients need a loss scaler: train with precision='bf16-mixed' or "
            "'32-true', or with compile=False."
        )
    return dtype


def _unwrap(optimizer: Any) -> torch.optim.Optimizer:
    """The torch optimizer inside Lightning's wrapper (or the optimizer itself)."""
    wrapped = getattr(optimizer, "optimizer", None)
    return wrapped if isinstance(wrapped, torch.optim.Optimizer) else optimizer
