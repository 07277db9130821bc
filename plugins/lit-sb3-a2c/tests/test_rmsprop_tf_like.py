"""RMSpropTFLike: the TensorFlow update rule, checked by hand and against Stable-Baselines3's version."""

from __future__ import annotations

import copy

import pytest
import torch

from lit_sb3_a2c import RMSpropTFLike


def test_first_step_matches_hand_computation() -> None:
    param = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    grad = torch.tensor([0.3, -4.0, 0.0])
    optimizer = RMSpropTFLike([param], lr=0.1, alpha=0.9, eps=1e-2)
    param.grad = grad.clone()
    optimizer.step()
    # v starts at 1 (not 0) and eps sits inside the square root.
    square_avg = 0.9 * 1.0 + 0.1 * grad**2
    expected = torch.tensor([1.0, -2.0, 0.5]) - 0.1 * grad / torch.sqrt(square_avg + 1e-2)
    torch.testing.assert_close(param.detach(), expected)
    # torch's RMSprop differs on the same input: that is the point of this optimizer.
    reference = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    reference.grad = grad.clone()
    torch.optim.RMSprop([reference], lr=0.1, alpha=0.9, eps=1e-2).step()
    assert not torch.allclose(reference.detach(), param.detach())


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"eps": 1e-5, "alpha": 0.95},
        {"momentum": 0.9},
        {"centered": True},
        {"centered": True, "momentum": 0.5, "weight_decay": 0.01},
    ],
)
def test_matches_stable_baselines3(kwargs: dict) -> None:
    sb2_compat = pytest.importorskip("stable_baselines3.common.sb2_compat.rmsprop_tf_like")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    twin = copy.deepcopy(net)
    ours = RMSpropTFLike(net.parameters(), lr=0.01, **kwargs)
    theirs = sb2_compat.RMSpropTFLike(twin.parameters(), lr=0.01, **kwargs)
    for _ in range(5):
        x = torch.randn(16, 4)
        for model, optimizer in ((net, ours), (twin, theirs)):
            optimizer.zero_grad()
            model(x).pow(2).mean().backward()
            optimizer.step()
    for a, b in zip(net.parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


def test_state_dict_round_trip_continues_identically() -> None:
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 1)
    optimizer = RMSpropTFLike(net.parameters(), lr=0.05, momentum=0.5)
    for _ in range(3):
        optimizer.zero_grad()
        net(torch.randn(8, 3)).sum().backward()
        optimizer.step()
    twin = copy.deepcopy(net)
    restored = RMSpropTFLike(twin.parameters(), lr=0.05, momentum=0.5)
    restored.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    x = torch.randn(8, 3)
    for model, opt in ((net, optimizer), (twin, restored)):
        opt.zero_grad()
        model(x).sum().backward()
        opt.step()
    torch.testing.assert_close(net.weight, twin.weight)


def test_rejects_negative_hyperparameters() -> None:
    with pytest.raises(ValueError, match=r"RMSpropTFLike\(eps=...\) must be a finite number >= 0, got -1.0"):
        RMSpropTFLike(torch.nn.Linear(2, 2).parameters(), eps=-1.0)
