"""Model files written by Stable-Baselines3 / sb3-contrib load into lit-sb3, act the same, unpickle nothing.

Each case trains the SB3 algorithm briefly inside the test, saves it with SB3, loads the file with the
lit-sb3 class of the same name and compares deterministic ``predict`` on a batch of observations.
"""

from __future__ import annotations

import base64
import copy
import json
import pickle
import warnings
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import lit_sb3
from lit_sb3_core.errors import ModelFileError

sb3 = pytest.importorskip("stable_baselines3")
contrib = pytest.importorskip("sb3_contrib")


class DictEnv(gym.Env):
    """Dict observations (a vector and a discrete key) with Box or Discrete actions."""

    def __init__(self, discrete: bool = False) -> None:
        self.observation_space = spaces.Dict(
            {"position": spaces.Box(-1.0, 1.0, (3,), np.float32), "mode": spaces.Discrete(3)}
        )
        self.action_space = spaces.Discrete(3) if discrete else spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.t = 0

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        self.t = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        self.t += 1
        return self.observation_space.sample(), float(np.sum(action)), False, self.t >= 20, {}


class ActionSpaceEnv(gym.Env):
    """A vector observation with the given action space (MultiDiscrete, MultiBinary, ...)."""

    observation_space = spaces.Box(-1.0, 1.0, (4,), np.float32)

    def __init__(self, action_space: spaces.Space) -> None:
        self.action_space = action_space

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        return self.observation_space.sample(), 0.0, False, True, {}


SMALL_ON = {"n_steps": 32, "batch_size": 32, "n_epochs": 2}
SMALL_OFF = {"learning_starts": 32, "buffer_size": 500, "batch_size": 16}
ARCH_AC = {"net_arch": {"pi": [16], "vf": [16]}}
ARCH_OFF = {"net_arch": [16]}

# name, SB3 class path, policy, env factory, SB3 constructor kwargs, learn steps
CASES: list[tuple[str, str, str, Any, dict[str, Any], int]] = [
    (
        "PPO",
        "stable_baselines3:PPO",
        "MlpPolicy",
        lambda: gym.make("CartPole-v1"),
        {**SMALL_ON, "policy_kwargs": ARCH_AC},
        64,
    ),
    (
        "PPO",
        "stable_baselines3:PPO",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_ON, "policy_kwargs": {**ARCH_AC, "activation_fn": "relu"}},
        64,
    ),
    (
        "PPO",
        "stable_baselines3:PPO",
        "MultiInputPolicy",
        lambda: DictEnv(),
        {**SMALL_ON, "policy_kwargs": ARCH_AC},
        64,
    ),
    (
        "PPO",
        "stable_baselines3:PPO",
        "MlpPolicy",
        lambda: ActionSpaceEnv(spaces.MultiDiscrete([3, 4])),
        SMALL_ON,
        32,
    ),
    (
        "PPO",
        "stable_baselines3:PPO",
        "MlpPolicy",
        lambda: ActionSpaceEnv(spaces.MultiBinary(3)),
        SMALL_ON,
        32,
    ),
    (
        "A2C",
        "stable_baselines3:A2C",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {"n_steps": 8, "policy_kwargs": ARCH_AC},
        64,
    ),
    (
        "A2C",
        "stable_baselines3:A2C",
        "MlpPolicy",
        lambda: gym.make("CartPole-v1"),
        {"n_steps": 8, "use_rms_prop": False},
        64,
    ),
    (
        "TRPO",
        "sb3_contrib:TRPO",
        "MlpPolicy",
        lambda: gym.make("CartPole-v1"),
        {"n_steps": 64, "batch_size": 32, "policy_kwargs": ARCH_AC},
        64,
    ),
    (
        "DQN",
        "stable_baselines3:DQN",
        "MlpPolicy",
        lambda: gym.make("CartPole-v1"),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        96,
    ),
    (
        "DQN",
        "stable_baselines3:DQN",
        "MultiInputPolicy",
        lambda: DictEnv(discrete=True),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        64,
    ),
    (
        "QRDQN",
        "sb3_contrib:QRDQN",
        "MlpPolicy",
        lambda: gym.make("CartPole-v1"),
        {**SMALL_OFF, "policy_kwargs": {**ARCH_OFF, "n_quantiles": 10}},
        96,
    ),
    (
        "SAC",
        "stable_baselines3:SAC",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        64,
    ),
    (
        "SAC",
        "stable_baselines3:SAC",
        "MultiInputPolicy",
        lambda: DictEnv(),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        64,
    ),
    (
        "TD3",
        "stable_baselines3:TD3",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        64,
    ),
    (
        "DDPG",
        "stable_baselines3:DDPG",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_OFF, "policy_kwargs": ARCH_OFF},
        64,
    ),
    (
        "TQC",
        "sb3_contrib:TQC",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_OFF, "policy_kwargs": {**ARCH_OFF, "n_quantiles": 5}},
        64,
    ),
    (
        "CrossQ",
        "sb3_contrib:CrossQ",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {**SMALL_OFF, "policy_kwargs": {"net_arch": {"pi": [16], "qf": [32]}}},
        64,
    ),
    (
        "ARS",
        "sb3_contrib:ARS",
        "MlpPolicy",
        lambda: gym.make("Pendulum-v1"),
        {"n_delta": 2, "policy_kwargs": {"net_arch": [8]}},
        800,
    ),
    ("ARS", "sb3_contrib:ARS", "LinearPolicy", lambda: gym.make("CartPole-v1"), {"n_delta": 2}, 200),
]


def _sb3_class(path: str) -> Any:
    module, name = path.split(":")
    return getattr({"stable_baselines3": sb3, "sb3_contrib": contrib}[module], name)


def _train_and_save(
    sb3_path: str, policy: str, make_env: Any, kwargs: dict[str, Any], steps: int, file: Path
) -> Any:
    kwargs = copy.deepcopy(kwargs)  # SB3 adds keys to policy_kwargs in place
    if "policy_kwargs" in kwargs and kwargs["policy_kwargs"].get("activation_fn") == "relu":
        import torch

        kwargs["policy_kwargs"] = {**kwargs["policy_kwargs"], "activation_fn": torch.nn.ReLU}
    model = _sb3_class(sb3_path)(policy, make_env(), seed=0, **kwargs)
    model.learn(steps)
    model.save(file)
    return model


def _batch(space: spaces.Space, n: int = 16) -> Any:
    space.seed(1)
    samples = [space.sample() for _ in range(n)]
    if isinstance(space, spaces.Dict):
        return {key: np.stack([s[key] for s in samples]) for key in space.spaces}
    return np.stack(samples)


@pytest.mark.parametrize(
    ("name", "sb3_path", "policy", "make_env", "kwargs", "steps"),
    CASES,
    ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(CASES)],
)
def test_sb3_file_loads_and_acts_the_same(
    tmp_path: Path, name: str, sb3_path: str, policy: str, make_env: Any, kwargs: dict[str, Any], steps: int
) -> None:
    reference = _train_and_save(sb3_path, policy, make_env, kwargs, steps, tmp_path / "model.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pickled-only fields (train_freq, ...) are reported, tested below
        model = getattr(lit_sb3, name).load(tmp_path / "model.zip")
    assert model.num_timesteps == reference.num_timesteps
    obs = _batch(reference.observation_space)
    expected, _ = reference.predict(obs, deterministic=True)
    actions, _ = model.predict(obs, deterministic=True)
    assert actions.shape == expected.shape
    np.testing.assert_allclose(actions, expected, rtol=1e-5, atol=1e-5)


def test_maskable_ppo_file_acts_the_same_under_masks(tmp_path: Path) -> None:
    from sb3_contrib.common.envs import InvalidActionEnvDiscrete

    env = InvalidActionEnvDiscrete(dim=6, n_invalid_actions=2)
    reference = contrib.MaskablePPO("MlpPolicy", env, seed=0, **SMALL_ON).learn(64)
    reference.save(tmp_path / "masked.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.MaskablePPO.load(tmp_path / "masked.zip")
    obs = np.arange(6)
    masks = np.random.default_rng(0).random((6, 6)) < 0.5
    masks[:, 0] = True  # at least one allowed action per row
    expected, _ = reference.predict(obs, deterministic=True, action_masks=masks)
    actions, _ = model.predict(obs, deterministic=True, action_masks=masks)
    np.testing.assert_array_equal(actions, expected)
    assert masks[np.arange(6), actions].all()


def test_recurrent_ppo_file_carries_the_lstm_state_as_sb3_does(tmp_path: Path) -> None:
    kwargs = {
        "n_steps": 32,
        "batch_size": 32,
        "n_epochs": 1,
        "policy_kwargs": {"lstm_hidden_size": 8, "net_arch": [8]},
    }
    reference = contrib.RecurrentPPO("MlpLstmPolicy", "CartPole-v1", seed=0, **kwargs).learn(64)
    reference.save(tmp_path / "lstm.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.RecurrentPPO.load(tmp_path / "lstm.zip")
    rng = np.random.default_rng(0)
    ours_state = theirs_state = None
    starts = np.ones((3,), dtype=bool)
    for step in range(6):
        obs = rng.standard_normal((3, 4)).astype(np.float32)
        expected, theirs_state = reference.predict(
            obs, theirs_state, episode_start=starts, deterministic=True
        )
        actions, ours_state = model.predict(obs, ours_state, episode_start=starts, deterministic=True)
        np.testing.assert_array_equal(actions, expected)
        np.testing.assert_allclose(np.asarray(ours_state[0]), np.asarray(theirs_state[0]), atol=1e-5)
        starts = np.array([False, step == 2, False])


class ImageEnv(gym.Env):
    """36x36 grey images (channel-last, as cameras give them), Discrete actions."""

    observation_space = spaces.Box(0, 255, (36, 36, 1), np.uint8)
    action_space = spaces.Discrete(3)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        return self.observation_space.sample(), 0.0, False, True, {}


def test_image_spaces_stored_summarized_come_from_the_env(tmp_path: Path) -> None:
    reference = sb3.PPO("CnnPolicy", ImageEnv(), seed=0, n_steps=16, batch_size=16, n_epochs=1,
                        policy_kwargs={"features_extractor_kwargs": {"features_dim": 16}}).learn(16)  # fmt: skip
    reference.save(tmp_path / "cnn.zip")
    with pytest.raises(ModelFileError, match=r"summarized.*pass the environment: load\("):
        lit_sb3.PPO.load(tmp_path / "cnn.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.PPO.load(tmp_path / "cnn.zip", env=ImageEnv())
    assert model.observation_space == ImageEnv.observation_space  # the env's channel-last space
    obs = _batch(ImageEnv.observation_space, 8)
    expected, _ = reference.predict(obs, deterministic=True)  # SB3 transposes channel-last input itself
    actions, _ = model.predict(obs, deterministic=True)
    np.testing.assert_array_equal(actions, expected)


class _Tripwire:
    """Unpickling this creates a file: proof that a loader decoded a pickle."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (exec, (f"open({str(self.marker)!r}, 'w').close()",))


def _rewrite_data(source: Path, target: Path, change: Any) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            payload = old.read(item.filename)
            if item.filename == "data":
                data = json.loads(payload)
                change(data)
                payload = json.dumps(data).encode()
            new.writestr(item, payload)


def test_loading_never_decodes_the_pickles_in_the_file(tmp_path: Path) -> None:
    _train_and_save("stable_baselines3:SAC", "MlpPolicy", lambda: gym.make("Pendulum-v1"),
                    {**SMALL_OFF, "policy_kwargs": ARCH_OFF}, 40, tmp_path / "sac.zip")  # fmt: skip
    marker = tmp_path / "unpickled"
    trap = base64.b64encode(pickle.dumps(_Tripwire(marker))).decode()

    def arm(data: dict[str, Any]) -> None:
        for value in data.values():
            if isinstance(value, dict) and ":serialized:" in value:
                value[":serialized:"] = trap

    _rewrite_data(tmp_path / "sac.zip", tmp_path / "armed.zip", arm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.SAC.load(tmp_path / "armed.zip")
    assert model.predict(np.zeros(3, np.float32), deterministic=True)[0].shape == (1,)
    assert not marker.exists()


def test_a_weight_file_holding_objects_is_refused(tmp_path: Path) -> None:
    import torch

    _train_and_save("stable_baselines3:PPO", "MlpPolicy", lambda: gym.make("CartPole-v1"), SMALL_ON, 32,
                    tmp_path / "ppo.zip")  # fmt: skip
    marker = tmp_path / "unpickled"
    with zipfile.ZipFile(tmp_path / "ppo.zip") as old, zipfile.ZipFile(tmp_path / "evil.zip", "w") as new:
        for item in old.infolist():
            payload = old.read(item.filename)
            if item.filename == "policy.pth":
                buffer = __import__("io").BytesIO()
                torch.save({"weight": _Tripwire(marker)}, buffer)
                payload = buffer.getvalue()
            new.writestr(item, payload)
    with pytest.raises(ModelFileError, match=r"weights_only=True"):
        lit_sb3.PPO.load(tmp_path / "evil.zip")
    assert not marker.exists()


def test_pickled_only_fields_are_named_and_can_be_given(tmp_path: Path) -> None:
    reference = sb3.DQN("MlpPolicy", "CartPole-v1", train_freq=(2, "step"), learning_rate=lambda p: 1e-3 * p,
                        **SMALL_OFF)  # fmt: skip
    reference.save(tmp_path / "dqn.zip")
    with pytest.warns(UserWarning, match=r"exist only as pickles.*learning_rate.*train_freq"):
        model = lit_sb3.DQN.load(tmp_path / "dqn.zip")
    assert model.train_freq == (4, "step")  # DQN's default: the stored (2, "step") is only pickled
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing left to report
        given = lit_sb3.DQN.load(tmp_path / "dqn.zip", train_freq=2, custom_objects={"learning_rate": 5e-4})
    assert given.train_freq == (2, "step") and given.lr_schedule(1.0) == 5e-4
    assert given.batch_size == 16 and given.learning_starts == 32  # readable fields are read


def test_sb3_file_errors_name_the_problem(tmp_path: Path) -> None:
    _train_and_save("stable_baselines3:SAC", "MlpPolicy", lambda: gym.make("Pendulum-v1"),
                    {**SMALL_OFF, "policy_kwargs": ARCH_OFF}, 1, tmp_path / "sac.zip")  # fmt: skip
    with pytest.raises(ModelFileError, match=r"SACPolicy, which PPO does not rebuild"):
        lit_sb3.PPO.load(tmp_path / "sac.zip")
    with pytest.raises(ModelFileError, match=r"does not name its algorithm.*SAC|PPO\.load"):
        lit_sb3.load(tmp_path / "sac.zip")
    with pytest.raises(ModelFileError, match=r"saved for observation_space Box"):
        lit_sb3.SAC.load(tmp_path / "sac.zip", env="MountainCarContinuous-v0")

    def drop_space(data: dict[str, Any]) -> None:
        data["observation_space"] = {":type:": "<class 'gymnasium.spaces.box.Box'>", ":serialized:": "AAAA"}

    _rewrite_data(tmp_path / "sac.zip", tmp_path / "no_space.zip", drop_space)
    with pytest.raises(ModelFileError, match=r"observation_space.*pass the environment"):
        lit_sb3.SAC.load(tmp_path / "no_space.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.SAC.load(tmp_path / "no_space.zip", env="Pendulum-v1")
    assert model.observation_space.shape == (3,)


def test_a_model_loaded_from_sb3_trains_and_saves_in_lit_sb3_format(tmp_path: Path) -> None:
    _train_and_save("stable_baselines3:PPO", "MlpPolicy", lambda: gym.make("CartPole-v1"),
                    {**SMALL_ON, "policy_kwargs": ARCH_AC}, 64, tmp_path / "sb3.zip")  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.PPO.load(tmp_path / "sb3.zip", env="CartPole-v1")
    model.learn(64, reset_num_timesteps=False)
    assert model.num_timesteps == 128
    model.save(tmp_path / "lit.zip")
    with zipfile.ZipFile(tmp_path / "lit.zip") as archive:
        assert "metadata.json" in archive.namelist() and "data" not in archive.namelist()
    again = lit_sb3.PPO.load(tmp_path / "lit.zip")
    obs = _batch(again.observation_space)
    np.testing.assert_array_equal(
        again.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )


def test_a_her_model_file_keeps_its_replay_buffer_settings(tmp_path: Path) -> None:
    from stable_baselines3.common.envs import BitFlippingEnv

    env = BitFlippingEnv(n_bits=4, continuous=False, max_steps=4)
    her = {"n_sampled_goal": 2, "goal_selection_strategy": "future"}
    reference = sb3.DQN("MultiInputPolicy", env, replay_buffer_class=sb3.HerReplayBuffer, replay_buffer_kwargs=her,
                        learning_starts=8, buffer_size=200, policy_kwargs={"net_arch": [16]}, seed=0)  # fmt: skip
    reference.learn(40)
    reference.save(tmp_path / "her.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.DQN.load(tmp_path / "her.zip")
    assert model.hparams["replay_buffer_class"] == "her"
    assert model.replay_buffer_kwargs == {"n_sampled_goal": 2, "goal_selection_strategy": "future"}
    obs = _batch(env.observation_space, 8)
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True)[0], reference.predict(obs, deterministic=True)[0]
    )


def _rewrite_member(source: Path, target: Path, member: str, change: Any) -> None:
    """Copy an SB3 zip, passing one ``.pth`` member's state dict through ``change``."""
    import io

    import torch

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for item in old.infolist():
            payload = old.read(item.filename)
            if item.filename == member:
                buffer = io.BytesIO()
                torch.save(change(torch.load(io.BytesIO(payload), weights_only=True)), buffer)
                payload = buffer.getvalue()
            new.writestr(item, payload)


def test_sb3_before_1_7_actor_critic_files_without_pi_features_extractor_load(tmp_path: Path) -> None:
    """SB3 < 1.7 saved no ``pi_features_extractor`` keys (SB3 warns and loads them inexactly); lit-sb3
    stores each extractor once, so such a file loads exactly and acts the same, with nothing to warn about."""
    reference = sb3.A2C("CnnPolicy", ImageEnv(), seed=0, n_steps=4,
                        policy_kwargs={"features_extractor_kwargs": {"features_dim": 16}}).learn(8)  # fmt: skip
    reference.save(tmp_path / "new.zip")

    def drop_alias(state: dict[str, Any]) -> dict[str, Any]:
        kept = {k: v for k, v in state.items() if not k.startswith("pi_features_extractor.")}
        assert len(kept) < len(state)  # the layout of SB3 < 1.7
        return kept

    _rewrite_member(tmp_path / "new.zip", tmp_path / "old.zip", "policy.pth", drop_alias)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.A2C.load(tmp_path / "old.zip", env=ImageEnv())
    policy = model.policy
    assert policy.pi_features_extractor is policy.features_extractor is policy.vf_features_extractor
    obs = _batch(ImageEnv.observation_space, 8)
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True)[0], reference.predict(obs, deterministic=True)[0]
    )
    model.learn(8)


def test_sb3_before_2_4_dqn_files_with_target_parameters_in_the_optimizer_load(tmp_path: Path) -> None:
    """SB3 < 2.4 put the target network in DQN's optimizer (SB3 warns and truncates its state); lit-sb3 does
    not carry SB3's optimizer states over, so such a file loads, acts the same and trains."""
    import torch

    reference = sb3.DQN("MlpPolicy", "CartPole-v1", buffer_size=1000, learning_starts=4, seed=0)
    reference.policy.optimizer = torch.optim.Adam(reference.policy.parameters(), lr=1e-3)  # SB3 < 2.4
    reference.learn(40)
    reference.save(tmp_path / "old.zip")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = lit_sb3.DQN.load(tmp_path / "old.zip", env="CartPole-v1")
    obs = _batch(reference.observation_space, 16)
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True)[0], reference.predict(obs, deterministic=True)[0]
    )
    assert model.learn(20).num_timesteps == 20
