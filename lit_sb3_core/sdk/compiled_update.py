"""One gradient step as one compiled program: the loss, its gradients, clipping and the optimizer's update.

Eager PyTorch dispatches every operator of an update from Python: a DQN step on CartPole is ~290 operator
calls for ~0.2 ms of arithmetic (benchmarks/profiles.md). ``CompiledStep`` writes the whole step as one
pure function of tensors (the network evaluated with ``torch.func.functional_call``, the gradients from
``torch.func.grad_and_value``, clipping by global norm and the optimizer written as tensor operations in
compiled_optimizers.py) and compiles it with ``torch.compile(fullgraph=True)``: one call per gradient step, no
graph breaks.

What stays as it was: the parameters are updated in place (the networks, target updates and checkpoints see
the same tensors), the optimizer's state (Adam, AdamW or RMSprop) lives in its own ``state`` under torch's
names, so ``optimizer.state_dict()`` and a resumed eager run read it as torch wrote it, and the learning rate
is read from the optimizer's param group before every step (schedules work, without recompiling: it enters
the program as a tensor). The arithmetic is the optimizer's; the results match the eager update within float
rounding (tests/sdk/test_compiled_update.py).

Compiling costs seconds to minutes (inductor generates and builds C++); inductor's caches are kept on disk
in a user cache folder (``compile_cache_dir``: ``$LIT_SB3_COMPILE_CACHE``, else ``$XDG_CACHE_HOME/lit-sb3/
torch-compile`` or ``~/.cache/lit-sb3/torch-compile``) so a second run of the same network compiles from the
cache. ``TORCHINDUCTOR_CACHE_DIR`` set by the user wins.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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

__all__ = ["CompiledStep", "compile_cache_dir", "compile_program", "use_compile_cache"]

Forward = Callable[..., torch.Tensor]
# loss(forward, *batch) -> scalar loss (with has_aux: (loss, aux dict)); ``forward(x)`` evaluates the trained
# network with the traced weights.
LossFunction = Callable[..., Any]


def compile_cache_dir() -> Path:
    """Where inductor's compiled programs are cached between runs (see the module docstring)."""
    explicit = os.environ.get("LIT_SB3_COMPILE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lit-sb3" / "torch-compile"


def use_compile_cache() -> Path:
    """Point inductor's on-disk caches at ``compile_cache_dir()`` (unless ``TORCHINDUCTOR_CACHE_DIR`` is set)
    and switch its FX-graph cache on; returns the folder in use."""
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    # torch writes its default (a folder in /tmp) into the variable the first time it asks: that one is
    # replaced, a folder the user chose is kept.
    chosen = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    if chosen is None or os.path.abspath(chosen) == os.path.abspath(default_cache_dir()):
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(compile_cache_dir())
    folder = Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    import torch._inductor.config as inductor_config

    inductor_config.fx_graph_cache = True
    return folder


# Inductor's settings for the update programs. ``size_asserts``: the generated wrapper checks every input's
# sizes and strides (one Python call each, ~1 us: ~35 per DQN step, ~100 per SAC step) that dynamo's guards
# have checked already (``dynamic=False``: shapes and strides are guarded); off, a compiled DQN step is
# ~15 % faster. ``inplace_buffers``: off, because with it inductor (torch 2.13, CPU) miscompiles CrossQ's
# update: its generated kernels take buffers they only read as in-out arguments (the pattern of
# pytorch/pytorch#183575, Adam's ``exp_avg.lerp_`` there), and the compiled step's actor gradients came out up
# to 16 % off (plugins/lit-sb3-crossq/tests/test_crossq_compile.py; the same program through ``aot_eager``,
# or with ``allow_buffer_reuse`` off instead, matches eager within rounding). Off, a compiled SAC step costs
# the same (8.22 against 8.22 ms of CPU).
PROGRAM_OPTIONS: dict[str, Any] = {"size_asserts": False, "inplace_buffers": False}


def skip_guards_on_globals(entries: Sequence[Any]) -> list[bool]:
    """Dynamo's guards to keep on an update program (``torch.compile``'s ``guard_filter_fn``): all but those
    on module globals, tensors excepted.

    Before each call dynamo checks every guard of the program: ~30 us of a ~160 us DQN program call, of
    which ~28 us go to the ~40 % of its guards on what its code reaches through module globals: the
    identity of ``torch``'s, functorch's and pytree's functions, classes and modules, their defaults and
    closures, builtins, and our own module functions (``optimizer_update``, ``clip_by_global_norm``,
    ``plain_forward``). These change only when code is monkeypatched after the program was compiled, which
    lit-sb3 never does (a process that patches them must build a new model or call
    ``torch._dynamo.reset()``). What an update reads from its arguments and closures stays guarded, so a
    change there still recompiles: every tensor's dtype, shape, strides and aliasing, the algorithm's
    hyperparameters (``gamma``, ``tau``, ``max_grad_norm``, the target-update flag), the optimizer's
    settings, the policy's modules and flags, grad mode and autocast.
    A global tensor keeps its guard (none of ours reads one).
    """
    return [not entry.is_global or entry.guard_type == "TENSOR_MATCH" for entry in entries]


def program_options() -> dict[str, Any]:
    """``PROGRAM_OPTIONS``, with ``skip_guards_on_globals`` where the installed torch filters guards
    (``guard_filter_fn``, torch >= 2.8; the guard helpers in ``torch.compiler`` came with it)."""
    options = dict(PROGRAM_OPTIONS)
    if hasattr(torch.compiler, "skip_guard_on_globals_unsafe"):
        options.setdefault("guard_filter_fn", skip_guards_on_globals)
    return options


def compile_program(
    function: Callable[..., Any], options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """``function`` compiled as one update program: the whole graph (``fullgraph``), static shapes,
    ``program_options()`` updated with ``options``, inductor's caches on disk (``use_compile_cache``),
    dynamo's cache its own (``_own_code``)."""
    use_compile_cache()
    return torch.compile(
        _own_code(function),
        fullgraph=True,
        dynamic=False,
        options={**program_options(), **(options or {})},
    )


def _own_code(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with a copy of its code object. Dynamo keeps its compiled programs on the code object and
    fails a ``fullgraph`` compile once one code object has ``recompile_limit`` (8) of them; every update
    program is a closure of the same code (``CompiledStep``'s ``step``, ``UpdateProgram``'s ``program``),
    so without a copy a process's ninth compiled model (a sweep, a test session) failed with
    ``FailOnRecompileLimitHit``. With it each program counts only its own recompiles, and its compiled
    entries go with it."""
    copy = types.FunctionType(
        function.__code__.replace(),
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = function.__qualname__
    return copy


def clip_by_global_norm(grads: list[torch.Tensor], max_norm: float) -> list[torch.Tensor]:
    """``grads`` scaled as ``clip_grad_norm_`` scales them (for traced gradients: no ``.grad`` written)."""
    norms = torch.stack([torch.linalg.vector_norm(g) for g in grads])
    total = torch.linalg.vector_norm(norms)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    return [g * scale for g in grads]


class CompiledStep:
    """``loss``'s gradient step on ``network`` with an Adam, AdamW or RMSprop optimizer, compiled as one
    program.

    Args:
        network: the module whose parameters the optimizer trains (every parameter must be in it).
        loss: ``loss(forward, *batch)``, a scalar; ``forward(x)`` is ``network(x)`` with the traced
            weights. Anything else it calls (a target network under ``torch.no_grad``) is compiled in too.
        max_grad_norm: clip the gradients by global norm first (as ``clip_grad_norm_``); None: no clipping.
        has_aux: ``loss`` returns ``(loss, aux)``, ``aux`` a dict of tensors computed with the weights
            before the step (metrics: PPO's clip fraction and KL); the step then returns ``(loss, aux)``.
        gate: with ``has_aux``, the name of a boolean entry of ``aux``: where it is False the step leaves
            the weights, the optimizer's state and Lightning's step counter as they were (PPO's
            ``target_kl``: the minibatch whose KL is too large is not applied).
        trained: the parameters of ``network`` the step trains (default: all). The others enter the loss
            as constants and are neither updated nor given optimizer state, as torch's optimizers skip a
            parameter whose gradient is None (TRPO's critic step drops the gradients of the parameters it
            shares with the actor).
        options: inductor options for this program on top of ``PROGRAM_OPTIONS`` (RecurrentPPO:
            ``cpp_wrapper``, one C++ module instead of one per kernel for its unrolled LSTM steps).

    A network holding ``nn.LSTM`` (or another ``nn.RNNBase``) modules is traced with dynamo's
    ``allow_rnn``, so that the loss can read their weights; their fused forward does not trace under
    ``torch.func.grad_and_value`` (torch 2.13): evaluate them from their weights (RecurrentPPO's
    ``lstm_steps``).

    ``step(optimizer, *batch)`` runs one step and returns the loss (detached). ``optimizer`` is a
    ``torch.optim.Adam``/``AdamW``/``RMSprop`` over ``network``'s parameters (one param group; no amsgrad,
    maximize, capturable or differentiable mode), or Lightning's wrapper of one (what ``self.optimizers()``
    returns), whose step counters (``trainer.global_step``) then count the step as its ``step()`` would.
    The program is compiled on the first call and reused for every later optimizer (each ``learn`` builds a
    new one): its settings enter as values, its state and learning rate as tensors.
    """

    def __init__(
        self,
        network: nn.Module,
        loss: LossFunction,
        max_grad_norm: float | None = None,
        has_aux: bool = False,
        gate: str | None = None,
        trained: Sequence[nn.Parameter] | None = None,
        options: dict[str, Any] | None = None,
    ) -> None:
        if gate is not None and not has_aux:
            raise ConfigurationError(
                "CompiledStep: gate names an entry of the loss's aux; pass has_aux=True."
            )
        self.network = network
        self.loss = loss
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.has_aux = has_aux
        self.gate = gate
        self.options = dict(options or {})
        self.params = list(network.parameters())
        chosen = {id(param) for param in (self.params if trained is None else trained)}
        if not chosen <= {id(param) for param in self.params} or not chosen:
            raise ConfigurationError(
                "CompiledStep: trained must be a non-empty selection of the network's own parameters."
            )
        self.trained = [param for param in self.params if id(param) in chosen]
        self.frozen = [param for param in self.params if id(param) not in chosen]
        # Dynamo refuses to read modules of RNN types unless asked (``allow_rnn``); a loss that evaluates
        # an ``nn.LSTM`` from its weights (RecurrentPPO) reads the module for its parameters.
        self._reads_rnn = any(isinstance(module, nn.RNNBase) for module in network.modules())
        self._checked: torch.optim.Optimizer | None = None
        self._lr: torch.Tensor | None = None
        self._program: Callable[..., Any] | None = None

    def clips_at(self, max_grad_norm: float | None) -> bool:
        """Whether this step clips at ``max_grad_norm`` (the value is compiled into the program: an algorithm
        whose ``max_grad_norm`` was changed between ``learn`` calls builds a new step)."""
        return self.max_grad_norm == (None if max_grad_norm is None else float(max_grad_norm))

    @staticmethod
    def check_optimizer(optimizer: torch.optim.Optimizer, network: nn.Module) -> None:
        """Raise ``ConfigurationError`` (naming the fix) for an optimizer this step cannot compile."""
        check_compilable(optimizer)
        trained = {id(p) for p in optimizer.param_groups[0]["params"]}
        if trained != {id(p) for p in network.parameters()}:
            raise ConfigurationError(
                "compile=True needs the optimizer to train exactly the network's parameters; it trains "
                f"{len(trained)} tensors, the network has {len(list(network.parameters()))}."
            )

    def _compile(self) -> Callable[..., Any]:
        """The pure step (gradients of the loss, clipping, the optimizer; params and state written in place),
        compiled. It closes over the network, the loss and plain values only, so no guard depends on
        which optimizer object is passed."""
        network, loss_function, max_grad_norm = self.network, self.loss, self.max_grad_norm
        has_aux, gate = self.has_aux, self.gate
        trained_ids = {id(param) for param in self.trained}
        names = [name for name, param in network.named_parameters() if id(param) in trained_ids]
        frozen_names = [name for name, param in network.named_parameters() if id(param) not in trained_ids]

        def step(
            params: list[torch.Tensor],
            frozen: list[torch.Tensor],
            states: list[ParameterState],
            lr: torch.Tensor,
            settings: OptimizerSettings,
            *batch: Any,
        ) -> Any:
            constants = dict(zip(frozen_names, [param.detach() for param in frozen]))

            def loss_of(weights: dict[str, torch.Tensor]) -> Any:
                def forward(*inputs: Any) -> Any:
                    return torch.func.functional_call(network, {**constants, **weights}, inputs)

                return loss_function(forward, *batch)

            aux: dict[str, torch.Tensor]
            grads_by_name, value = torch.func.grad_and_value(loss_of, has_aux=has_aux)(
                dict(zip(names, params))
            )
            loss, aux = value if has_aux else (value, {})
            grads = [grads_by_name[name] for name in names]
            apply = None if gate is None else aux[gate]
            with torch.no_grad():
                if max_grad_norm is not None:
                    grads = clip_by_global_norm(grads, max_grad_norm)
                for param, grad, state in zip(params, grads, states):
                    if apply is None:
                        optimizer_update(param, grad, state, lr, settings)
                        continue
                    # Gated: the update on copies, written back only where the step applies.
                    new_param, new_state = param.clone(), tuple(item.clone() for item in state)
                    optimizer_update(new_param, grad, new_state, lr, settings)
                    for old, updated in zip((param, *state), (new_param, *new_state)):
                        old.copy_(torch.where(apply, updated, old))
            if has_aux:
                return loss.detach(), {key: item.detach() for key, item in aux.items()}
            return loss.detach()

        return compile_program(step, self.options)

    def __call__(self, optimizer: Any, *batch: Any) -> Any:
        wrapped = getattr(optimizer, "optimizer", None)
        raw = wrapped if isinstance(wrapped, torch.optim.Optimizer) else optimizer
        if raw is not self._checked:
            self.check_optimizer(raw, self.network)
            self._checked = raw
        if wrapped is None or not has_step_counters(optimizer):
            return self._run(raw, batch)
        if self.gate is not None:  # counted only when applied (the eager path then skips optimizer.step)
            result = self._run(raw, batch)
            if bool(result[1][self.gate]):
                count_optimizer_step(optimizer, lambda: None)
            return result
        out: list[Any] = []
        count_optimizer_step(optimizer, lambda: out.append(self._run(raw, batch)))
        return out[0]

    def _run(self, optimizer: torch.optim.Optimizer, batch: tuple[Any, ...]) -> Any:
        states = optimizer_states(optimizer, self.trained)
        if self._lr is None:
            self._lr = torch.zeros((), dtype=torch.float32, device=self.params[0].device)
        self._lr.fill_(float(optimizer.param_groups[0]["lr"]))
        settings = optimizer_settings(optimizer)
        if self._program is None:
            self._program = self._compile()
        for param in self.params:  # the eager path leaves no stale gradient behind either (zero_grad)
            param.grad = None
        if self._reads_rnn:  # dynamo reads the flag when it traces (the first call, a recompile)
            with torch._dynamo.config.patch(allow_rnn=True):
                return self._program(self.trained, self.frozen, states, self._lr, settings, *batch)
        return self._program(self.trained, self.frozen, states, self._lr, settings, *batch)
