"""Issue 16, item 2: make_vec_env, Monitor and its files, results_plotter, check_env, common.utils and the
sample envs, as SB3 code uses them (SB3 itself, when installed, as the reference)."""

from __future__ import annotations

import warnings
from typing import TypeVar

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3.common import results_plotter
from lit_sb3.common.env_checker import check_env
from lit_sb3.common.env_util import is_wrapped, make_vec_env, unwrap_wrapper
from lit_sb3.common.envs import (
    BitFlippingEnv,
    FakeImageEnv,
    IdentityEnv,
    IdentityEnvBox,
    IdentityEnvMultiBinary,
    IdentityEnvMultiDiscrete,
    InvalidActionEnvDiscrete,
    InvalidActionEnvMultiBinary,
    InvalidActionEnvMultiDiscrete,
    SimpleMultiObsEnv,
)
from lit_sb3.common.monitor import Monitor, get_monitor_files, load_results
from lit_sb3.common.noise import NormalActionNoise, VectorizedActionNoise
from lit_sb3.common.utils import (
    LinearSchedule,
    explained_variance,
    get_device,
    get_latest_run_id,
    get_linear_fn,
    is_vectorized_observation,
    safe_mean,
    set_random_seed,
)
from lit_sb3.common.vec_env import DummyVecEnv, SubprocVecEnv
from lit_sb3.common.wrappers import ActionMasker, TimeFeatureWrapper
from lit_sb3_core.errors import EnvError


def test_make_vec_env_builds_seeded_monitored_envs(tmp_path) -> None:
    venv = make_vec_env(
        "Pendulum-v1",
        n_envs=2,
        seed=4,
        monitor_dir=str(tmp_path),
        wrapper_class=gym.wrappers.RescaleAction,
        wrapper_kwargs={"min_action": -1.0, "max_action": 1.0},
        env_kwargs={"g": 9.0},
    )
    assert isinstance(venv, DummyVecEnv) and venv.num_envs == 2
    assert venv.env_is_wrapped(Monitor) == [True, True]
    assert venv.get_attr("g") == [9.0, 9.0] and venv.render_mode == "rgb_array"
    np.testing.assert_allclose(venv.action_space.high, [1.0])
    first = venv.reset()
    again = make_vec_env("Pendulum-v1", n_envs=2, seed=4, env_kwargs={"g": 9.0}).reset()
    np.testing.assert_allclose(first, again)  # env i is seeded seed + i
    assert not np.allclose(first[0], first[1])
    for _ in range(200):  # Pendulum episodes last 200 steps
        venv.step(np.zeros((2, 1), dtype=np.float32))
    assert sorted(p.rsplit("/", 1)[-1] for p in get_monitor_files(str(tmp_path))) == [
        "0.monitor.csv",
        "1.monitor.csv",
    ]
    frame = load_results(str(tmp_path))
    assert list(frame["l"]) == [200, 200] and set(frame.columns) >= {"r", "l", "t"}


def test_make_vec_env_with_subprocesses_and_an_env_class() -> None:
    venv = make_vec_env(IdentityEnv, n_envs=2, env_kwargs={"dim": 3}, vec_env_cls=SubprocVecEnv, seed=0)
    try:
        assert venv.observation_space == spaces.Discrete(3)
        assert venv.reset().shape == (2,)
        assert venv.env_is_wrapped(Monitor) == [True, True]
    finally:
        venv.close()


def test_monitor_files_read_by_sb3(tmp_path) -> None:
    sb3_monitor = pytest.importorskip("stable_baselines3.common.monitor")
    pytest.importorskip("pandas")
    env = Monitor(SimpleMultiObsEnv(), str(tmp_path / "run"), info_keywords=("got_to_end",))
    env.reset(seed=0)
    finished, info = 0, {}
    while finished < 3:
        _, _, terminated, truncated, info = env.step(env.action_space.sample())
        if terminated or truncated:
            finished += 1
            assert info["episode"]["l"] == env.get_episode_lengths()[-1]
            env.reset()
    env.close()
    theirs = sb3_monitor.load_results(str(tmp_path))  # SB3 reads lit-sb3's monitor file
    ours = load_results(str(tmp_path))
    assert list(theirs["r"]) == list(ours["r"]) == env.get_episode_rewards()
    assert list(theirs.columns) == list(ours.columns) == ["index", "r", "l", "t", "got_to_end"]
    assert env.get_total_steps() == sum(env.get_episode_lengths())
    with pytest.raises(RuntimeError, match="reset"):
        strict = Monitor(gym.make("CartPole-v1"), allow_early_resets=False)
        strict.reset()
        strict.reset()


def test_results_plotter(tmp_path) -> None:
    pytest.importorskip("pandas")
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    env = Monitor(gym.make("CartPole-v1"), str(tmp_path))
    env.reset(seed=1)
    episodes = 0
    while episodes < 5:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            episodes += 1
            env.reset()
    env.close()
    frame = load_results(str(tmp_path))
    x, y = results_plotter.ts2xy(frame, results_plotter.X_TIMESTEPS)
    np.testing.assert_array_equal(y, frame["r"])
    np.testing.assert_array_equal(x, np.cumsum(frame["l"]))
    x_mean, y_mean = results_plotter.window_func(np.arange(5), np.arange(5.0), 2, np.mean)
    np.testing.assert_allclose(y_mean, [0.5, 1.5, 2.5, 3.5])
    assert list(x_mean) == [1, 2, 3, 4]
    results_plotter.plot_results([str(tmp_path)], None, results_plotter.X_EPISODES, "CartPole")
    import matplotlib.pyplot as plt

    assert plt.gcf().axes and plt.gcf().axes[0].get_title() == "CartPole"
    plt.close("all")
    with pytest.raises(NotImplementedError, match="x_axis"):
        results_plotter.ts2xy(frame, "hours")


class OldApiEnv(gym.Env):
    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        return np.zeros(2, np.float32)  # no info dict

    def step(self, action):  # type: ignore[no-untyped-def]
        return np.zeros(2, np.float32), 0.0, False, {}


class WideActions(gym.Env):
    observation_space = spaces.Box(-1, 1, (2,), np.float32)
    action_space = spaces.Box(-5, 5, (1,), np.float32)

    def reset(self, *, seed=None, options=None):  # type: ignore[no-untyped-def]
        return np.zeros(2, np.float32), {}

    def step(self, action):  # type: ignore[no-untyped-def]
        return np.zeros(2, np.float32), 0.0, False, False, {}


def test_check_env_reuses_lit_sb3s_checks_and_warns_as_sb3() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("CartPole-v1").unwrapped)
        for env in (
            IdentityEnv(4),
            IdentityEnvMultiDiscrete(3),
            IdentityEnvMultiBinary(3),
            SimpleMultiObsEnv(),
        ):
            check_env(env)
    check_env(BitFlippingEnv(n_bits=4))  # compute_reward works on batches of goals
    with pytest.raises(EnvError, match=r"reset\(\)"):
        check_env(OldApiEnv())
    with pytest.warns(UserWarning, match=r"normalized Box action space"):
        check_env(WideActions())
    with pytest.raises(TypeError, match=r"gymnasium\.Env"):
        check_env("CartPole-v1")  # type: ignore[arg-type]


def test_utils_follow_sb3() -> None:
    sb3_utils = pytest.importorskip("stable_baselines3.common.utils")
    ours, theirs = LinearSchedule(1.0, 0.1, 0.5), sb3_utils.LinearSchedule(1.0, 0.1, 0.5)
    with pytest.warns(DeprecationWarning):
        old_style = get_linear_fn(1.0, 0.1, 0.5)
    for progress in (1.0, 0.8, 0.5, 0.2, 0.0):
        assert ours(progress) == pytest.approx(theirs(progress)) == pytest.approx(old_style(progress))
    y_true, y_pred = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.1, 1.9, 3.2, 3.7])
    assert explained_variance(y_pred, y_true) == pytest.approx(sb3_utils.explained_variance(y_pred, y_true))
    set_random_seed(5)
    first = np.random.rand()
    set_random_seed(5)
    assert np.random.rand() == first
    assert get_device("cpu").type == "cpu" and get_device("auto").type in ("cpu", "cuda")
    assert np.isnan(safe_mean([])) and safe_mean([1, 3]) == 2.0
    box = spaces.Box(-1, 1, (3,))
    assert not is_vectorized_observation(np.zeros(3), box) and is_vectorized_observation(
        np.zeros((2, 3)), box
    )
    with pytest.raises(ValueError, match="Unexpected observation shape"):
        is_vectorized_observation(np.zeros((2, 4)), box)
    assert get_latest_run_id("/nonexistent", "PPO") == 0


def test_sample_envs_and_wrappers() -> None:
    env = InvalidActionEnvDiscrete(dim=10, n_invalid_actions=7)
    obs, _ = env.reset(seed=0)
    mask = env.action_masks()
    assert sum(mask) == 3 and mask[int(obs)]  # the right answer is never masked
    assert sum(InvalidActionEnvMultiDiscrete([3, 4], n_invalid_actions=3).action_masks()) == 4
    assert sum(InvalidActionEnvMultiBinary(4, n_invalid_actions=2).action_masks()) == 6
    box = IdentityEnvBox(eps=0.5)
    state, _ = box.reset(seed=0)
    assert box.step(state)[1] == 1.0
    assert FakeImageEnv().reset(seed=0)[0].shape == (84, 84, 1)
    masked = ActionMasker(IdentityEnv(3), lambda e: np.array([True, False, True]))
    assert list(masked.action_masks()) == [True, False, True]
    assert is_wrapped(masked, ActionMasker) and unwrap_wrapper(masked, ActionMasker) is masked
    timed = TimeFeatureWrapper(gym.make("Pendulum-v1"))
    obs, _ = timed.reset(seed=0)
    assert obs.shape == (4,) and obs[-1] == 1.0
    assert timed.step(np.zeros(1, np.float32))[0][-1] == pytest.approx(1 - 1 / 200)
    noise = VectorizedActionNoise(NormalActionNoise(np.zeros(2), 0.1 * np.ones(2)), n_envs=3)
    assert noise().shape == (3, 2)


# SB3 / sb3-contrib module -> the lit_sb3 module that mirrors it (the union where both have one name)
MIRRORED = {
    "stable_baselines3.common.vec_env": "lit_sb3.common.vec_env",
    "stable_baselines3.common.vec_env.base_vec_env": "lit_sb3.common.vec_env.base_vec_env",
    "stable_baselines3.common.vec_env.dummy_vec_env": "lit_sb3.common.vec_env.dummy_vec_env",
    "stable_baselines3.common.vec_env.subproc_vec_env": "lit_sb3.common.vec_env.subproc_vec_env",
    "stable_baselines3.common.vec_env.vec_normalize": "lit_sb3.common.vec_env.vec_normalize",
    "stable_baselines3.common.vec_env.vec_frame_stack": "lit_sb3.common.vec_env.vec_frame_stack",
    "stable_baselines3.common.vec_env.vec_transpose": "lit_sb3.common.vec_env.vec_transpose",
    "stable_baselines3.common.vec_env.vec_monitor": "lit_sb3.common.vec_env.vec_monitor",
    "stable_baselines3.common.vec_env.vec_check_nan": "lit_sb3.common.vec_env.vec_check_nan",
    "stable_baselines3.common.vec_env.vec_extract_dict_obs": "lit_sb3.common.vec_env.vec_extract_dict_obs",
    "stable_baselines3.common.vec_env.vec_video_recorder": "lit_sb3.common.vec_env.vec_video_recorder",
    "stable_baselines3.common.vec_env.stacked_observations": "lit_sb3.common.vec_env.stacked_observations",
    "stable_baselines3.common.vec_env.util": "lit_sb3.common.vec_env.util",
    "stable_baselines3.common.env_util": "lit_sb3.common.env_util",
    "stable_baselines3.common.atari_wrappers": "lit_sb3.common.atari_wrappers",
    "stable_baselines3.common.monitor": "lit_sb3.common.monitor",
    "stable_baselines3.common.results_plotter": "lit_sb3.common.results_plotter",
    "stable_baselines3.common.env_checker": "lit_sb3.common.env_checker",
    "stable_baselines3.common.utils": "lit_sb3.common.utils",
    "sb3_contrib.common.utils": "lit_sb3.common.utils",
    "stable_baselines3.common.envs": "lit_sb3.common.envs",
    "sb3_contrib.common.envs": "lit_sb3.common.envs",
    "sb3_contrib.common.wrappers": "lit_sb3.common.wrappers",
    "sb3_contrib.common.vec_env": "lit_sb3.common.vec_env",
    "sb3_contrib.common.vec_env.async_eval": "lit_sb3.common.vec_env.async_eval",
    "stable_baselines3.common.evaluation": "lit_sb3.common.evaluation",
    "stable_baselines3.common.noise": "lit_sb3.common.noise",
    "stable_baselines3.common.running_mean_std": "lit_sb3.common.running_mean_std",
    "stable_baselines3.common.preprocessing": "lit_sb3.common.preprocessing",
    "stable_baselines3.common.buffers": "lit_sb3.common.buffers",
    "stable_baselines3.common.sb2_compat.rmsprop_tf_like": "lit_sb3.common.sb2_compat.rmsprop_tf_like",
    "stable_baselines3.her": "lit_sb3.her",
    "stable_baselines3.her.goal_selection_strategy": "lit_sb3.her.goal_selection_strategy",
}
# Public names deliberately not mirrored, each with its reason (docs/sb3-migration.md says the same).
NOT_MIRRORED = {
    "configure_logger": "SB3's logger configuration: lit_sb3.common.logger",
    "DictRolloutBuffer": "lit-sb3's RolloutBuffer holds Dict observations itself",
    "BaseBuffer": "SB3's buffer base class; lit-sb3's buffers have no common base",
    "NStepReplayBuffer": "SB3 2.9's n-step buffer has no lit-sb3 counterpart yet",
}


def public_names(module: object) -> set[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and getattr(value, "__module__", None) == module.__name__
            and not isinstance(value, TypeVar)  # typing helpers, not API
        ]
    return set(names)


@pytest.mark.parametrize("sb3_name", sorted(MIRRORED))
def test_lit_sb3_mirrors_sb3s_public_names(sb3_name: str) -> None:
    import importlib

    theirs = importlib.import_module(sb3_name) if importlib.util.find_spec(sb3_name.split(".")[0]) else None
    if theirs is None:
        pytest.skip(f"{sb3_name} is not installed")
    ours = importlib.import_module(MIRRORED[sb3_name])
    missing = sorted(name for name in public_names(theirs) - set(NOT_MIRRORED) if not hasattr(ours, name))
    assert not missing, f"{MIRRORED[sb3_name]} lacks {missing} of {sb3_name}"


def test_the_migration_page_lists_every_mirrored_name() -> None:
    import importlib
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "sb3-migration.md").read_text()
    unlisted = {}
    for sb3_name in MIRRORED:
        if importlib.util.find_spec(sb3_name.split(".")[0]) is None:
            continue
        names = public_names(importlib.import_module(sb3_name))
        missing = sorted(name for name in names if f"`{name}" not in page and f".{name}`" not in page)
        if missing:
            unlisted[sb3_name] = missing
    assert not unlisted, f"docs/sb3-migration.md does not list {unlisted}"


def test_key_to_goal_strategy_maps_sb3s_keys_to_sb3s_members() -> None:
    from lit_sb3.her.goal_selection_strategy import KEY_TO_GOAL_STRATEGY, GoalSelectionStrategy

    sb3_her = pytest.importorskip("stable_baselines3.her.goal_selection_strategy")
    assert {key: s.name for key, s in KEY_TO_GOAL_STRATEGY.items()} == {
        key: s.name for key, s in sb3_her.KEY_TO_GOAL_STRATEGY.items()
    }
    assert all(isinstance(s, GoalSelectionStrategy) for s in KEY_TO_GOAL_STRATEGY.values())
