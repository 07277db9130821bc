"""``CompiledStep``: one gradient step as one compiled program, learning what the eager step learns.

The equivalence runs compile with inductor (a C++ build: a minute of CPU cold, seconds from the on-disk
cache), so they are marked slow; the argument checks and the cache folder run by default.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from lit_sb3 import DQN
from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import CompiledStep, compile_cache_dir, compiled_update
from lit_sb3_core.sdk.compiled_update import (
    PROGRAM_OPTIONS,
    program_options,
    skip_guards_on_globals,
    use_compile_cache,
)


def _net() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def _loss(forward, x, y):  # type: ignore[no-untyped-def]
    return ((forward(x) - y) ** 2).mean()


@pytest.mark.parametrize(
    ("optimizer", "message"),
    [
        (lambda p: torch.optim.SGD(p, lr=0.1), "Adam, AdamW and RMSprop"),
        (lambda p: torch.optim.Adam(p, lr=0.1, amsgrad=True), "amsgrad"),
        (lambda p: torch.optim.Adam(list(p)[:1], lr=0.1), "exactly the network's parameters"),
    ],
)
def test_what_it_cannot_compile_is_refused_with_the_fix(optimizer, message) -> None:  # type: ignore[no-untyped-def]
    net = _net()
    step = CompiledStep(net, _loss)
    with pytest.raises(ConfigurationError, match=message):
        step(optimizer(net.parameters()), torch.zeros(4, 3), torch.zeros(4, 2))


def test_the_cache_folder_is_the_users_and_an_explicit_choice_wins(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("LIT_SB3_COMPILE_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert compile_cache_dir() == tmp_path / "xdg" / "lit-sb3" / "torch-compile"
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path / "mine"))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    assert use_compile_cache() == tmp_path / "mine" and (tmp_path / "mine").is_dir()
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))  # the user's own choice
    assert use_compile_cache() == tmp_path / "inductor"


def test_a_gate_needs_the_losss_aux() -> None:
    with pytest.raises(ConfigurationError, match="has_aux=True"):
        CompiledStep(_net(), _loss, gate="apply")


def _gated_loss(forward, x, y, limit):  # type: ignore[no-untyped-def]
    value = ((forward(x) - y) ** 2).mean()
    return value, {"apply": value.detach() < limit, "doubled": 2 * value.detach()}


@pytest.mark.slow
def test_a_gated_step_changes_nothing_when_closed_and_is_adams_when_open(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """PPO's target_kl stop as a gate: closed, the weights and Adam's state stay as they were (its step
    count too); open, the step is eager Adam's after clipping; the aux comes back either way."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    net, reference = _net(), _net()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05)
    eager = torch.optim.Adam(reference.parameters(), lr=0.05)
    step = CompiledStep(net, _gated_loss, max_grad_norm=0.5, has_aux=True, gate="apply")
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    loss, aux = step(optimizer, x, y, torch.tensor(0.0))
    assert not bool(aux["apply"]) and float(aux["doubled"]) == pytest.approx(2 * float(loss))
    for ours, theirs in zip(net.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0)
    assert all(float(state["step"]) == 0 for state in optimizer.state.values())
    for _ in range(3):
        step(optimizer, x, y, torch.tensor(1e9))
        eager.zero_grad()
        _loss(reference, x, y).backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5)
        eager.step()
    for ours, theirs in zip(net.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    assert all(float(state["step"]) == 3 for state in optimizer.state.values())


def test_a_process_compiles_more_update_programs_than_dynamos_recompile_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dynamo keeps compiled programs on the code object and fails a ``fullgraph`` compile once it holds
    ``recompile_limit`` of them; every update program is a closure of the same code, so a process's ninth
    program (nine models of a sweep, each clipping at its own norm) failed with ``FailOnRecompileLimitHit``.
    Each step now has its own: all of them compile and take Adam's step. Compiled by dynamo alone here
    (backend "eager": no inductor build, so not slow), with the limit at 2: three programs."""
    compile_with_inductor = torch.compile

    def dynamo_only(function: Any, **options: Any) -> Any:
        return compile_with_inductor(function, fullgraph=True, dynamic=False, backend="eager")

    monkeypatch.setattr(torch, "compile", dynamo_only)
    monkeypatch.setattr(torch._dynamo.config, "recompile_limit", 2)  # the limit's effect, sooner than 8
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    for index in range(torch._dynamo.config.recompile_limit + 1):
        max_grad_norm = 0.1 * (index + 1)
        net, reference = _net(), _net()
        step = CompiledStep(net, _loss, max_grad_norm=max_grad_norm)
        step(torch.optim.Adam(net.parameters(), lr=0.05), x, y)
        eager = torch.optim.Adam(reference.parameters(), lr=0.05)
        _loss(reference, x, y).backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), max_grad_norm)
        eager.step()
        for ours, theirs in zip(net.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_trained_must_be_the_networks_own_parameters() -> None:
    with pytest.raises(ConfigurationError, match="trained"):
        CompiledStep(_net(), _loss, trained=[torch.nn.Parameter(torch.zeros(2))])
    with pytest.raises(ConfigurationError, match="trained"):
        CompiledStep(_net(), _loss, trained=[])


@pytest.mark.slow
def test_a_step_on_part_of_the_network_is_adams_with_the_rest_skipped(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``trained``: the other parameters enter the loss as constants and get neither an update nor optimizer
    state, as eager Adam skips a parameter whose gradient was set to None (TRPO's critic step)."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    net, reference = _net(), _net()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.05, weight_decay=0.1)
    eager = torch.optim.Adam(reference.parameters(), lr=0.05, weight_decay=0.1)
    step = CompiledStep(net, _loss, trained=list(net[2].parameters()))
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    for _ in range(3):
        step(optimizer, x, y)
        eager.zero_grad()
        _loss(reference, x, y).backward()
        for param in reference[0].parameters():
            param.grad = None
        eager.step()
    for ours, theirs in zip(net.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(net[0].weight, _net()[0].weight, rtol=0, atol=0)
    assert set(optimizer.state) == set(net[2].parameters())
    assert all(float(state["step"]) == 3 for state in optimizer.state.values())


def test_update_programs_skip_the_guards_on_globals_only() -> None:
    """Dynamo's guards on module globals (torch's and our functions, modules, classes) are dropped; a global
    tensor's and everything reached from the program's arguments and closures are kept."""
    entries = [
        SimpleNamespace(is_global=True, guard_type="ID_MATCH"),
        SimpleNamespace(is_global=True, guard_type="CLOSURE_MATCH"),
        SimpleNamespace(is_global=True, guard_type="TENSOR_MATCH"),
        SimpleNamespace(is_global=False, guard_type="EQUALS_MATCH"),
        SimpleNamespace(is_global=False, guard_type="TENSOR_MATCH"),
        SimpleNamespace(is_global=False, guard_type="ID_MATCH"),
    ]
    assert skip_guards_on_globals(entries) == [False, False, True, True, True, True]
    options = program_options()
    if hasattr(torch.compiler, "skip_guard_on_globals_unsafe"):  # torch >= 2.8 filters guards
        assert options["guard_filter_fn"] is skip_guards_on_globals
    assert options["size_asserts"] is False
    assert "guard_filter_fn" not in PROGRAM_OPTIONS  # torch.compile pops it from the copy it is given


class _ScaledLoss:
    """A loss whose hyperparameter lives on an object, as the algorithms' do (``self.gamma``)."""

    def __init__(self) -> None:
        self.scale = 1.0

    def loss(self, forward, x, y, weight):  # type: ignore[no-untyped-def]
        return self.scale * weight * ((forward(x) - y) ** 2).mean()


@pytest.mark.slow
def test_a_compiled_step_filters_its_guards_and_a_changed_value_recompiles(
    monkeypatch, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    """The guard filter is applied (global guards dropped, every tensor guard kept), and a hyperparameter
    changed after the first call (an attribute the loss reads from its object, a float argument) still
    recompiles: the loss comes back with the new value."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    if not hasattr(torch.compiler, "skip_guard_on_globals_unsafe"):
        pytest.skip("this torch has no guard filter")
    filtered: list[tuple[list[Any], list[bool]]] = []

    def spy(entries: Any) -> list[bool]:
        keep = skip_guards_on_globals(entries)
        filtered.append((list(entries), keep))
        return keep

    monkeypatch.setattr(compiled_update, "skip_guards_on_globals", spy)
    torch._dynamo.reset()
    net = _net()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.0)  # the weights stay: the losses compare
    scaled = _ScaledLoss()
    step = CompiledStep(net, scaled.loss)
    x, y = torch.randn(16, 3), torch.randn(16, 2)
    with torch.no_grad():
        plain = float(((net(x) - y) ** 2).mean())
    assert float(step(optimizer, x, y, 1.0)) == pytest.approx(plain, rel=1e-6)
    scaled.scale = 3.0
    assert float(step(optimizer, x, y, 1.0)) == pytest.approx(3 * plain, rel=1e-6)
    assert float(step(optimizer, x, y, 0.5)) == pytest.approx(1.5 * plain, rel=1e-6)
    assert len(filtered) == 3  # three programs: each change recompiled
    for entries, keep in filtered:
        dropped = [entry for entry, kept in zip(entries, keep, strict=True) if not kept]
        assert dropped and all(entry.is_global for entry in dropped)
        assert all(
            kept for entry, kept in zip(entries, keep, strict=True) if entry.guard_type == "TENSOR_MATCH"
        )


def test_dqn_rejects_a_non_bool_compile() -> None:
    with pytest.raises(ConfigurationError, match="compile"):
        DQN("MlpPolicy", compile="yes")


def _dqn(compile: bool) -> DQN:
    """Tanh networks: see ``_sac`` in test_update_program.py (ReLU put a gradient-carrying preactivation
    2.8e-6 from its kink in this run, where the two runs' preactivations end 1.25e-6 apart)."""
    return DQN(
        "MlpPolicy",
        "CartPole-v1",
        learning_starts=100,
        buffer_size=2_000,
        train_freq=4,
        target_update_interval=100,
        learning_rate="lin_1e-3",
        policy_kwargs={"activation_fn": torch.nn.Tanh},
        seed=0,
        device="cpu",
        compile=compile,
    )


@pytest.mark.slow
def test_a_compiled_dqn_learns_the_weights_the_eager_one_learns(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Same seed, 800 steps (175 gradient steps, two target updates, a decaying learning rate): the same
    weights and Adam state within float rounding, and Lightning counted every step."""
    monkeypatch.setenv("LIT_SB3_COMPILE_CACHE", str(tmp_path))  # inductor's caches: not the user's folder
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    # each model built right before its run: building seeds numpy's global generator, which the run's
    # epsilon-greedy draws and minibatch indices continue (as in SB3)
    eager = _dqn(False)
    eager.learn(800)
    compiled = _dqn(True)
    compiled.learn(800)
    assert compiled.n_updates == eager.n_updates == 175
    assert compiled.trainer.global_step == eager.trainer.global_step == 175
    for (name, ours), (_, theirs) in zip(
        compiled.policy.state_dict().items(), eager.policy.state_dict().items(), strict=True
    ):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5, msg=name)
    ours_state = compiled.optimizers().optimizer.state_dict()["state"]
    theirs_state = eager.optimizers().optimizer.state_dict()["state"]
    assert ours_state.keys() == theirs_state.keys()
    for index, state in theirs_state.items():
        assert set(ours_state[index]) == set(state)
        torch.testing.assert_close(ours_state[index]["exp_avg"], state["exp_avg"], rtol=1e-3, atol=1e-6)
        assert float(ours_state[index]["step"]) == float(state["step"]) == 175


@pytest.mark.parametrize("algo", ["dqn", "a2c", "ppo"])
def test_a_changed_max_grad_norm_builds_a_new_step(algo: str) -> None:
    """The clipping norm is compiled into the program: changing ``model.max_grad_norm`` between ``learn``
    calls (as SB3 reads it at every update) must give a step that clips at the new value; an unchanged model
    keeps its step (and its compiled program). PPO's ``target_kl`` gate likewise."""
    import lit_sb3

    model = lit_sb3.get_algo_class(algo)("MlpPolicy", "CartPole-v1", compile=True, seed=0)
    first = model.compiled_step()
    assert model.compiled_step() is first
    model.max_grad_norm = 0.25
    second = model.compiled_step()
    assert second is not first and second.max_grad_norm == 0.25 and second.clips_at(0.25)
    if algo == "ppo":
        model.target_kl = 0.02
        gated = model.compiled_step()
        assert gated is not second and gated.gate == "apply"
