"""SB3's model API on lit-sb3 models: load's signature, attributes, policy methods, per-algorithm policy
modules, and custom policies written the way SB3's documentation writes them."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

import lit_sb3
from lit_sb3 import PPO, SAC
from lit_sb3.common.policies import ActorCriticPolicy as SB3ActorCriticPolicy
from lit_sb3.common.torch_layers import BaseFeaturesExtractor
from lit_sb3.sac.policies import SACPolicy as SB3SACPolicy
from lit_sb3_core.errors import ModelFileError

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 1, "seed": 0}


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("api") / "ppo.zip"
    PPO("MlpPolicy", "CartPole-v1", **SMALL).learn(64).save(path)
    return path


def test_load_takes_sb3s_signature_and_custom_objects_replace_stored_values(
    saved: Path, capsys: pytest.CaptureFixture
) -> None:
    model = PPO.load(
        saved,
        env=None,
        device="cpu",
        custom_objects={"learning_rate": 0.0, "lr_schedule": lambda _: 0.0, "clip_range": lambda _: 0.0},
        print_system_info=True,
        force_reset=True,
    )
    assert "SAVED MODEL SYSTEM INFO" in capsys.readouterr().out
    assert model.learning_rate == 0.0 and model.lr_schedule(0.5) == 0.0 and model.clip_range(1.0) == 0.0
    assert model.hparams["device"] == "cpu"
    # As SB3: custom_objects replace only what the model holds; a keyword argument it has no use for is refused.
    assert not hasattr(PPO.load(saved, custom_objects={"not_a_thing": 1}), "not_a_thing")
    with pytest.raises(ModelFileError, match=r"no constructor argument or plain attribute 'not_a_thing'"):
        PPO.load(saved, not_a_thing=1)
    with pytest.raises(ValueError, match=r"policy_kwargs .* differ"):
        PPO.load(saved, policy_kwargs={"net_arch": [3]})
    assert PPO.load(saved, n_epochs=3).n_epochs == 3  # keyword arguments change hyperparameters


def test_attributes_sb3_code_reads(saved: Path) -> None:
    model = PPO("MlpPolicy", "CartPole-v1", learning_rate=1e-3, policy_kwargs={"net_arch": [16]}, **SMALL)
    assert model.learning_rate == 1e-3 and model.policy_kwargs == {"net_arch": [16]}
    assert model.tensorboard_log is None and model.get_vec_normalize_env() is None
    assert len(model.ep_info_buffer) == 0 and len(model.ep_success_buffer) == 0 and model.start_time == 0
    model.learn(256)
    assert model.start_time > 0
    episodes = list(model.ep_info_buffer)
    assert episodes and {"r", "l", "t"} <= set(episodes[0]) and sum(e["l"] for e in episodes) <= 256
    model.learning_rate = 5e-4
    assert model.lr_schedule(1.0) == 5e-4


class Goal(gym.Env):
    """Episodes of 3 steps that report ``is_success`` at their end (alternating)."""

    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def __init__(self) -> None:
        self.episodes = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        self.t += 1
        done = self.t >= 3
        info = {"is_success": self.episodes % 2 == 0} if done else {}
        self.episodes += done
        return np.zeros(2, np.float32), 0.0, done, False, info


@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_ep_success_buffer_collects_is_success(algo: str) -> None:
    kwargs = SMALL if algo == "PPO" else {"learning_starts": 10, "seed": 0}
    model = getattr(lit_sb3, algo)("MlpPolicy", Goal(), **kwargs).learn(30)
    assert list(model.ep_success_buffer) == [True, False] * 5


def test_an_off_policy_model_has_an_empty_replay_buffer_after_load(tmp_path: Path) -> None:
    SAC("MlpPolicy", "Pendulum-v1", buffer_size=500, learning_starts=10).learn(20).save(tmp_path / "sac")
    loaded = SAC.load(tmp_path / "sac")
    assert loaded.replay_buffer is not None and loaded.replay_buffer.size() == 0
    assert loaded.replay_buffer.buffer_size == 500
    loaded.learn(30, env="Pendulum-v1")
    assert loaded.replay_buffer.size() == 30


def test_policy_predict_save_load_and_helpers(tmp_path: Path) -> None:
    model = SAC("MlpPolicy", "Pendulum-v1", learning_starts=10, seed=0).learn(20)
    policy = model.policy
    obs = np.random.default_rng(0).uniform(-1, 1, (5, 3)).astype(np.float32)
    actions, state = policy.predict(obs, deterministic=True)
    assert state is None and actions.shape == (5, 1)
    np.testing.assert_allclose(actions, model.predict(obs, deterministic=True)[0], atol=1e-6)
    assert policy.predict(obs[0], deterministic=True)[0].shape == (1,)
    tensor, vectorized = policy.obs_to_tensor(obs)
    assert vectorized and tuple(tensor.shape) == (5, 3)
    policy.set_training_mode(True)
    assert policy.training
    policy.save(tmp_path / "policy.zip")
    again = type(policy).load(tmp_path / "policy.zip", device="cpu")
    np.testing.assert_allclose(again.predict(obs, deterministic=True)[0], actions, atol=1e-6)
    vector = policy.parameters_to_vector()
    again.load_from_vector(np.zeros_like(vector))
    assert not again.parameters_to_vector().any()
    with pytest.raises(ModelFileError, match="holds a SACPolicy, not a"):
        PPO("MlpPolicy", "CartPole-v1").policy.load(tmp_path / "policy.zip")


ALGOS = {
    "ppo": ("PPO", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "a2c": ("A2C", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "trpo": ("TRPO", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "dqn": ("DQN", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "qrdqn": ("QRDQN", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "sac": ("SAC", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "td3": ("TD3", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "ddpg": ("DDPG", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "tqc": ("TQC", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "crossq": ("CrossQ", ("MlpPolicy",)),
    "ars": ("ARS", ("MlpPolicy", "LinearPolicy")),
    "ppo_mask": ("MaskablePPO", ("MlpPolicy", "CnnPolicy", "MultiInputPolicy")),
    "ppo_recurrent": ("RecurrentPPO", ("MlpLstmPolicy", "CnnLstmPolicy", "MultiInputLstmPolicy")),
}


@pytest.mark.parametrize("package", sorted(ALGOS))
def test_every_algorithm_has_sb3s_policy_modules(package: str) -> None:
    name, aliases = ALGOS[package]
    algo_module = importlib.import_module(f"lit_sb3.{package}")
    policies = importlib.import_module(f"lit_sb3.{package}.policies")
    assert getattr(algo_module, name) is getattr(lit_sb3, name)
    for alias in aliases:
        cls = getattr(policies, alias)
        assert getattr(algo_module, alias) is cls and issubclass(cls, nn.Module)
        assert hasattr(cls, "predict") and hasattr(cls, "save")


def test_policy_classes_from_the_modules_train(tmp_path: Path) -> None:
    from lit_sb3.dqn import MlpPolicy as DQNMlp
    from lit_sb3.ppo import MlpPolicy
    from lit_sb3.ppo_recurrent import MlpLstmPolicy

    ppo = PPO(MlpPolicy, "CartPole-v1", **SMALL).learn(32)
    ppo.save(tmp_path / "ppo")
    assert PPO.load(tmp_path / "ppo").policy.__class__.__name__ == "ActorCriticPolicy"
    lit_sb3.DQN(DQNMlp, "CartPole-v1", learning_starts=8).learn(16)
    lit_sb3.RecurrentPPO(MlpLstmPolicy, "CartPole-v1", policy_kwargs={"lstm_hidden_size": 8}, **SMALL).learn(
        32
    )


# Custom policies the way SB3's documentation writes them ---------------------------------------------------
class CustomNetwork(nn.Module):
    """SB3's guide: a network with ``latent_dim_pi``/``latent_dim_vf`` and forward_actor/forward_critic."""

    def __init__(self, feature_dim: int, last_layer_dim_pi: int = 16, last_layer_dim_vf: int = 8) -> None:
        super().__init__()
        self.latent_dim_pi = last_layer_dim_pi
        self.latent_dim_vf = last_layer_dim_vf
        self.policy_net = nn.Sequential(nn.Linear(feature_dim, last_layer_dim_pi), nn.ReLU())
        self.value_net = nn.Sequential(nn.Linear(feature_dim, last_layer_dim_vf), nn.ReLU())

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class CustomActorCriticPolicy(SB3ActorCriticPolicy):
    """SB3's guide, verbatim in substance: ``lr_schedule`` argument, ``_build_mlp_extractor`` override."""

    def __init__(
        self, observation_space: Any, action_space: Any, lr_schedule: Any, *args: Any, **kwargs: Any
    ):
        kwargs["ortho_init"] = False
        super().__init__(observation_space, action_space, lr_schedule, *args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = CustomNetwork(self.features_dim)


def test_a_custom_policy_written_the_sb3_way_trains() -> None:
    model = PPO(CustomActorCriticPolicy, "CartPole-v1", learning_rate=1e-3, **SMALL)
    assert isinstance(model.policy.mlp_extractor, CustomNetwork)
    assert model.policy.lr_schedule(1.0) == 1e-3 and model.policy.features_dim == 4
    before = [p.detach().clone() for p in model.policy.mlp_extractor.parameters()]
    model.learn(64)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.policy.mlp_extractor.parameters()))


def test_sb3_style_policy_positional_arguments_follow_sb3s_order() -> None:
    from lit_sb3.common.policies import ActorCriticPolicy

    space, actions = spaces.Box(-1, 1, (3,), np.float32), spaces.Discrete(2)
    policy = ActorCriticPolicy(space, actions, lambda _: 1e-3, [7], nn.ReLU)
    assert policy.mlp_extractor.latent_dim_pi == 7 and policy.activation_fn is nn.ReLU
    with pytest.raises(TypeError, match="multiple values for argument 'net_arch'"):
        ActorCriticPolicy(space, actions, lambda _: 1e-3, [7], net_arch=[8])


class CustomCombinedExtractor(BaseFeaturesExtractor):
    """SB3's guide: ``super().__init__(observation_space, features_dim=1)``, then ``self._features_dim``."""

    def __init__(self, observation_space: spaces.Dict) -> None:
        super().__init__(observation_space, features_dim=1)
        extractors = {}
        total = 0
        for key, subspace in observation_space.spaces.items():
            extractors[key] = nn.Linear(int(np.prod(subspace.shape)), 4)
            total += 4
        self.extractors = nn.ModuleDict(extractors)
        self._features_dim = total

    def forward(self, observations: dict[str, torch.Tensor]) -> torch.Tensor:
        return torch.cat([self.extractors[k](observations[k].flatten(1)) for k in self.extractors], dim=1)


class DictObs(gym.Env):
    observation_space = spaces.Dict(
        {"a": spaces.Box(-1, 1, (2,), np.float32), "b": spaces.Box(-1, 1, (5,), np.float32)}
    )
    action_space = spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        self.t += 1
        return self.observation_space.sample(), 1.0, False, self.t >= 10, {}


def test_sb3_style_features_extractor_and_lit_sb3s_own_way_side_by_side() -> None:
    sb3_style = PPO(
        "MultiInputPolicy",
        DictObs(),
        policy_kwargs={"features_extractor_class": CustomCombinedExtractor},
        **SMALL,
    )
    assert sb3_style.policy.features_extractor.features_dim == 8
    sb3_style.learn(32)
    lit_style = PPO(
        "MultiInputPolicy", DictObs(), policy_kwargs={"net_arch": [8], "activation_fn": "relu"}, **SMALL
    )
    assert lit_style.policy.features_dim == 7
    lit_style.learn(32)


def test_maskable_evaluate_policy_applies_the_masks() -> None:
    from lit_sb3.common.maskable.evaluation import evaluate_policy
    from lit_sb3.common.maskable.utils import get_action_masks, is_masking_supported

    class OnlyZero(gym.Env):
        observation_space = spaces.Box(-1, 1, (2,), np.float32)
        action_space = spaces.Discrete(4)

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict]:
            super().reset(seed=seed)
            self.t = 0
            return np.full(2, 0.5, np.float32), {}

        def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
            self.t += 1
            return np.full(2, 0.5, np.float32), 1.0 if action == 0 else -1.0, False, self.t >= 10, {}

        def action_masks(self) -> np.ndarray:
            return np.array([True, False, False, False])

    env = OnlyZero()
    assert is_masking_supported(env) and get_action_masks(env).tolist() == [True, False, False, False]
    model = lit_sb3.MaskablePPO("MlpPolicy", env, seed=0)
    masked, _ = evaluate_policy(model, OnlyZero(), n_eval_episodes=3, deterministic=False)
    unmasked, _ = evaluate_policy(
        model, OnlyZero(), n_eval_episodes=3, deterministic=False, use_masking=False
    )
    assert masked == 10.0 and unmasked < 10.0


class WideSAC(SB3SACPolicy):
    """An SB3-style SAC policy: ``lr_schedule`` and then SB3's positional order (``net_arch`` first)."""

    def __init__(
        self, observation_space: Any, action_space: Any, lr_schedule: Any, *args: Any, **kwargs: Any
    ):
        super().__init__(observation_space, action_space, lr_schedule, [32, 32], *args, **kwargs)


def test_off_policy_policies_take_sb3s_signature_too() -> None:
    model = SAC(WideSAC, "Pendulum-v1", learning_starts=8, seed=0).learn(16)
    assert model.policy.actor.latent_pi[0].out_features == 32 and model.policy.lr_schedule(1.0) == 3e-4
