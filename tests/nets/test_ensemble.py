"""The optimised update paths compute what the plain ones compute: values and gradients.

* ``ensemble_forward`` (critic ensembles as one batched computation) against the loop over networks, and
  whole SAC / TD3 / TQC training runs with the critics batched against the same runs with the loop;
* ``direct_step`` (torch's Adam and RMSprop kernels without ``Optimizer.step``) against ``Optimizer.step``.
"""

from __future__ import annotations

import copy

import pytest
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.nets.ensemble import ensemble_forward, is_stackable
from lit_sb3_core.nets.off_policy_policies import ContinuousCritic, create_mlp
from lit_sb3_core.nets.torch_layers import FlattenExtractor
from lit_sb3_core.sdk.direct_steps import direct_step
from lit_sb3_core.sdk.fast_path import plain_calls


def _loop_and_batched(networks: list[nn.Module], inputs: torch.Tensor) -> None:
    params = [p for network in networks for p in network.parameters()]
    expected = torch.stack([network(inputs) for network in networks])
    expected_grads = torch.autograd.grad((expected.square() * 0.5).sum(), [inputs, *params])
    got = ensemble_forward(networks, inputs)
    got_grads = torch.autograd.grad((got.square() * 0.5).sum(), [inputs, *params])
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    for mine, theirs in zip(got_grads, expected_grads):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    ("n", "arch", "activation", "out"),
    [
        (2, [64, 64], nn.ReLU, 1),
        (3, [32, 16, 8], nn.Tanh, 5),
        (2, [16], nn.LeakyReLU, 25),
        (2, [], nn.ReLU, 1),
    ],
)
def test_ensemble_forward_matches_the_loop_in_values_and_gradients(
    n: int, arch: list[int], activation: type[nn.Module], out: int
) -> None:
    torch.manual_seed(0)
    networks = [create_mlp(7, out, arch, activation) for _ in range(n)]
    assert is_stackable(networks)
    _loop_and_batched(networks, torch.randn(33, 7, requires_grad=True))


def test_only_plain_mlps_of_one_shape_are_batched() -> None:
    same = [create_mlp(4, 1, [8, 8]) for _ in range(2)]
    assert is_stackable(same) and not is_stackable(same[:1])
    assert not is_stackable([create_mlp(4, 1, [8, 8]), create_mlp(4, 1, [8, 9])])
    assert not is_stackable([create_mlp(4, 1, [8], nn.ReLU), create_mlp(4, 1, [8], nn.Tanh)])
    normed = [nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 1)) for _ in range(2)]
    assert not is_stackable(normed)
    hooked = [create_mlp(4, 1, [8]) for _ in range(2)]
    hooked[1][0].register_forward_hook(lambda *args: None)
    assert not is_stackable(hooked)


def _critic(n_critics: int = 2) -> ContinuousCritic:
    torch.manual_seed(1)
    return ContinuousCritic(FlattenExtractor(spaces.Box(-1, 1, (3,))), 2, [32, 32], n_critics=n_critics)


def test_a_batched_critic_keeps_its_parameter_names_and_results(monkeypatch: pytest.MonkeyPatch) -> None:
    critic = _critic(3)
    names = list(critic.state_dict())
    assert names[:2] == ["qf0.0.weight", "qf0.0.bias"] and names[-1] == "qf2.4.bias"
    obs, actions = torch.randn(16, 3), torch.randn(16, 2)
    expected = critic(obs, actions)
    with plain_calls(critic):
        assert not critic.batched()  # CPU: the loop, unless switched on
        monkeypatch.setattr(ContinuousCritic, "batch_on_cpu", True)
        assert critic.batched()
        got = critic(obs, actions)
    assert not critic.batched()  # outside training: the loop, hooks honoured
    for mine, theirs in zip(got, expected):
        torch.testing.assert_close(mine, theirs, rtol=1e-5, atol=1e-6)
    assert list(critic.state_dict()) == names
    # A hook anywhere in the policy keeps every network's own call (plain_calls does not switch on).
    handle = critic.qf1.register_forward_hook(lambda *args: None)
    with plain_calls(critic):
        assert not critic.batched()
    handle.remove()


@pytest.mark.parametrize(
    ("algo", "kwargs"),
    [
        ("sac", {}),
        ("td3", {"policy_delay": 2}),
        ("tqc", {"policy_kwargs": {"net_arch": [32, 32], "n_quantiles": 5}}),
    ],
)
def test_training_with_batched_critics_learns_the_same_weights(
    algo: str, kwargs: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lit_sb3

    def train(batched: bool) -> dict[str, torch.Tensor]:
        monkeypatch.setattr(ContinuousCritic, "batch_on_cpu", batched)
        options = {"policy_kwargs": {"net_arch": [32, 32]}, **kwargs}
        model = lit_sb3.get_algo_class(algo)(
            "MlpPolicy", "Pendulum-v1", learning_starts=64, batch_size=32, seed=3, device="cpu", **options
        )
        used: list[bool] = []
        original = type(model.policy.critic).batched
        monkeypatch.setattr(
            type(model.policy.critic), "batched", lambda self: used.append(original(self)) or used[-1]
        )
        model.learn(160)
        assert any(used) is batched
        return copy.deepcopy(model.policy.state_dict())

    loop, batched = train(False), train(True)
    assert loop.keys() == batched.keys()
    for name, value in loop.items():
        torch.testing.assert_close(batched[name], value, rtol=1e-4, atol=1e-5, msg=name)


def _twin_optimizers(cls: type[torch.optim.Optimizer], **kwargs: object) -> tuple[list, list]:
    torch.manual_seed(0)
    nets = [nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))]
    nets.append(copy.deepcopy(nets[0]))
    options = {"fused": True} if cls in (torch.optim.Adam, torch.optim.AdamW) else {}
    return nets, [cls(net.parameters(), lr=1e-2, **options, **kwargs) for net in nets]


@pytest.mark.parametrize(
    ("cls", "kwargs"),
    [
        (torch.optim.Adam, {}),
        (torch.optim.Adam, {"weight_decay": 0.1, "amsgrad": True, "betas": (0.5, 0.999)}),
        (torch.optim.AdamW, {"weight_decay": 0.1}),
        (torch.optim.RMSprop, {"alpha": 0.99, "eps": 1e-5, "foreach": True}),
        (torch.optim.RMSprop, {"momentum": 0.9, "centered": True, "weight_decay": 0.01, "foreach": True}),
    ],
)
def test_direct_step_is_the_optimizers_own_step(cls: type, kwargs: dict) -> None:
    nets, optimizers = _twin_optimizers(cls, **kwargs)
    x = torch.randn(20, 5)
    for step in range(4):
        for index, (net, optimizer) in enumerate(zip(nets, optimizers)):
            for param in net.parameters():
                param.grad = None
            (net(x).sin().sum() * (step + 1)).backward()
            if index == 0:
                optimizer.step()
            else:
                took = direct_step(optimizer)
                assert took is (step > 0)  # the first step creates the state through step()
                if not took:
                    optimizer.step()
            optimizer.param_groups[0]["lr"] = 1e-2 / (step + 2)  # schedules write the group's lr
    for mine, theirs in zip(nets[1].parameters(), nets[0].parameters()):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)
    state_a, state_b = optimizers[0].state_dict(), optimizers[1].state_dict()
    assert state_a["param_groups"] == state_b["param_groups"]
    for key, value in state_a["state"].items():
        for name, tensor in value.items():
            torch.testing.assert_close(state_b["state"][key][name], tensor, rtol=0, atol=0)


def test_direct_step_declines_where_step_must_run() -> None:
    nets, optimizers = _twin_optimizers(torch.optim.Adam)
    net, optimizer = nets[0], optimizers[0]
    net(torch.randn(2, 5)).sum().backward()
    assert not direct_step(optimizer)  # no state yet
    optimizer.step()
    assert direct_step(optimizer)
    handle = optimizer.register_step_post_hook(lambda *args: None)
    assert not direct_step(optimizer)
    handle.remove()
    net[0].bias.grad = None
    before = [p.detach().clone() for p in net.parameters()]
    assert not direct_step(optimizer)  # step() skips gradient-less parameters: leave it to step()
    assert all(torch.equal(a, b) for a, b in zip(before, net.parameters()))
    for other in (
        torch.optim.Adam(net.parameters(), lr=1e-3, foreach=True),  # not fused
        torch.optim.RMSprop(net.parameters(), lr=1e-3, foreach=False),
        torch.optim.SGD(net.parameters(), lr=1e-3),
    ):
        net[0].bias.grad = torch.zeros_like(net[0].bias)
        other.step()
        assert not direct_step(other)


def test_training_steps_its_optimizers_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    import lit_sb3
    import lit_sb3_core.sdk.fast_path as fast_path

    taken: list[bool] = []

    def counted(optimizer: torch.optim.Optimizer) -> bool:
        taken.append(direct_step(optimizer))
        return taken[-1]

    monkeypatch.setattr(fast_path, "direct_step", counted)
    lit_sb3.DQN("MlpPolicy", "CartPole-v1", learning_starts=64, seed=0, device="cpu").learn(200)
    lit_sb3.A2C("MlpPolicy", "CartPole-v1", seed=0, device="cpu").learn(100)  # RMSprop
    # Only each optimizer's first step goes through step() (it creates the state).
    assert len(taken) > 50 and taken.count(False) == 2
