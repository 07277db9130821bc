"""SB3's views of an off-policy model's networks: ``model.actor``, ``model.critic``, their targets.

* A features extractor shared by actor and critic (``share_features_extractor=True``) counts in
  ``critic.parameters()`` (first, as ``features_extractor.*``), as SB3's critic registers it; the critic's
  optimizer leaves it to the actor's loss; TD3's target critic reads the target actor's extractor.
* The networks take raw observations as SB3's do (they preprocess inside): a Discrete index, a Dict with
  one, a channel-last uint8 image, and the preprocessed batches the algorithms pass them give the same
  values.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3 import DQN, SAC, TD3
from lit_sb3.common.envs import FakeImageEnv
from lit_sb3.common.torch_layers import BaseFeaturesExtractor


class LinearExtractor(BaseFeaturesExtractor):
    """A features extractor with weights (MlpPolicy's flattening has none), to share between networks."""

    def __init__(self, observation_space: gym.Space) -> None:
        super().__init__(observation_space, 8)
        self.linear = torch.nn.Linear(3, 8)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(obs))


SHARED = {
    "policy_kwargs": {
        "net_arch": [16],
        "share_features_extractor": True,
        "features_extractor_class": LinearExtractor,
    },
    "learning_starts": 50,
    "batch_size": 16,
    "seed": 0,
}


def _snapshot(parameters: Any) -> list[torch.Tensor]:
    return [p.detach().clone() for p in parameters]


@pytest.mark.parametrize("algo", [SAC, TD3])
def test_a_shared_extractor_counts_in_the_critics_parameters_and_is_trained_by_the_actor(algo: Any) -> None:
    extra = {"policy_delay": 1} if algo is TD3 else {}  # TD3: the targets move at every update
    model = algo("MlpPolicy", "Pendulum-v1", tau=0.5, **extra, **SHARED)
    actor, critic, critic_target = model.actor, model.critic, model.critic_target
    extractor = actor.features_extractor
    names = [name for name, _ in critic.named_parameters()]
    assert names[:2] == ["features_extractor.linear.weight", "features_extractor.linear.bias"]
    assert list(critic.parameters())[:2] == list(extractor.parameters())  # the very same tensors
    # As SB3's polyak_update(critic.parameters(), critic_target.parameters()) needs: one target per parameter.
    assert [p.shape for p in critic.parameters()] == [p.shape for p in critic_target.parameters()]
    assert not any(p is q for p in critic.optimizer_parameters() for q in extractor.parameters())
    # The state dict (and so model files) holds the shared weights once, under the actor.
    keys = model.policy.state_dict().keys()
    assert "actor.features_extractor.linear.weight" in keys
    assert "critic.features_extractor.linear.weight" not in keys
    if algo is TD3:  # SB3's TD3: the target critic reads the target actor's extractor
        assert critic_target.features_extractor is model.actor_target.features_extractor
        assert "critic_target.features_extractor.linear.weight" not in keys
    else:
        assert critic_target.features_extractor is not extractor

    model.learn(60)
    target_before = _snapshot(critic_target.parameters())
    model.learn(1, reset_num_timesteps=False)  # one more update
    source = [p.detach() for p in critic.parameters()]
    moved = list(critic_target.parameters())
    # The extractor: once toward the critic's (= the actor's) for SAC; TD3 moves the shared target extractor
    # with the critic's update and again with the actor's, as SB3's two polyak_update calls do.
    kept = 0.25 if algo is TD3 else 0.5
    for old, new, online in zip(target_before[:2], moved[:2], source[:2], strict=True):
        torch.testing.assert_close(new, kept * old + (1 - kept) * online)
    for old, new, online in zip(target_before[2:], moved[2:], source[2:], strict=True):
        torch.testing.assert_close(new, 0.5 * old + 0.5 * online)


def test_the_critic_loss_leaves_a_shared_extractor_to_the_actor() -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", **SHARED)
    extractor = model.actor.features_extractor
    obs, actions = torch.ones(4, 3), torch.zeros(4, 1)
    sum(q.sum() for q in model.critic(obs, actions)).backward()  # as SB3: no gradient into the extractor
    assert all(p.grad is None for p in extractor.parameters())
    assert all(p.grad is not None for p in model.critic.optimizer_parameters())
    model.actor.action_log_prob(obs)[1].sum().backward()
    assert all(p.grad is not None for p in extractor.parameters())


class DiscreteStateEnv(gym.Env):
    """Discrete observations (state indices), a Box action: the observation one-hot encoding concerns."""

    observation_space = spaces.Discrete(4)
    action_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)

    def __init__(self) -> None:
        self.state = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[int, dict]:
        super().reset(seed=seed)
        self.state = 0
        return self.state, {}

    def step(self, action: np.ndarray) -> tuple[int, float, bool, bool, dict]:
        self.state = (self.state + 1) % 4
        return self.state, float(action[0]), False, self.state == 0, {}


def test_actor_and_critic_take_raw_discrete_observations_as_sb3s() -> None:
    model = SAC("MlpPolicy", DiscreteStateEnv(), learning_starts=0, batch_size=8, seed=0).learn(40)
    raw, _ = model.policy.obs_to_tensor(np.array([0, 2]))  # indices, as SB3 code passes them
    assert raw.dtype == torch.int64 and raw.shape == (2,)
    one_hot = model.policy.preprocess(raw)
    with torch.no_grad():
        actions = model.actor(raw, deterministic=True)
        torch.testing.assert_close(actions, model.actor(one_hot, deterministic=True))
        q_raw, q_one_hot = model.critic(raw, actions), model.critic(one_hot, actions)
        torch.testing.assert_close(torch.cat(q_raw), torch.cat(q_one_hot))
        torch.testing.assert_close(model.critic.q1_forward(raw, actions), q_one_hot[0])
        torch.testing.assert_close(
            model.critic_target(raw, actions)[0], model.critic_target(one_hot, actions)[0]
        )
        torch.testing.assert_close(model.actor.action_log_prob(raw)[0].shape, torch.Size([2, 1]))


def test_q_network_takes_raw_channel_last_images_and_dict_observations() -> None:
    env = FakeImageEnv(screen_height=36, screen_width=36, n_channels=1, discrete=True)
    model = DQN("CnnPolicy", env, buffer_size=100, seed=0)
    images = np.stack([env.observation_space.sample() for _ in range(2)])  # (2, 36, 36, 1) uint8
    raw, _ = model.policy.obs_to_tensor(images)
    with torch.no_grad():
        torch.testing.assert_close(model.q_net(raw), model.q_net(model.policy.preprocess(raw)))

    dict_env = gym.wrappers.TimeLimit(_DictEnv(), 10)
    sac = SAC("MultiInputPolicy", dict_env, buffer_size=100, seed=0)
    observation = {"index": np.array([1, 3]), "vector": np.zeros((2, 2), dtype=np.float32)}
    raw_dict, _ = sac.policy.obs_to_tensor(observation)
    with torch.no_grad():
        torch.testing.assert_close(
            sac.actor(raw_dict, deterministic=True),
            sac.actor(sac.policy.preprocess(raw_dict), deterministic=True),
        )


class _DictEnv(gym.Env):
    observation_space = spaces.Dict(
        {"index": spaces.Discrete(4), "vector": spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)}
    )
    action_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict]:
        return self.observation_space.sample(), 0.0, False, False, {}
