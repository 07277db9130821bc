"""The opt-in oneDNN route for fp32 Linear layers (lit_sb3_core.nets.fast_matmul) computes what F.linear
computes, values and gradients, in whole training runs too, and falls back cleanly when its guard fails."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from lit_sb3_core.nets import fast_matmul

pytestmark = pytest.mark.skipif(not fast_matmul.available(), reason="this torch has no oneDNN linear")


@pytest.fixture
def route_on(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The route on for every layer size; yields a list that grows by one per oneDNN call."""
    calls: list[int] = []
    original = fast_matmul._onednn

    def counted(*args: torch.Tensor | None) -> torch.Tensor:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fast_matmul, "_onednn", counted)
    monkeypatch.setattr(fast_matmul, "MIN_FLOPS", 0)
    fast_matmul.set_enabled(True)
    try:
        yield calls
    finally:
        fast_matmul.set_enabled(None)


@pytest.mark.parametrize(("shape", "bias"), [((33, 7), True), ((4, 5, 7), True), ((16, 7), False)])
def test_linear_matches_f_linear_in_values_and_gradients(
    route_on: list[int], shape: tuple[int, ...], bias: bool
) -> None:
    torch.manual_seed(0)
    layer = nn.Linear(7, 6, bias=bias)
    x = torch.randn(*shape, requires_grad=True)
    params = [x, *layer.parameters()]
    upstream = torch.randn(*shape[:-1], 6)
    expected = F.linear(x, layer.weight, layer.bias)
    expected_grads = torch.autograd.grad(expected, params, upstream)
    got = fast_matmul.linear(x, layer.weight, layer.bias)
    got_grads = torch.autograd.grad(got, params, upstream)
    assert len(route_on) == 3, "forward, input gradient and weight gradient go through oneDNN"
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(got_grads, expected_grads):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


def test_a_differentiated_backward_keeps_second_derivatives(route_on: list[int]) -> None:
    torch.manual_seed(0)
    x = torch.randn(8, 5, requires_grad=True)
    weight = torch.randn(3, 5, requires_grad=True)

    def second(linear: object) -> tuple[torch.Tensor, ...]:
        out = linear(x, weight, None).tanh().sum()  # type: ignore[operator]
        (grad_x,) = torch.autograd.grad(out, x, create_graph=True)
        return torch.autograd.grad(grad_x.square().sum(), (x, weight))

    for mine, theirs in zip(second(fast_matmul.linear), second(F.linear)):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


def test_other_dtypes_autocast_and_small_layers_keep_the_plain_path(
    route_on: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    layer = nn.Linear(4, 3)
    x = torch.randn(5, 4)
    fast_matmul.linear(x.double(), layer.weight.double(), layer.bias.double())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert fast_matmul.linear(x, layer.weight, layer.bias).dtype == torch.bfloat16
    monkeypatch.setattr(fast_matmul, "MIN_FLOPS", 5 * 4 * 3 + 1)
    fast_matmul.linear(x, layer.weight, layer.bias)
    assert route_on == []
    monkeypatch.setattr(fast_matmul, "MIN_FLOPS", 5 * 4 * 3)
    fast_matmul.linear(x, layer.weight, layer.bias)
    assert route_on == [1]


def test_routed_switches_plain_linears_for_the_block_only(route_on: list[int]) -> None:
    class Custom(nn.Linear):
        pass

    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), Custom(8, 2))
    state = copy.deepcopy(net.state_dict())
    x = torch.randn(3, 4)
    expected = net(x)
    with fast_matmul.routed(net):
        assert "forward" in net[0].__dict__ and "forward" not in net[2].__dict__
        got = net(x)
        assert net.state_dict().keys() == state.keys()
    assert len(route_on) == 1, "only the plain nn.Linear takes the route"
    assert "forward" not in net[0].__dict__
    torch.testing.assert_close(got, expected)
    fast_matmul.set_enabled(False)
    with fast_matmul.routed(net):
        assert "forward" not in net[0].__dict__


def test_a_failing_self_check_falls_back_with_one_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        raise RuntimeError("no such op in this build")

    monkeypatch.setattr(fast_matmul, "_onednn", broken)
    fast_matmul.available.cache_clear()
    fast_matmul.set_enabled(True)
    try:
        with pytest.warns(RuntimeWarning, match="oneDNN route for Linear layers is off: RuntimeError"):
            assert not fast_matmul.available()
        assert not fast_matmul.enabled()
        net = nn.Sequential(nn.Linear(64, 64))
        with fast_matmul.routed(net):
            assert "forward" not in net[0].__dict__
            out = net(torch.randn(256, 64, requires_grad=True))
        out.sum().backward()  # the plain path: the broken op is never called
        wrong = lambda x, weight, bias: F.linear(x, weight, bias) + 1e-3  # noqa: E731
        monkeypatch.setattr(fast_matmul, "_onednn", wrong)
        fast_matmul.available.cache_clear()
        with pytest.warns(RuntimeWarning, match="differ from F.linear"):
            assert not fast_matmul.available()
    finally:
        fast_matmul.set_enabled(None)
        monkeypatch.undo()
        fast_matmul.available.cache_clear()
    assert fast_matmul.available()


def test_the_route_is_off_unless_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(fast_matmul.ENV_VAR, raising=False)
    assert not fast_matmul.enabled()
    monkeypatch.setenv(fast_matmul.ENV_VAR, "1")
    assert fast_matmul.enabled()


@pytest.mark.parametrize(
    ("algo", "env", "kwargs", "steps"),
    [
        ("sac", "Pendulum-v1", {"learning_starts": 64, "batch_size": 32}, 160),
        ("ppo", "CartPole-v1", {"n_steps": 64, "batch_size": 32, "n_epochs": 2}, 128),
    ],
)
def test_training_through_onednn_learns_the_same_weights(
    algo: str, env: str, kwargs: dict, steps: int, route_on: list[int]
) -> None:
    import lit_sb3

    def train(route: bool) -> dict[str, torch.Tensor]:
        fast_matmul.set_enabled(route)
        model = lit_sb3.get_algo_class(algo)(
            "MlpPolicy", env, policy_kwargs={"net_arch": [32, 32]}, seed=3, device="cpu", **kwargs
        )
        model.learn(steps)
        return copy.deepcopy(model.policy.state_dict())

    plain = train(False)
    assert route_on == []
    routed = train(True)
    assert len(route_on) > 100, "the training run's Linear layers went through oneDNN"
    assert plain.keys() == routed.keys()
    for name, value in plain.items():
        torch.testing.assert_close(routed[name], value, rtol=1e-4, atol=1e-5, msg=name)
