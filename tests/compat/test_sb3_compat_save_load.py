"""SB3's save/load surface on lit-sb3 models: ``save(exclude=, include=)``, ``custom_objects`` keys the model
has no use for, ``set_parameters`` with unknown names, ``set_env(force_reset=)``, the network attributes
SB3 users reach for, and ``load(env=model.get_env())``. Real envs, real training, real files."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lit_sb3 import DQN, PPO, SAC, TD3
from lit_sb3.common.vec_env import DummyVecEnv
from lit_sb3_core.errors import EnvCountError, ModelFileError


def test_save_exclude_and_include(tmp_path):
    model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, verbose=2, policy_kwargs=dict(net_arch=[8]))
    model.save(tmp_path / "excluded", exclude=["verbose", "no_such_name"])
    assert PPO.load(tmp_path / "excluded").verbose == 0  # left out: the constructor's default

    model.verbose = 1
    model.save(tmp_path / "included", exclude=["verbose"], include=["verbose"])
    assert PPO.load(tmp_path / "included").verbose == 1  # the current value, include wins over exclude


def test_custom_objects_the_model_does_not_hold_are_ignored(tmp_path):
    PPO("MlpPolicy", "CartPole-v1", n_steps=32).save(tmp_path / "ppo")
    model = PPO.load(tmp_path / "ppo", custom_objects={"learning_rate": 2e-5, "dummy": 1.0})
    assert model.learning_rate == 2e-5
    assert not hasattr(model, "dummy")
    with pytest.raises(ModelFileError, match="dummy"):  # a keyword argument is still checked
        PPO.load(tmp_path / "ppo", dummy=1.0)


def test_set_parameters_refuses_unknown_and_missing_objects():
    model = DQN("MlpPolicy", "CartPole-v1", learning_starts=10, policy_kwargs=dict(net_arch=[8]))
    params = model.get_parameters()
    with pytest.raises(ValueError, match="invalid object names"):
        model.set_parameters({**params, "not_an_object": {}}, exact_match=False)
    with pytest.raises(ValueError, match="misses"):
        model.set_parameters({}, exact_match=True)
    changed = {k: torch.zeros_like(v) for k, v in params["policy"].items()}
    with pytest.raises(
        ValueError, match=r"misses \['optimizer'\]"
    ):  # SB3's policy.optimizer exists from the start
        model.set_parameters({"policy": changed}, exact_match=True)
    model.set_parameters({"policy": changed, "optimizer": params["optimizer"]}, exact_match=True)
    assert all(torch.all(v == 0) for v in model.policy.state_dict().values())


def test_set_env_force_reset_and_env_count():
    env = DummyVecEnv([lambda: __import__("gymnasium").make("CartPole-v1")])
    model = PPO(
        "MlpPolicy", env, n_steps=32, batch_size=32, n_epochs=1, policy_kwargs=dict(net_arch=[8])
    ).learn(32)
    model.set_env(model.get_env(), force_reset=False)  # the same env: the episodes in flight go on
    assert model._last_obs is not None
    model.learn(32, reset_num_timesteps=False)
    assert model.num_timesteps == 64
    model.set_env(model.get_env(), force_reset=True)
    assert model._last_obs is None
    two = DummyVecEnv([lambda: __import__("gymnasium").make("CartPole-v1") for _ in range(2)])
    with pytest.raises(AssertionError, match="2 environments"):
        model.set_env(two)
    with pytest.raises(EnvCountError):
        model.set_env(two)


class _CountResets(__import__("gymnasium").Wrapper):
    resets = 0

    def reset(self, **kwargs):
        type(self).resets += 1
        return self.env.reset(**kwargs)


@pytest.mark.parametrize("algo", [PPO, SAC])
def test_load_without_force_reset_continues_the_episodes_in_flight(tmp_path, algo):
    gym = __import__("gymnasium")
    env_id = "Pendulum-v1"  # 200-step episodes: none ends within these 64 steps
    env = DummyVecEnv([lambda: _CountResets(gym.make(env_id))])
    kwargs = dict(n_steps=32, batch_size=32, n_epochs=1) if algo is PPO else dict(learning_starts=16)
    model = algo("MlpPolicy", env, policy_kwargs=dict(net_arch=[8]), **kwargs).learn(32)
    saved_obs = model._last_obs.copy()
    model.save(tmp_path / "model")
    resets = _CountResets.resets

    loaded = algo.load(tmp_path / "model", env=env, force_reset=False)
    assert loaded._last_obs is not None and (loaded._last_obs == saved_obs).all()
    loaded.learn(32, reset_num_timesteps=False)
    assert loaded.num_timesteps == 64
    assert _CountResets.resets == resets  # the env was not reset: its episode went on

    fresh = algo.load(tmp_path / "model", env=env)  # force_reset=True (SB3's default) forgets them
    assert fresh._last_obs is None
    two = DummyVecEnv([lambda: gym.make(env_id) for _ in range(2)])
    with pytest.raises(EnvCountError, match="force_reset=True"):
        algo.load(tmp_path / "model", env=two, force_reset=False)


def test_network_attributes_are_the_policy_modules():
    dqn = DQN("MlpPolicy", "CartPole-v1", policy_kwargs=dict(net_arch=[8]))
    assert dqn.q_net is dqn.policy.q_net and dqn.q_net_target is dqn.policy.q_net_target
    with pytest.raises(AttributeError):
        _ = dqn.actor
    td3 = TD3(
        "MlpPolicy",
        "Pendulum-v1",
        policy_kwargs=dict(net_arch=[8]),
        action_noise={"type": "normal", "sigma": 0.1},
    )
    assert td3.actor is td3.policy.actor and td3.critic_target is td3.policy.critic_target
    assert td3.action_noise is not None  # built with the model, as SB3's
    assert td3.action_noise().shape == (1, 1)  # one env, one action dimension


def test_entropy_coefficient_views_and_reload_on_get_env(tmp_path):
    model = SAC("MlpPolicy", "Pendulum-v1", learning_starts=10, policy_kwargs=dict(net_arch=[8], n_critics=1))
    model.learn(30)
    assert model.log_ent_coef is model.policy.log_ent_coef
    before = model.log_ent_coef.detach().clone()
    model.save(tmp_path / "sac")
    # The env get_env() hands out already records episodes: the loaded model reuses its recorder.
    loaded = SAC.load(tmp_path / "sac", env=model.get_env())
    assert torch.allclose(loaded.log_ent_coef, before)
    loaded.learn(30)
    assert not torch.allclose(loaded.log_ent_coef, before)
    assert len(loaded.ep_info_buffer) >= 0

    fixed = SAC("MlpPolicy", "Pendulum-v1", ent_coef=0.01, policy_kwargs=dict(net_arch=[8], n_critics=1))
    assert fixed.log_ent_coef is None
    assert torch.allclose(fixed.ent_coef_tensor, torch.tensor(0.01))


def test_load_on_cuda_without_a_gpu_runs_on_the_cpu(tmp_path):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1).save(tmp_path / "ppo")
    model = PPO.load(tmp_path / "ppo", env="CartPole-v1", device="cuda")
    model.learn(32)  # as SB3's get_device("cuda"): the CPU when there is no GPU
    assert model.device.type == "cpu"


def test_a_compiled_policy_saves_under_its_own_names(tmp_path):
    model = DQN("MlpPolicy", "CartPole-v1", policy_kwargs=dict(net_arch=[8]))
    expected = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.policy = torch.compile(model.policy)
    model.save(tmp_path / "compiled")
    loaded = DQN.load(tmp_path / "compiled")
    assert all(torch.equal(loaded.policy.state_dict()[k], v) for k, v in expected.items())


@pytest.mark.parametrize(("optimize_memory_usage", "warns"), [(True, True), (False, False)])
def test_a_reset_that_turns_the_last_transition_into_a_termination_warns(
    optimize_memory_usage, warns, recwarn
):
    model = DQN(
        "MlpPolicy",
        "CartPole-v1",
        buffer_size=100,
        learning_starts=10,
        optimize_memory_usage=optimize_memory_usage,
        replay_buffer_kwargs={"handle_timeout_termination": not optimize_memory_usage},
        policy_kwargs=dict(net_arch=[8]),
        seed=0,
    )
    model.learn(50)
    model.learn(50, reset_num_timesteps=False)  # the same env state goes on: nothing is cut short
    assert not [w for w in recwarn if "will be truncated" in str(w.message)]
    assert model.replay_buffer.dones[(model.replay_buffer.pos - 1) % 100, 0] == 0  # seed 0: mid-episode
    model.learn(50)  # the env is reset under the episode in progress
    messages = [str(w.message) for w in recwarn if "will be truncated" in str(w.message)]
    assert len(messages) == (1 if warns else 0)
    if messages:
        assert "The last trajectory in the replay buffer will be truncated" in messages[0]


def test_models_and_replay_buffers_save_to_and_load_from_open_files() -> None:
    """SB3's save(file_object)/load(file_object): in memory or an open file, left open afterwards."""
    import io
    import tempfile

    model = PPO("MlpPolicy", "CartPole-v1", n_steps=32, batch_size=32, n_epochs=1, seed=0).learn(32)
    with tempfile.TemporaryFile() as handle:
        model.save(handle)
        loaded = PPO.load(handle)
        assert not handle.closed
    for name, value in model.policy.state_dict().items():
        assert torch.equal(value, loaded.policy.state_dict()[name])

    sac = SAC("MlpPolicy", "Pendulum-v1", buffer_size=64, learning_starts=16, seed=0).learn(20)
    memory = io.BytesIO()
    sac.save_replay_buffer(memory)
    fresh = SAC("MlpPolicy", "Pendulum-v1", buffer_size=64, seed=1)
    fresh.load_replay_buffer(memory)
    assert not memory.closed and fresh.replay_buffer.size() == sac.replay_buffer.size() == 20
    np.testing.assert_array_equal(fresh.replay_buffer.observations, sac.replay_buffer.observations)

    with pytest.raises(ModelFileError, match="is not a model file"):
        PPO.load(io.BytesIO(b"not a zip file at all"))
