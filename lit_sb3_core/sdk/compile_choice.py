"""Whether a run compiles its update: ``compile=True``, ``False`` or ``"auto"``.

``compile=True`` runs each gradient step as one ``torch.compile`` program (compiled_update.py,
update_program.py); ``False`` runs it eagerly, as SB3 does. ``"auto"`` compiles where compiling pays for
itself: the first update of a run on a cold cache spends tens of seconds of CPU in inductor, which the
faster steps win back only after enough of them. Each algorithm states that point as
``compile_pays_after``, the environment-step budget from which a compile with a *cold* cache has saved
more CPU time than it cost (about twice the break-even measured in benchmarks/README.md). A run then
compiles when

* the steps it will take (``RLTrainer(max_steps)`` or ``learn(total_timesteps)``, less the steps a
  continued run has done) reach ``compile_pays_after``,
* its observations are flat vectors (MLP policies: where the pay-back was measured; image policies are
  convolution-bound, dictionaries unmeasured; ``compile=True`` compiles those),
* it trains in one process (the compiled step has no gradient all-reduce),
* its settings compile (``compile_refusal`` is None: gSDE's off-policy noise, for one, does not; its
  optimizers are the Adam, AdamW or RMSprop the programs apply), and
* inductor has a C++ compiler to build with (on CPU).

Otherwise it runs eagerly; ``verbose >= 1`` says which and why. ``"auto"`` is what ``lit-sb3 train`` uses
(rl-zoo3's budgets are the runs' real lengths); the Python default stays ``False``, as SB3: SB3's idiom
``learn(int(1e10), callback=StopTrainingOnRewardThreshold(...))`` names a budget the run never reaches, and
a seeded run's numbers would otherwise depend on its budget (a compiled step rounds differently).
"""

from __future__ import annotations

from typing import Any, Literal, cast

from lit_sb3_core.errors import ConfigurationError

__all__ = ["CompileChoice", "check_compile", "compiler_missing", "init_compile", "resolve_compile"]

CompileChoice = bool | Literal["auto"]


def check_compile(value: Any) -> CompileChoice:
    """``compile`` as given, or a clear error: True, False or ``"auto"``."""
    if isinstance(value, bool) or value == "auto":
        return cast("CompileChoice", value)
    raise ConfigurationError(
        f"compile must be True, False or 'auto', got {value!r}: True compiles every gradient step, 'auto' "
        "compiles runs long enough to pay the compile back, False runs eagerly."
    )


def init_compile(algorithm: Any, value: Any, refusal: str | None = None) -> None:
    """Record an algorithm's ``compile`` argument (constructors call it): ``refusal`` says why its settings
    cannot compile (None: they can); ``compile=True`` with a refusal is an error here, ``"auto"`` runs
    eagerly. Until a run decides, the update is eager unless ``compile=True``."""
    choice = check_compile(value)
    if choice is True and refusal is not None:
        raise ConfigurationError(f"{type(algorithm).__name__}(compile=True): {refusal}.")
    algorithm.compile_choice, algorithm.compile_refusal = choice, refusal
    algorithm.compile_update = choice is True


def compiler_missing() -> str | None:
    """Why inductor cannot build CPU programs here (no C++ compiler it accepts), or None."""
    # InvalidCxxCompiler, or a torch without the helper: either way, do not compile.
    try:
        from torch._inductor.cpp_builder import get_cpp_compiler

        get_cpp_compiler()
    except Exception as error:
        return f"inductor finds no C++ compiler ({type(error).__name__}); install g++ or set CXX"
    return None


def resolve_compile(algorithm: Any) -> bool:
    """Whether this run of ``algorithm`` compiles its update (read at the start of each fit)."""
    choice = algorithm.compile_choice
    if choice is not True and choice != "auto":
        return False
    refusal = algorithm.compile_refusal
    if choice is True:
        if refusal is not None:  # the constructor refused it; a changed attribute is refused here
            raise ConfigurationError(f"{type(algorithm).__name__}(compile=True): {refusal}.")
        return True
    # The steps this run will take (a continued run's budget counts the steps already done).
    budget = int(algorithm.total_timesteps) - int(algorithm.num_timesteps)
    threshold = algorithm.compile_pays_after
    if threshold is None:
        reason: str | None = "no compiled update is measured to pay back for this algorithm"
    elif budget < threshold:
        reason = f"the budget, {budget:,} steps, is below the {threshold:,} from which compiling pays back"
    elif not _flat(algorithm.observation_space):
        reason = (
            "'auto' compiles policies on flat observations, where compiling was measured to pay back "
            "(images are convolution-bound); pass compile=True to compile this one"
        )
    elif algorithm.world_size > 1:
        reason = "the compiled update runs in one process"
    elif refusal is not None:
        reason = refusal
    elif (unfit := _optimizer_refusal(algorithm)) is not None:
        reason = unfit
    elif algorithm.device.type == "cpu":
        reason = compiler_missing()
    else:
        reason = None
    if algorithm.verbose >= 1:
        print(
            f"compile='auto': {'compiling' if reason is None else 'not compiling'} the update"
            + (f" ({budget:,} steps)" if reason is None else f" ({reason})")
        )
    return reason is None


def _optimizer_refusal(algorithm: Any) -> str | None:
    """Why the run's optimizers cannot be applied inside a compiled program, or None."""
    from lit_sb3_core.engine.lightning_internals import attached_trainer
    from lit_sb3_core.sdk.compiled_optimizers import check_compilable

    trainer = attached_trainer(algorithm)
    for optimizer in getattr(trainer, "optimizers", None) or []:
        try:
            check_compilable(getattr(optimizer, "optimizer", optimizer))
        except ConfigurationError as error:
            return str(error)
    return None


def _flat(space: Any) -> bool:
    """A Box of rank <= 2 (not an image), or a discrete space: what MLP policies take."""
    from gymnasium import spaces

    if isinstance(space, spaces.Box):
        return len(space.shape) <= 2
    return isinstance(space, (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary))
