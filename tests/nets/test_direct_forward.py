"""``TorchMlp``, ``NumpyMlp`` and ``NumpyActorCritic``: acting passes without module calls.

TorchMlp must give ``network(obs)``'s numbers bit for bit (DQN's eager runs act with it); NumpyMlp the same
within float rounding, on the live weights as optimizers change them; NumpyActorCritic an actor-critic's
rollout pass within float rounding, drawing the same samples from torch's generator.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.nets import fast_matmul
from lit_sb3_core.nets.actor_critic import ActorCriticPolicy
from lit_sb3_core.nets.direct_forward import NumpyActorCritic, NumpyMlp, TorchMlp
from lit_sb3_core.nets.off_policy_policies import QNetwork, create_mlp
from lit_sb3_core.nets.torch_layers import FlattenExtractor, NatureCNN
from lit_sb3_core.sdk.fast_path import plain_calls

torch.set_num_threads(1)


def _q_network(activation: type[nn.Module] = nn.ReLU, space: spaces.Space | None = None) -> QNetwork:
    torch.manual_seed(0)
    space = space if space is not None else gym.make("CartPole-v1").observation_space
    return QNetwork(FlattenExtractor(space), 2, [64, 64], activation)


def _cartpole_observations(n: int) -> np.ndarray:
    """Observations a real CartPole run visits (random actions), one row each."""
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=0)
    rows = []
    rng = np.random.default_rng(0)
    for _ in range(n):
        rows.append(obs)
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(2)))
        if terminated or truncated:
            obs, _ = env.reset()
    return np.stack(rows)


def _module_pass(network: QNetwork, obs: np.ndarray) -> torch.Tensor:
    with torch.inference_mode(), plain_calls(network):
        return network(torch.from_numpy(obs))


@pytest.mark.parametrize("activation", [nn.ReLU, nn.Tanh])
@pytest.mark.parametrize("batch", [1, 8])
def test_torch_pass_gives_the_modules_numbers_bit_for_bit(activation: type[nn.Module], batch: int) -> None:
    network = _q_network(activation)
    direct = TorchMlp.of(network)
    assert direct is not None
    obs = _cartpole_observations(64)
    for start in range(0, 64, batch):
        rows = obs[start : start + batch]
        with torch.inference_mode():
            ours = direct(rows)
        theirs = _module_pass(network, rows)
        assert torch.equal(ours, theirs)
        np.testing.assert_array_equal(direct.argmax(rows), theirs.argmax(dim=1).numpy())


def test_torch_pass_casts_float64_observations_as_the_policys_preprocessing_does() -> None:
    space = spaces.Box(-1.0, 1.0, (4,), dtype=np.float64)
    network = _q_network(space=space)
    direct = TorchMlp.of(network)
    assert direct is not None
    obs = np.random.default_rng(1).uniform(-1, 1, (8, 4))
    with torch.inference_mode():
        assert torch.equal(direct(obs), _module_pass(network, obs.astype(np.float32)))
        assert torch.equal(direct(obs), network(torch.from_numpy(obs).float()))


def test_torch_pass_applies_inplace_relu() -> None:
    torch.manual_seed(0)
    mlp = create_mlp(4, 2, [16], nn.ReLU)
    mlp[1] = nn.ReLU(inplace=True)
    direct = TorchMlp.of(mlp)
    assert direct is not None
    obs = _cartpole_observations(8)
    with torch.inference_mode():
        assert torch.equal(direct(obs), mlp(torch.from_numpy(obs)))


def test_torch_pass_keeps_a_rerouted_layer() -> None:
    """A layer ``fast_matmul.routed`` reroutes (its forward replaced on the instance) computes through it."""
    network = _q_network()
    direct = TorchMlp.of(network)
    assert direct is not None
    calls: list[int] = []
    first = network.q_net[0]

    def rerouted(x: torch.Tensor) -> torch.Tensor:
        calls.append(1)
        return fast_matmul.linear(x, first.weight, first.bias)

    object.__setattr__(first, "forward", rerouted)
    try:
        with torch.inference_mode():
            out = direct(_cartpole_observations(4))
    finally:
        first.__dict__.pop("forward")
    assert calls == [1]
    assert out.shape == (4, 2)


def test_numpy_pass_matches_the_modules_within_rounding_on_live_weights() -> None:
    network = _q_network()
    direct = NumpyMlp.of(network)
    assert direct is not None
    obs = _cartpole_observations(256)
    optimizer = torch.optim.Adam(network.parameters(), lr=1e-2)
    for _ in range(3):
        ours, theirs = direct(obs), _module_pass(network, obs).numpy()
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
        # the greedy actions agree wherever the two Q-values are not tied within rounding
        separated = np.abs(theirs[:, 0] - theirs[:, 1]) > 1e-5
        np.testing.assert_array_equal(direct.argmax(obs)[separated], theirs.argmax(axis=1)[separated])
        # an optimizer step writes into the weights the numpy views read
        loss = network(torch.from_numpy(obs)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def test_numpy_pass_follows_weights_given_new_memory() -> None:
    network = _q_network()
    direct = NumpyMlp.of(network)
    assert direct is not None
    obs = _cartpole_observations(16)
    last = network.q_net[-1]
    with torch.no_grad():
        last.weight.data = torch.randn_like(last.weight) * 10  # new storage, not an in-place write
    np.testing.assert_allclose(direct(obs), _module_pass(network, obs).numpy(), rtol=1e-5, atol=1e-5)
    # a state dict loaded with assign=True replaces the Parameter objects themselves
    state = {key: torch.randn_like(value) for key, value in network.state_dict().items()}
    network.load_state_dict(state, assign=True)
    np.testing.assert_allclose(direct(obs), _module_pass(network, obs).numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "network",
    [
        pytest.param(lambda: _q_network(space=spaces.Discrete(5)), id="one-hot observations"),
        pytest.param(
            lambda: QNetwork(NatureCNN(spaces.Box(0, 255, (1, 36, 36), dtype=np.uint8)), 2, []),
            id="image observations",
        ),
        pytest.param(
            lambda: nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.Linear(8, 2)), id="LayerNorm"
        ),
        pytest.param(lambda: nn.Sequential(nn.Linear(4, 8)).double(), id="float64 weights"),
        pytest.param(lambda: nn.Linear(4, 2), id="not a Sequential"),
    ],
)
def test_what_the_passes_do_not_reproduce_is_refused(network: Any) -> None:
    built = network()
    assert TorchMlp.of(built) is None
    assert NumpyMlp.of(built) is None


# NumpyActorCritic: an on-policy rollout's pass -------------------------------------------------------------


def _actor_critic(**kwargs: Any) -> ActorCriticPolicy:
    torch.manual_seed(0)
    env = gym.make("CartPole-v1")
    return ActorCriticPolicy(env.observation_space, env.action_space, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"share_features_extractor": False},
        {"net_arch": {"pi": [16], "vf": [8, 8]}, "activation_fn": nn.ReLU},
        {"net_arch": {"pi": [], "vf": []}},
    ],
    ids=["default", "own extractors", "split ReLU", "linear heads"],
)
def test_numpy_rollout_pass_draws_the_eager_passs_actions_from_torchs_generator(
    kwargs: dict[str, Any],
) -> None:
    policy = _actor_critic(**kwargs).eval()
    direct = NumpyActorCritic.of(policy)
    assert direct is not None
    obs = _cartpole_observations(8 * 50).reshape(50, 8, 4)
    torch.manual_seed(7)
    with torch.inference_mode():
        theirs = [policy(torch.from_numpy(rows)) for rows in obs]
    after_theirs = torch.rand(3)
    torch.manual_seed(7)
    ours = [direct(rows) for rows in obs]
    assert torch.equal(torch.rand(3), after_theirs)  # the same draws consumed
    for (actions, values, log_probs), (eager_actions, eager_values, eager_log_probs) in zip(
        ours, theirs, strict=True
    ):
        assert torch.equal(actions, eager_actions)
        torch.testing.assert_close(values, eager_values, rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(log_probs, eager_log_probs, rtol=1e-5, atol=1e-6)


def test_numpy_rollout_pass_refuses_what_torch_multinomial_refuses() -> None:
    policy = _actor_critic().eval()
    direct = NumpyActorCritic.of(policy)
    assert direct is not None
    obs = np.full((2, 4), np.nan, dtype=np.float32)
    with pytest.raises(RuntimeError, match="probability tensor contains"):
        policy(torch.from_numpy(obs))
    with pytest.raises(ValueError, match="probability tensor contains"):
        direct(obs)


class _OwnActorCritic(ActorCriticPolicy):
    pass


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(
            lambda: ActorCriticPolicy(spaces.Box(-1, 1, (3,)), spaces.Box(-1, 1, (2,))), id="Box actions"
        ),
        pytest.param(
            lambda: ActorCriticPolicy(spaces.Box(-1, 1, (3,)), spaces.MultiDiscrete([2, 3])),
            id="MultiDiscrete",
        ),
        pytest.param(
            lambda: ActorCriticPolicy(spaces.Discrete(5), spaces.Discrete(2)), id="one-hot observations"
        ),
        pytest.param(
            lambda: ActorCriticPolicy(
                spaces.Box(0, 255, (36, 36, 1), dtype=np.uint8),
                spaces.Discrete(2),
                features_extractor_class=NatureCNN,
            ),
            id="images",
        ),
        pytest.param(lambda: _OwnActorCritic(spaces.Box(-1, 1, (3,)), spaces.Discrete(2)), id="a subclass"),
    ],
)
def test_numpy_rollout_pass_refuses_what_it_does_not_reproduce(make: Any) -> None:
    assert NumpyActorCritic.of(make()) is None
