"""Issue 16, item 1: SB3's VecEnv API over gymnasium's vector envs, its wrappers, and training on them.

Where Stable-Baselines3 is installed (the ``benchmark`` extra), its classes serve as the reference: the
same env, seeds and actions must give the same observations, rewards, dones and infos.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.envs import FakeImageEnv, SimpleMultiObsEnv
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.vec_env import (
    DummyVecEnv,
    SubprocVecEnv,
    VecCheckNan,
    VecEnv,
    VecEnvWrapper,
    VecExtractDictObs,
    VecFrameStack,
    VecMonitor,
    VecNormalize,
    VecTransposeImage,
    VecVideoRecorder,
    is_vecenv_wrapped,
    sync_envs_normalization,
    unwrap_vec_normalize,
)
from lit_sb3_core.errors import ModelFileError, NonFiniteError
from lit_sb3_core.sb3.vec_env_views import as_sb3_vec_env, as_vector_env


def short_cartpole(max_episode_steps: int = 500) -> gym.Env:
    return gym.make("CartPole-v1", max_episode_steps=max_episode_steps)


def run(venv: VecEnv, actions: list[np.ndarray]) -> list[tuple]:
    venv.seed(3)
    records = [(venv.reset(),)]
    for action in actions:
        obs, rewards, dones, infos = venv.step(action)
        records.append((obs, rewards, dones, infos))
    return records


def cartpole_actions(n_envs: int, steps: int = 60) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 2, size=n_envs) for _ in range(steps)]


def assert_same_records(ours: list[tuple], theirs: list[tuple]) -> None:
    np.testing.assert_allclose(ours[0][0], theirs[0][0])
    for (obs, rew, done, infos), (obs2, rew2, done2, infos2) in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(obs, obs2, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(rew, rew2, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(done, done2)
        assert rew.dtype == rew2.dtype and done.dtype == done2.dtype
        for info, info2 in zip(infos, infos2):
            assert info["TimeLimit.truncated"] == info2["TimeLimit.truncated"]
            assert ("terminal_observation" in info) == ("terminal_observation" in info2)
            if "terminal_observation" in info:
                np.testing.assert_allclose(
                    info["terminal_observation"], info2["terminal_observation"], rtol=1e-5, atol=1e-6
                )


def test_dummy_vec_env_steps_like_sb3s() -> None:
    sb3_vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    fns = [lambda: short_cartpole(15), lambda: short_cartpole(40)]
    ours = run(DummyVecEnv(fns), cartpole_actions(2))
    theirs = run(sb3_vec_env.DummyVecEnv(fns), cartpole_actions(2))
    assert_same_records(ours, theirs)
    dones = np.array([record[2] for record in ours[1:]])
    truncations = [info["TimeLimit.truncated"] for record in ours[1:] for info in record[3]]
    assert dones.any() and any(truncations)  # both kinds of episode end were compared


def test_view_api_on_sub_envs() -> None:
    venv = DummyVecEnv([lambda: Monitor(short_cartpole()), lambda: short_cartpole()])
    assert isinstance(venv.reset(), np.ndarray) and venv.num_envs == 2
    assert venv.observation_space == gym.make("CartPole-v1").observation_space
    assert venv.get_attr("spec", indices=1)[0].id == "CartPole-v1"
    venv.set_attr("custom", 7, indices=[0])
    assert venv.get_attr("custom", indices=0) == [7]
    assert venv.has_attr("custom") is False  # env 1 lacks it
    assert venv.env_is_wrapped(Monitor) == [True, False]
    assert venv.env_method("has_wrapper_attr", "length_queue") == [True, False]
    assert venv.seed(10) == [10, 11]
    first = venv.reset()
    venv.seed(10)
    np.testing.assert_allclose(venv.reset(), first)  # seeds apply to the next reset
    with pytest.warns(UserWarning, match="no render_mode"):
        assert venv.render() is None  # as SB3
    assert len(venv.envs) == 2
    venv.close()


def test_render_tiles_rgb_frames() -> None:
    venv = make_vec_env("CartPole-v1", n_envs=3)  # rgb_array, as SB3's make_vec_env
    venv.reset()
    image = venv.render(mode="rgb_array")
    frame = venv.get_images()[0]
    assert image.shape == (2 * frame.shape[0], 2 * frame.shape[1], 3)  # 3 frames on a 2x2 grid


class NoRenderEnv(gym.Env):
    """A user's env that declares no render mode and takes no ``render_mode`` argument."""

    observation_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(2, np.float32), {}

    def step(self, action):
        return np.zeros(2, np.float32), 1.0, True, False, {}


def test_model_made_from_an_env_id_renders_rgb_arrays_as_sb3() -> None:
    from lit_sb3 import A2C

    model = A2C("MlpPolicy", "CartPole-v1")
    venv = model.get_env()
    venv.reset()
    assert venv.render_mode == "rgb_array"  # SB3 makes id envs with render_mode="rgb_array"
    assert venv.render(mode="rgb_array").shape == venv.get_images()[0].shape

    gym.register("NoRenderEnv-v0", entry_point=NoRenderEnv)
    try:
        model = A2C("MlpPolicy", "NoRenderEnv-v0", n_steps=4).learn(8)  # made as it is: no render_mode
        assert model.get_env().render_mode is None and model.num_timesteps == 8
    finally:
        del gym.registry["NoRenderEnv-v0"]


def test_subproc_vec_env_reaches_single_workers() -> None:
    venv = SubprocVecEnv([lambda: Monitor(short_cartpole(10)), lambda: short_cartpole(10)])
    try:
        venv.seed(0)
        assert venv.reset().shape == (2, 4)
        venv.env_method("set_wrapper_attr", "mark", "x", indices=[1])
        assert venv.get_attr("mark", indices=[1]) == ["x"]
        assert venv.env_is_wrapped(Monitor) == [True, False]
        infos = None
        for _ in range(12):
            _, _, dones, infos = venv.step(np.array([0, 0]))
            if dones.any():
                break
        assert dones.all() and infos[0]["TimeLimit.truncated"] in (True, False)
        assert "episode" in infos[0] and "terminal_observation" in infos[1]
    finally:
        venv.close()


class ScaleReward(VecEnvWrapper):
    """A user's wrapper written SB3's way: it overrides reset and step_wait."""

    def __init__(self, venv: VecEnv, scale: float) -> None:
        super().__init__(venv)
        self.scale = scale
        self.steps = 0

    def reset(self) -> np.ndarray:
        return self.venv.reset()

    def step_wait(self):  # type: ignore[no-untyped-def]
        obs, rewards, dones, infos = self.venv.step_wait()
        self.steps += 1
        return obs, rewards * self.scale, dones, infos


def test_a_users_vec_env_wrapper_trains_and_evaluates() -> None:
    from lit_sb3 import PPO
    from lit_sb3.common.evaluation import evaluate_policy

    venv = ScaleReward(make_vec_env("CartPole-v1", n_envs=2, seed=0), scale=0.5)
    model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, n_epochs=1, seed=0).learn(64)
    assert venv.steps >= 32 and model.num_timesteps >= 64  # training stepped the user's wrapper
    assert venv.scale == 0.5 and venv.num_envs == 2  # attribute lookups reach the wrapper and below
    rewards, lengths = evaluate_policy(model, venv, n_eval_episodes=2, return_episode_rewards=True)
    # make_vec_env's Monitor sits below the user's wrapper: as SB3's evaluate_policy does, the Monitor's
    # episodes (unscaled returns) are the ones reported (SB3 2.9 gives the same: [65.0, 66.0] here).
    assert len(rewards) == 2 and rewards == [float(n) for n in lengths]


def test_views_are_cached_and_give_the_users_env_back() -> None:
    venv = VecFrameStack(make_vec_env("CartPole-v1", n_envs=2), n_stack=2)
    vector_env = as_vector_env(venv)
    assert as_vector_env(venv) is vector_env
    assert as_sb3_vec_env(vector_env) is venv
    wrapped = gym.wrappers.vector.RecordEpisodeStatistics(vector_env)
    assert as_sb3_vec_env(wrapped) is venv  # through lit-sb3's own vector wrappers too
    plain = gym.vector.SyncVectorEnv([short_cartpole], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
    assert as_sb3_vec_env(plain) is as_sb3_vec_env(plain)
    with pytest.raises(ValueError, match="SAME_STEP"):
        as_sb3_vec_env(gym.vector.SyncVectorEnv([short_cartpole]))


def pendulum_actions(n_envs: int, steps: int = 250) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.uniform(-2, 2, size=(n_envs, 1)).astype(np.float32) for _ in range(steps)]


def test_vec_normalize_matches_sb3_and_round_trips(tmp_path) -> None:
    sb3_vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    fns = [lambda: gym.make("Pendulum-v1", max_episode_steps=100)] * 2
    ours = VecNormalize(DummyVecEnv(fns), gamma=0.9)
    theirs = sb3_vec_env.VecNormalize(sb3_vec_env.DummyVecEnv(fns), gamma=0.9)
    assert_same_records(run(ours, pendulum_actions(2)), run(theirs, pendulum_actions(2)))
    np.testing.assert_allclose(ours.obs_rms.mean, theirs.obs_rms.mean, rtol=1e-5)
    np.testing.assert_allclose(ours.ret_rms.var, theirs.ret_rms.var, rtol=1e-5)
    np.testing.assert_allclose(ours.get_original_obs(), theirs.get_original_obs(), rtol=1e-5)

    path = tmp_path / "vec_normalize.pkl"
    ours.save(path)
    loaded = VecNormalize.load(path, DummyVecEnv(fns))
    np.testing.assert_allclose(loaded.obs_rms.mean, ours.obs_rms.mean)
    assert loaded.ret_rms.count == ours.ret_rms.count and loaded.gamma == 0.9
    sb3_file = tmp_path / "sb3_vec_normalize.pkl"
    theirs.save(str(sb3_file))
    with pytest.raises(ModelFileError, match="never unpickles"):
        VecNormalize.load(sb3_file, DummyVecEnv(fns))

    evaluation = VecNormalize(DummyVecEnv(fns), training=False)
    sync_envs_normalization(ours, evaluation)
    np.testing.assert_allclose(evaluation.obs_rms.var, ours.obs_rms.var)
    assert unwrap_vec_normalize(VecMonitor(ours)) is ours and is_vecenv_wrapped(ours, VecNormalize)


def test_off_policy_training_on_vec_normalize_updates_its_statistics() -> None:
    from lit_sb3 import SAC

    venv = VecNormalize(make_vec_env("Pendulum-v1", n_envs=1, seed=0))
    model = SAC("MlpPolicy", venv, learning_starts=50, batch_size=32, seed=0).learn(80)
    assert venv.obs_rms.count > 80  # every training step went through the wrapper
    # The statistics exist once, in the wrapper: the model normalizes nothing itself (no double normalization).
    assert model.normalization is None and model.obs_normalizer is None
    sample = np.ones((1, 3), dtype=np.float32)
    assert model.normalizers.obs(sample) is sample
    from lit_sb3 import RLEnvDataModule
    from lit_sb3_core.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="second time"):
        RLEnvDataModule(train_env=venv, normalize=True)
    obs = venv.reset()
    assert np.all(np.abs(obs) <= venv.clip_obs)
    np.testing.assert_allclose(venv.unnormalize_obs(obs), venv.get_original_obs(), atol=1e-4)


def test_vec_frame_stack_matches_sb3() -> None:
    sb3_vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    fns = [lambda: short_cartpole(20), lambda: short_cartpole(30)]
    ours = VecFrameStack(DummyVecEnv(fns), n_stack=3)
    theirs = sb3_vec_env.VecFrameStack(sb3_vec_env.DummyVecEnv(fns), n_stack=3)
    assert ours.observation_space == theirs.observation_space
    assert_same_records(run(ours, cartpole_actions(2)), run(theirs, cartpole_actions(2)))

    images = VecFrameStack(DummyVecEnv([FakeImageEnv]), n_stack=4)
    assert images.observation_space.shape == (84, 84, 4) and images.reset().shape == (1, 84, 84, 4)


def test_vec_transpose_image_and_extract_dict_obs() -> None:
    venv = VecTransposeImage(DummyVecEnv([FakeImageEnv, FakeImageEnv]))
    assert venv.observation_space.shape == (1, 84, 84) and venv.reset().shape == (2, 1, 84, 84)
    _, _, dones, infos = venv.step(np.array([0, 1]))
    assert not dones.any() and infos[0]["TimeLimit.truncated"] is False
    dict_env = VecExtractDictObs(DummyVecEnv([lambda: SimpleMultiObsEnv(random_start=False)]), key="vec")
    assert dict_env.observation_space == spaces.Box(0, 1, (5,), dtype=np.float64)
    assert dict_env.reset().shape == (1, 5)


def test_vec_monitor_writes_sb3s_monitor_file(tmp_path) -> None:
    from lit_sb3.common.monitor import load_results

    venv = VecMonitor(DummyVecEnv([lambda: short_cartpole(5)]), filename=str(tmp_path / "vec"))
    venv.reset()
    infos = [venv.step(np.array([0]))[3] for _ in range(5)]
    assert infos[-1][0]["episode"]["l"] == 5 and infos[-1][0]["episode"]["r"] == 5.0
    venv.close()
    frame = load_results(str(tmp_path))
    assert list(frame["l"]) == [5]


class NanEnv(gym.Env):
    observation_space = spaces.Box(-np.inf, np.inf, (1,), np.float64)
    action_space = spaces.Box(-1, 1, (1,), np.float32)

    def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        self.t = 0
        return np.zeros(1), {}

    def step(self, action):  # type: ignore[no-untyped-def]
        self.t += 1
        return np.array([np.nan if self.t == 3 else 0.0]), 0.0, False, False, {}


def test_vec_check_nan_names_the_env_and_the_action() -> None:
    venv = VecCheckNan(DummyVecEnv([NanEnv]), raise_exception=True)
    venv.reset()
    venv.step(np.zeros((1, 1)))
    venv.step(np.zeros((1, 1)))
    with pytest.raises(NonFiniteError, match=r"observations of envs \[0\].*actions") as error:
        venv.step(np.full((1, 1), 0.5))
    assert error.value.what == "observation" and error.value.env_index == 0
    warning_only = VecCheckNan(DummyVecEnv([NanEnv]))
    warning_only.reset()
    with pytest.warns(UserWarning, match="NaN"):
        for _ in range(3):
            warning_only.step(np.zeros((1, 1)))


def test_vec_video_recorder_writes_an_mp4(tmp_path) -> None:
    pytest.importorskip("moviepy")
    venv = VecVideoRecorder(
        DummyVecEnv([lambda: gym.make("CartPole-v1", render_mode="rgb_array")]),
        str(tmp_path),
        record_video_trigger=lambda step: step == 0,
        video_length=10,
        name_prefix="random",
    )
    venv.reset()
    for _ in range(11):
        venv.step(np.array([venv.action_space.sample()]))
    venv.close()
    videos = list(tmp_path.glob("random-step-0-to-step-10.mp4"))
    assert videos and videos[0].stat().st_size > 0
    with pytest.raises(ValueError, match="rgb_array"):
        VecVideoRecorder(DummyVecEnv([short_cartpole]), str(tmp_path), lambda step: True)
