"""SB3 code's calls on a model's networks and buffers: ``model.actor.predict``/``save``/``load``,
``model.q_net``/``quantile_net`` likewise, ``model.device = ...`` before ``load_replay_buffer``, and
``replay_buffer.extend``. Real envs, real (short) training, real files."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from lit_sb3 import DQN, QRDQN, SAC, TD3
from lit_sb3_core.errors import ConfigurationError, ModelFileError


def _trained(model_class: type, env_id: str, **kwargs: object) -> object:
    model = model_class(
        "MlpPolicy", env_id, learning_starts=20, policy_kwargs=dict(net_arch=[16]), seed=0, **kwargs
    )
    model.learn(60)
    return model


@pytest.mark.parametrize(
    ("model_class", "part", "env_id"),
    [(SAC, "actor", "Pendulum-v1"), (TD3, "actor", "Pendulum-v1"), (DQN, "q_net", "CartPole-v1")],
)
def test_part_predicts_as_the_policy_and_round_trips_through_a_file(tmp_path, model_class, part, env_id):
    model = _trained(model_class, env_id)
    network = getattr(model, part)
    assert network is getattr(model.policy, part)
    observations = np.stack([model.observation_space.sample() for _ in range(5)])
    expected, _ = model.policy.predict(observations, deterministic=True)
    actions, _ = network.predict(observations, deterministic=True)
    np.testing.assert_allclose(actions, expected, rtol=1e-6)
    single, _ = network.predict(observations[0], deterministic=True)
    assert single.shape == model.action_space.shape
    assert model.action_space.contains(single.astype(model.action_space.dtype))

    network.save(tmp_path / f"{part}.zip")
    loaded = type(network).load(tmp_path / f"{part}.zip", device="cpu")
    assert type(loaded) is type(network)
    for (name, ours), theirs in zip(network.state_dict().items(), loaded.state_dict().values()):
        torch.testing.assert_close(ours, theirs, msg=name)
    again, _ = loaded.predict(observations, deterministic=True)
    np.testing.assert_allclose(again, expected, rtol=1e-6)


def test_quantile_net_greedy_actions_and_file(tmp_path):
    model = QRDQN(
        "MlpPolicy",
        "CartPole-v1",
        learning_starts=20,
        seed=0,
        policy_kwargs=dict(net_arch=[16], n_quantiles=5),
    )
    model.learn(60)
    observations = np.stack([model.observation_space.sample() for _ in range(6)])
    expected, _ = model.predict(observations, deterministic=True)
    actions, _ = model.quantile_net.predict(observations, deterministic=True)
    np.testing.assert_array_equal(actions, expected)
    model.quantile_net.save(tmp_path / "quantiles.zip")
    loaded = type(model.quantile_net).load(tmp_path / "quantiles.zip", device="cpu")
    np.testing.assert_array_equal(loaded.predict(observations, deterministic=True)[0], expected)


def test_deep_copied_policy_owns_its_networks():
    model = _trained(SAC, "Pendulum-v1")
    copied = copy.deepcopy(model.policy)
    assert copied.actor.policy_owner() is copied
    assert model.policy.actor.policy_owner() is model.policy
    with torch.no_grad():
        for parameter in copied.actor.parameters():
            parameter.add_(1.0)
    obs = model.observation_space.sample()
    assert not np.allclose(
        copied.actor.predict(obs, deterministic=True)[0], model.actor.predict(obs, deterministic=True)[0]
    )


def test_a_network_without_its_policy_and_a_policy_file_that_is_no_part_are_refused(tmp_path):
    model = _trained(DQN, "CartPole-v1")
    orphan = copy.deepcopy(model.q_net)
    del model
    import gc

    gc.collect()
    with pytest.raises(ConfigurationError, match="does not belong to a policy"):
        orphan.predict(np.zeros(4, dtype=np.float32))
    policy_model = _trained(DQN, "CartPole-v1")
    policy_model.policy.save(tmp_path / "policy.zip")
    with pytest.raises(ModelFileError, match="holds no QNetwork"):
        type(policy_model.q_net).load(tmp_path / "policy.zip")


def test_model_device_assignment_names_where_a_loaded_replay_buffer_goes(tmp_path):
    model = _trained(SAC, "Pendulum-v1", buffer_size=500)
    model.save_replay_buffer(tmp_path / "buffer.npz")
    old = copy.deepcopy(model.replay_buffer)
    model.device = torch.device("meta")
    model.load_replay_buffer(tmp_path / "buffer.npz")
    assert model.device.type == "meta" and model.replay_buffer.device.type == "meta"
    model.device = "cpu"
    model.load_replay_buffer(tmp_path / "buffer.npz")
    assert model.replay_buffer.device.type == "cpu"
    np.testing.assert_array_equal(model.replay_buffer.observations, old.observations)
    assert next(model.policy.parameters()).device.type == "cpu"  # assigning moves no weights, as in SB3


def test_replay_buffer_extend_adds_each_step_as_add_would():
    model = _trained(SAC, "Pendulum-v1", buffer_size=500)
    buffer = model.replay_buffer
    before = buffer.size()
    steps = 7
    obs = np.random.default_rng(0).standard_normal((steps, 1, 3)).astype(np.float32)
    next_obs = obs + 1
    actions = np.random.default_rng(1).uniform(-1, 1, (steps, 1, 1)).astype(np.float32)
    rewards = np.arange(steps, dtype=np.float32).reshape(steps, 1)
    dones = np.zeros((steps, 1), dtype=np.float32)
    dones[-1] = 1
    infos = [[{"TimeLimit.truncated": True}] if i == steps - 1 else [{}] for i in range(steps)]
    buffer.extend(obs, next_obs, actions, rewards, dones, infos)
    assert buffer.size() == before + steps
    rows = (buffer.pos - steps + np.arange(steps)) % buffer.buffer_size
    np.testing.assert_array_equal(buffer.observations[rows], obs)
    np.testing.assert_array_equal(buffer.rewards[rows], rewards)
    assert buffer.timeouts[rows[-1], 0] == 1 and buffer.dones[rows[-1], 0] == 1
