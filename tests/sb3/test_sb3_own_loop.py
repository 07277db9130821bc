"""SB3's own loop, run by user code on a model: ``_setup_learn`` then ``collect_rollouts`` (what SB3's
``learn`` does each iteration, and what SB3's tests and custom training loops call directly)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from lit_sb3 import A2C, PPO
from lit_sb3.common.callbacks import BaseCallback, CallbackList

TINY = {"n_steps": 16, "seed": 0, "policy_kwargs": {"net_arch": [8]}, "device": "cpu"}
PPO_TINY = {**TINY, "batch_size": 16}


class _Recorder(BaseCallback):
    """Records what SB3's callback protocol shows during a rollout."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__()
        self.stop_at = stop_at
        self.training_flags: list[bool] = []
        self.events: list[str] = []

    def _on_rollout_start(self) -> None:
        self.events.append("start")

    def _on_step(self) -> bool:
        self.training_flags.append(self.model.policy.training)
        return self.stop_at is None or self.n_calls < self.stop_at

    def _on_rollout_end(self) -> None:
        self.events.append("end")


@pytest.mark.parametrize("algo", [PPO, A2C])
def test_setup_learn_then_collect_rollouts_fills_the_models_buffer(algo: type) -> None:
    model = algo("MlpPolicy", "CartPole-v1", **(PPO_TINY if algo is PPO else TINY))
    total, callback = model._setup_learn(total_timesteps=32, callback=_Recorder())
    assert total == 32 and isinstance(callback, _Recorder) and callback.model is model
    assert model.num_timesteps == 0 and model._last_obs.shape == (1, 4)
    first_obs = model._last_obs.copy()

    assert model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, n_rollout_steps=16)

    buffer = model.rollout_buffer
    assert model.num_timesteps == 16 and buffer.full
    assert buffer.observations.shape == (16, 1, 4)
    np.testing.assert_allclose(buffer.observations[0], first_obs)
    assert not np.array_equal(model._last_obs, first_obs)
    np.testing.assert_allclose(buffer.returns, buffer.advantages + buffer.values, rtol=1e-5)
    # The policy acts in eval mode (batch norm and dropout frozen), and the callback sees every step.
    assert callback.training_flags == [False] * 16 and callback.events == ["start", "end"]

    model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, n_rollout_steps=16)
    assert model.num_timesteps == 32 and callback.n_calls == 32


def test_collect_rollouts_leaves_batch_norm_statistics_alone() -> None:
    model = PPO("MlpPolicy", "Pendulum-v1", **PPO_TINY)
    model.policy.mlp_extractor.policy_net.append(torch.nn.BatchNorm1d(8))
    norm = model.policy.mlp_extractor.policy_net[-1]
    _, callback = model._setup_learn(16)
    model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, model.n_steps)
    assert norm.num_batches_tracked.item() == 0
    assert torch.equal(norm.running_mean, torch.zeros(8))
    model.policy.train()  # the layer is on the path the rollout took: in train mode it does count
    model.policy(torch.as_tensor(model.rollout_buffer.observations[:4, 0]))
    assert norm.num_batches_tracked.item() == 1


def test_a_callback_that_returns_false_stops_the_rollout() -> None:
    model = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY)
    _, callback = model._setup_learn(32, callback=[_Recorder(stop_at=5)])
    assert isinstance(callback, CallbackList)
    assert not model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 16)
    assert model.num_timesteps == 5


def test_a_function_callback_gets_the_step_locals() -> None:
    seen: list[int] = []

    def on_step(locals_: dict, globals_: dict) -> bool:
        seen.append(int(locals_["n_steps"]))
        return True

    model = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY)
    _, callback = model._setup_learn(16, callback=on_step)
    model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 16)
    assert seen == list(range(16))


def test_setup_learn_continues_a_run_unless_told_to_reset() -> None:
    model = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY).learn(16)
    last_obs = model._last_obs.copy()
    total, callback = model._setup_learn(32, reset_num_timesteps=False)
    assert total == 48 and model.num_timesteps == 16
    np.testing.assert_array_equal(model._last_obs, last_obs)  # the episodes in flight go on
    model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 16)
    assert model.num_timesteps == 32
    assert "optimizer" in model.get_parameters()  # the last learn's trainer, and its optimizer, stay

    total, _ = model._setup_learn(32)
    assert total == 32 and model.num_timesteps == 0
    model.learn(16, reset_num_timesteps=False)  # learn goes on from there
    assert model.num_timesteps == 16


def test_collect_rollouts_refuses_what_its_loop_does_not_fill() -> None:
    model = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY)
    with pytest.raises(RuntimeError, match="_setup_learn"):
        model.collect_rollouts(model.get_env(), None, model.rollout_buffer, 16)
    _, callback = model._setup_learn(16)
    with pytest.raises(ValueError, match=r"n_rollout_steps=model\.n_steps"):
        model.collect_rollouts(model.get_env(), callback, model.rollout_buffer, 8)
    other_env = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY).get_env()
    with pytest.raises(ValueError, match=r"model\.get_env"):
        model.collect_rollouts(other_env, callback, model.rollout_buffer, 16)


def test_setup_learn_refuses_lightning_callbacks() -> None:
    from lightning.pytorch.callbacks import EarlyStopping

    model = PPO("MlpPolicy", "CartPole-v1", **PPO_TINY)
    with pytest.raises(TypeError, match="learn"):
        model._setup_learn(16, callback=EarlyStopping(monitor="rollout/ep_rew_mean"))


OFF_TINY = {"seed": 0, "policy_kwargs": {"net_arch": [8]}, "device": "cpu", "buffer_size": 1000}


def test_off_policy_collect_rollouts_steps_one_train_freq_into_the_replay_buffer() -> None:
    from lit_sb3 import DQN
    from lit_sb3.common.type_aliases import RolloutReturn, TrainFreq, TrainFrequencyUnit

    model = DQN("MlpPolicy", "CartPole-v1", train_freq=4, learning_starts=10, **OFF_TINY)
    total, callback = model._setup_learn(100, callback=_Recorder())
    assert total == 100
    result = model.collect_rollouts(
        model.get_env(),
        callback,
        model.train_freq,
        model.replay_buffer,
        learning_starts=model.learning_starts,
    )
    assert isinstance(result, RolloutReturn) and result == (4, 0, True)
    assert model.num_timesteps == 4 and model.replay_buffer.size() == 4
    assert callback.training_flags == [False] * 4 and callback.events == ["start", "end"]
    # SB3's TrainFreq by episode: steps until an episode ends (CartPole's take more than a few steps).
    result = model.collect_rollouts(
        model.get_env(), callback, TrainFreq(1, TrainFrequencyUnit.EPISODE), model.replay_buffer
    )
    assert result.n_episodes == 1 and result.continue_training and result.episode_timesteps > 4
    assert model.replay_buffer.size() == 4 + result.episode_timesteps
    assert model.train_freq == (4, "step")  # the model's own settings are left as they were


def test_off_policy_collect_rollouts_adds_the_noise_it_is_given_and_stops_when_told() -> None:
    from lit_sb3 import TD3
    from lit_sb3.common.noise import NormalActionNoise

    model = TD3("MlpPolicy", "Pendulum-v1", learning_starts=0, **OFF_TINY)
    _, callback = model._setup_learn(100, callback=_Recorder(stop_at=3))
    obs = model._last_obs.copy()
    noise = NormalActionNoise(mean=np.zeros(1), sigma=np.ones(1))
    result = model.collect_rollouts(model.get_env(), callback, (10, "step"), model.replay_buffer, noise)
    assert result == (3, 0, False)
    stored = model.replay_buffer.actions[0, 0]
    clean = model.policy.actor(torch.as_tensor(obs, dtype=torch.float32)).detach().numpy()[0]
    assert not np.allclose(stored, clean)  # the noise went into the action
    with pytest.raises(ValueError, match="own buffer"):
        model.collect_rollouts(model.get_env(), callback, 1, object())


def test_off_policy_train_after_own_collection_needs_a_model_that_has_learned() -> None:
    from lit_sb3 import DQN
    from lit_sb3_core.errors import ConfigurationError

    model = DQN("MlpPolicy", "CartPole-v1", learning_starts=0, batch_size=8, **OFF_TINY)
    _, callback = model._setup_learn(100)
    model.collect_rollouts(model.get_env(), callback, (16, "step"), model.replay_buffer)
    with pytest.raises(ConfigurationError, match=r"model\.learn"):
        model.train(gradient_steps=1)
    model.learn(16)  # once it has, SB3's loop runs whole: collect, then train
    _, callback = model._setup_learn(100)
    model.collect_rollouts(model.get_env(), callback, (16, "step"), model.replay_buffer)
    updates = model.n_updates
    model.train(gradient_steps=2)
    assert model.n_updates == updates + 2
