"""PPO on every observation and action space SB3 supports (and a few it does not), with real training.

Each case trains a few hundred environment steps on a small gymnasium env that checks every action it
receives against its action space, then predicts for one observation and for a batch.
"""

from __future__ import annotations

import functools
import json
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from torch import nn

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import NatureCNN
from lit_sb3_ppo import PPO

torch.set_num_threads(1)

SMALL = {"n_steps": 32, "batch_size": 32, "n_epochs": 2, "seed": 0}
VEC = spaces.Box(-1.0, 1.0, (5,), np.float32)
IMG_HWC = spaces.Box(0, 255, (36, 36, 3), np.uint8)
IMG_CHW = spaces.Box(0, 255, (3, 36, 36), np.uint8)


class SpaceEnv(gym.Env):
    """Random observations from any space; rewards the first action component being small.

    Episodes are truncated after ``episode_length`` steps, so bootstrapping from the final observation
    runs for every observation space. Every action is checked against the action space.
    """

    def __init__(
        self, observation_space: spaces.Space, action_space: spaces.Space, episode_length: int = 10
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.episode_length = episode_length
        self.steps = 0
        self.actions_seen = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.steps = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        assert self.action_space.contains(action), f"{action!r} is not in {self.action_space}"
        self.steps += 1
        first = float(np.asarray(action, dtype=np.float64).reshape(-1)[0])
        return self.observation_space.sample(), -abs(first), False, self.steps >= self.episode_length, {}


def _env(observation_space: spaces.Space, action_space: spaces.Space) -> Any:
    return functools.partial(SpaceEnv, observation_space, action_space)


def _train_and_predict(
    policy: str, observation_space: spaces.Space, action_space: spaces.Space, **kwargs: Any
) -> PPO:
    model = PPO(policy, env=_env(observation_space, action_space), **{**SMALL, **kwargs})
    model.learn(256, n_envs=2)
    assert model.num_timesteps >= 256 and np.isfinite(model.last_metrics["train/loss"])
    observation_space.seed(1)
    single = observation_space.sample()
    batch = (
        {k: np.stack([observation_space.sample()[k] for _ in range(3)]) for k in observation_space.spaces}
        if isinstance(observation_space, spaces.Dict)
        else np.stack([observation_space.sample() for _ in range(3)])
    )
    action, state = model.predict(single)
    assert state is None
    assert np.shape(action) == action_space.shape and action_space.contains(action)
    actions, _ = model.predict(batch, deterministic=True)
    assert actions.shape == (3, *action_space.shape)
    assert all(action_space.contains(a) for a in actions)
    return model


ACTION_SPACES = {
    "box": spaces.Box(-2.0, 2.0, (2,), np.float32),
    "box-matrix": spaces.Box(-1.0, 1.0, (2, 2), np.float32),
    "discrete": spaces.Discrete(3),
    "discrete-start": spaces.Discrete(3, start=-1),
    "multidiscrete": spaces.MultiDiscrete([2, 3]),
    "multidiscrete-start-2d": spaces.MultiDiscrete([[2, 3], [3, 2]], start=[[1, 0], [-1, 2]]),
    "multibinary": spaces.MultiBinary(3),
    "multibinary-2d": spaces.MultiBinary([2, 2]),
}


@pytest.mark.parametrize("action_space", ACTION_SPACES.values(), ids=ACTION_SPACES.keys())
def test_box_observations_with_every_action_space(action_space: spaces.Space) -> None:
    _train_and_predict("MlpPolicy", VEC, action_space)


OBSERVATION_SPACES = {
    "discrete": spaces.Discrete(4, start=1),
    "multidiscrete": spaces.MultiDiscrete([3, 2]),
    "multibinary": spaces.MultiBinary([2, 3]),
    "image-flattened": IMG_HWC,
}


@pytest.mark.parametrize("observation_space", OBSERVATION_SPACES.values(), ids=OBSERVATION_SPACES.keys())
def test_mlp_policy_on_other_observation_spaces(observation_space: spaces.Space) -> None:
    _train_and_predict("MlpPolicy", observation_space, spaces.Discrete(2))


@pytest.mark.parametrize("observation_space", [IMG_HWC, IMG_CHW], ids=["channel-last", "channel-first"])
def test_cnn_policy_on_images(observation_space: spaces.Space) -> None:
    model = _train_and_predict("CnnPolicy", observation_space, spaces.Discrete(2))
    assert isinstance(model.policy.features_extractor, NatureCNN)
    assert model.policy.features_extractor.observation_space.shape == (3, 36, 36)


def test_multi_input_policy_on_dict_observations() -> None:
    space = spaces.Dict({"image": IMG_HWC, "vector": VEC, "mode": spaces.Discrete(3)})
    model = _train_and_predict("MultiInputPolicy", space, spaces.Box(-1.0, 1.0, (2,), np.float32))
    assert model.policy.features_extractor.features_dim == 256 + 5 + 3


class BrightSide(gym.Env):
    """One-step episodes: the image is bright on the left or the right half; the action must name the side."""

    def __init__(self, channel_last: bool = True, as_dict: bool = False) -> None:
        self.channel_last, self.as_dict = channel_last, as_dict
        image = spaces.Box(0, 255, (36, 36, 1) if channel_last else (1, 36, 36), np.uint8)
        self.observation_space = spaces.Dict({"image": image, "noise": VEC}) if as_dict else image
        self.action_space = spaces.Discrete(2)
        self.side = 0

    def _obs(self) -> Any:
        self.side = int(self.np_random.integers(2))
        image = np.zeros((36, 36), np.uint8)
        image[:, self.side * 18 : (self.side + 1) * 18] = 255
        image = image[..., None] if self.channel_last else image[None]
        if self.as_dict:
            return {"image": image, "noise": self.np_random.uniform(-1, 1, 5).astype(np.float32)}
        return image

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        reward = float(int(action) == self.side)
        return self._obs(), reward, True, False, {}


@pytest.mark.parametrize(
    "policy, env_kwargs",
    [
        ("CnnPolicy", {"channel_last": True}),
        ("CnnPolicy", {"channel_last": False}),
        ("MultiInputPolicy", {"as_dict": True}),
    ],
    ids=["cnn-channel-last", "cnn-channel-first", "multi-input"],
)
def test_image_policies_learn_to_see(policy: str, env_kwargs: dict[str, Any]) -> None:
    from lit_sb3_core import evaluate_policy

    factory = functools.partial(BrightSide, **env_kwargs)
    model = PPO(policy, env=factory, n_steps=64, batch_size=64, n_epochs=4, learning_rate=1e-3, seed=0)
    model.learn(512, n_envs=2)
    mean_reward, _ = evaluate_policy(model, factory(), n_eval_episodes=40)
    assert mean_reward >= 0.9  # a policy blind to the image gets 0.5


def _count_noise_resets(model: PPO) -> list[int]:
    """Record the ``n_envs`` of every ``reset_noise`` call the algorithm makes."""
    calls: list[int] = []
    reset_noise = model.policy.reset_noise

    def counting(n_envs: int = 1) -> None:
        calls.append(n_envs)
        reset_noise(n_envs)

    model.policy.reset_noise = counting  # type: ignore[method-assign]
    return calls


def test_gsde_on_pendulum_resamples_noise_and_logs_std() -> None:
    model = PPO(
        "MlpPolicy",
        "Pendulum-v1",
        use_sde=True,
        sde_sample_freq=4,
        policy_kwargs={"log_std_init": -1.0},
        **SMALL,
    )
    calls = _count_noise_resets(model)
    model.learn(128, n_envs=2)
    # Two rollouts of 32 steps: each resamples at its start and again at step 0 (as SB3's collect_rollouts:
    # step 0 is a multiple of sde_sample_freq), then at steps 4, 8, ..., 28.
    assert calls == [2] * 18
    std = model.last_metrics["train/std"]
    assert 0.2 < std < 0.6  # exp(-1) ~ 0.37 after a few small updates
    assert model.policy.log_std.shape == (64, 1)
    action, _ = model.predict(np.zeros(3, np.float32))
    assert action.shape == (1,)


def test_gsde_once_per_rollout_by_default() -> None:
    model = PPO("MlpPolicy", "Pendulum-v1", use_sde=True, **SMALL)
    calls = _count_noise_resets(model)
    model.learn(64)
    assert calls == [1, 1]


def test_gsde_squashed_actions_reach_the_action_bounds() -> None:
    action_space = spaces.Box(np.array([0.0, -10.0], np.float32), np.array([1.0, 10.0], np.float32))
    kwargs = {"squash_output": True, "use_expln": True, "full_std": False, "log_std_init": 1.0}
    model = _train_and_predict("MlpPolicy", VEC, action_space, use_sde=True, policy_kwargs=kwargs)
    actions, _ = model.predict(np.stack([VEC.sample() for _ in range(200)]))
    assert actions[:, 1].max() > 1.0 and actions[:, 1].min() < -1.0  # unscaled from [-1, 1] to [-10, 10]


def test_policy_kwargs_with_classes_train_and_stay_json(tmp_path: Path) -> None:
    kwargs = {
        "net_arch": {"pi": [32], "vf": [16]},
        "activation_fn": nn.ReLU,
        "features_extractor_class": NatureCNN,
        "features_extractor_kwargs": {"features_dim": 64},
        "share_features_extractor": False,
        "ortho_init": False,
        "normalize_images": True,
        "optimizer_class": torch.optim.RMSprop,
        "optimizer_kwargs": {"alpha": 0.99, "eps": 1e-5},
    }
    model = _train_and_predict("MlpPolicy", IMG_HWC, spaces.Discrete(2), policy_kwargs=kwargs)
    assert isinstance(model.trainer.optimizers[0], torch.optim.RMSprop)
    assert model.trainer.optimizers[0].defaults["alpha"] == 0.99
    stored = model.hparams["policy_kwargs"]
    json.dumps(dict(model.hparams))
    assert stored["activation_fn"] == "relu"
    assert stored["features_extractor_class"] == "lit_sb3_core.nets.torch_layers:NatureCNN"
    assert stored["optimizer_class"] == "torch.optim.rmsprop:RMSprop"
    model.save(tmp_path / "custom.zip")
    loaded = PPO.load(tmp_path / "custom.zip")
    assert isinstance(loaded.policy.vf_features_extractor, NatureCNN)
    assert loaded.policy.optimizer_class is torch.optim.RMSprop
    assert isinstance(loaded.policy.mlp_extractor.policy_net[1], nn.ReLU)


@pytest.mark.parametrize("policy", ["CnnPolicy", "MultiInputPolicy"])
def test_save_and_load_round_trip(policy: str, tmp_path: Path) -> None:
    if policy == "CnnPolicy":
        observation_space: spaces.Space = IMG_HWC
        obs: Any = np.stack([IMG_HWC.sample() for _ in range(4)])
    else:
        observation_space = spaces.Dict({"image": IMG_CHW, "vector": VEC})
        obs = {
            "image": np.stack([IMG_CHW.sample() for _ in range(4)]),
            "vector": np.stack([VEC.sample() for _ in range(4)]),
        }
    model = PPO(policy, env=_env(observation_space, spaces.Discrete(3)), **SMALL)
    model.learn(64)
    model.save(tmp_path / "model.zip")
    with zipfile.ZipFile(tmp_path / "model.zip") as archive:
        metadata = json.loads(archive.read("metadata.json"))
    assert metadata["hyperparameters"]["policy"] == policy
    loaded = PPO.load(tmp_path / "model.zip", env=_env(observation_space, spaces.Discrete(3)))
    assert type(loaded.policy) is type(model.policy)
    assert loaded.observation_space == observation_space
    expected, _ = model.predict(obs, deterministic=True)
    actual, _ = loaded.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actual, expected)
    with torch.no_grad():
        torch.testing.assert_close(
            loaded.policy.predict_values(_tensors(obs)), model.policy.predict_values(_tensors(obs))
        )
    loaded.learn(64)  # continues training


def _tensors(obs: Any) -> Any:
    if isinstance(obs, dict):
        return {key: torch.as_tensor(value) for key, value in obs.items()}
    return torch.as_tensor(obs)


# refused at construction -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "observation_space, action_space, kwargs, message",
    [
        (
            VEC,
            spaces.Tuple((spaces.Discrete(2), spaces.Discrete(2))),
            {},
            (
                r"PPO does not support Tuple\(Discrete\(2\).*actions; "
                r"it supports Box, Discrete, MultiDiscrete, MultiBinary"
            ),
        ),
        (VEC, spaces.Dict({"a": spaces.Discrete(2)}), {}, "PPO does not support Dict.*actions"),
        (
            spaces.Dict({"outer": spaces.Dict({"inner": VEC})}),
            spaces.Discrete(2),
            {},
            "PPO supports single-level Dict",
        ),
        (
            spaces.Dict({"pair": spaces.Tuple((VEC, VEC))}),
            spaces.Discrete(2),
            {},
            "PPO does not support Dict observations with.*pair",
        ),
        (spaces.Tuple((VEC,)), spaces.Discrete(2), {}, r"PPO does not support Tuple\(Box"),
        (
            VEC,
            spaces.Discrete(2),
            {"use_sde": True},
            r"PPO\(use_sde=True\): gSDE needs Box actions.*Discrete\(2\)",
        ),
        (VEC, spaces.Discrete(2), {"policy_kwargs": {"use_sde": True}}, "policy_kwargs cannot hold use_sde"),
        (
            VEC,
            spaces.Discrete(2),
            {"policy_kwargs": {"net_arch_typo": [8]}},
            "policy_kwargs do not fit ActorCriticPolicy.*net_arch_typo.*It accepts",
        ),
        (VEC, spaces.Discrete(2), {"sde_sample_freq": 1.5}, "sde_sample_freq must be an integer"),
        (VEC, spaces.Discrete(2), {"policy": "CnnPolicy"}, "NatureCNN .*needs image observations"),
        (spaces.Dict({"v": VEC}), spaces.Discrete(2), {}, "MultiInputPolicy"),
    ],
    ids=[
        "tuple-actions",
        "dict-actions",
        "nested-dict",
        "dict-with-tuple",
        "tuple-obs",
        "sde-discrete",
        "sde-in-policy-kwargs",
        "unknown-policy-kwarg",
        "bad-sde-freq",
        "cnn-on-vector",
        "mlp-on-dict",
    ],
)
def test_unsupported_configurations_are_refused(
    observation_space: spaces.Space, action_space: spaces.Space, kwargs: dict[str, Any], message: str
) -> None:
    kwargs = {**SMALL, **kwargs}
    policy = kwargs.pop("policy", "MlpPolicy")
    with pytest.raises(ConfigurationError, match=message):
        PPO(policy, env=_env(observation_space, action_space), **kwargs)
