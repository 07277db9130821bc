"""check_env as strict as SB3's: detailed errors for observations that are not what the space declares,
AssertionError/TypeError where SB3 raises them, warnings (and skipped checks) for spaces no algorithm takes."""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3.common.env_checker import check_env
from lit_sb3.common.envs import IdentityEnvBox, SimpleMultiObsEnv
from lit_sb3_core.errors import EnvCheckError, EnvTypeError


class ScriptedEnv(gym.Env):
    """Returns what the test gives it from reset() and step()."""

    def __init__(
        self,
        observation_space: spaces.Space,
        reset_obs: Any = None,
        step_result: tuple[Any, ...] | None = None,
        action_space: spaces.Space | None = None,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space or spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.reset_obs = reset_obs
        self.step_result = step_result

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        obs = self.observation_space.sample() if self.reset_obs is None else self.reset_obs
        return obs, {}

    def step(self, action: Any) -> tuple[Any, ...]:
        if self.step_result is not None:
            return self.step_result
        return self.observation_space.sample(), 0.0, False, False, {}


BOX = spaces.Box(low=np.array([0.0, -1.0]), high=np.array([1.0, 1.0]), dtype=np.float32)


@pytest.mark.parametrize("where", ["reset", "step"])
@pytest.mark.parametrize(
    ("space", "wrong", "message"),
    [
        (
            BOX,
            np.array([0.5, 3.0], np.float32),
            r"1 invalid indices: Expected: -1\.0 <= obs\[1\] <= 1\.0, actual value: 3\.0",
        ),
        (BOX, np.array([np.nan, 0.0], np.float32), r"obs\[0\] <= 1\.0, actual value: nan"),
        (BOX, np.array([0.5, 0.5], np.float64), r"Expected: float32, actual dtype: float64"),
        (BOX, np.zeros((1, 2), np.float32), r"Expected: \(2,\), actual shape: \(1, 2\)"),
        (BOX, [0.5, 0.5], r"must be a numpy array"),
        (BOX, (np.zeros(2, np.float32),), r"not a tuple"),
        (spaces.MultiDiscrete([3, 2]), np.array([1, 2]), r"Expected: 0 <= obs\[1\] <= 1, actual value: 2"),
        (spaces.Discrete(3, start=1), 0, r"Expected: 1 <= obs <= 3, actual value: 0"),
        (spaces.Discrete(3), 1.0, r"must be an int"),
        (
            spaces.Dict({"a": BOX}),
            {"a": np.zeros(3, np.float32)},
            r"Error while checking key=a: .*actual shape: \(3,\)",
        ),
        (spaces.Dict({"a": BOX}), {"b": np.zeros(2, np.float32)}, r"missing \['a'\], unexpected \['b'\]"),
    ],
)
def test_observations_outside_the_space_are_named(
    space: spaces.Space, wrong: Any, message: str, where: str
) -> None:
    good = space.sample()
    if where == "reset":
        env = ScriptedEnv(space, reset_obs=wrong)
    else:
        env = ScriptedEnv(space, reset_obs=good, step_result=(wrong, 0.0, False, False, {}))
    with pytest.raises(EnvCheckError, match=message) as caught:
        check_env(env, warn=False)
    assert isinstance(caught.value, AssertionError)
    assert f"{where}()" in str(caught.value)


def test_many_out_of_bound_entries_are_counted_and_the_list_is_capped() -> None:
    space = spaces.Box(-1.0, 1.0, (10, 10), np.float32)
    with pytest.raises(AssertionError, match=r"100 invalid indices: .*obs\[0,0\].*; and 80 more") as caught:
        check_env(ScriptedEnv(space, reset_obs=np.full((10, 10), 2.0, np.float32)), warn=False)
    assert "obs[9,9]" not in str(caught.value)


@pytest.mark.parametrize(
    "result",
    [
        (np.zeros(2, np.float32), np.ones(1), False, False, {}),  # reward not a number
        (np.zeros(2, np.float32), 0.0, 1, False, {}),  # terminated an int
        (np.zeros(2, np.float32), 0.0, False, 1.0, {}),  # truncated a float
        (np.zeros(2, np.float32), 0.0, False, False),  # no info
        (np.zeros(2, np.float32), 0.0, False, {}),  # the old API's four values
        (np.zeros(2, np.float32), 0.0, False, False, None),  # info not a dict
    ],
)
def test_step_results_off_the_api_raise_assertion_errors(result: tuple[Any, ...]) -> None:
    with pytest.raises(AssertionError, match=r"step\(\)"):
        check_env(ScriptedEnv(BOX, step_result=result), warn=False)


def test_numpy_scalars_are_accepted_for_reward_and_flags() -> None:
    env = ScriptedEnv(BOX, step_result=(np.zeros(2, np.float32), np.float32(1.0), np.bool_(False), False, {}))
    check_env(env, warn=False)


def test_reset_without_seed_is_a_type_error_and_the_old_reset_an_assertion_error() -> None:
    env = IdentityEnvBox()
    env.reset = lambda: (env.observation_space.sample(), {})  # type: ignore[method-assign]
    with pytest.raises(EnvTypeError, match=r"does not accept a seed") as caught:
        check_env(env)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, AssertionError)
    env.reset = lambda seed=None: env.observation_space.sample()  # type: ignore[method-assign]
    with pytest.raises(AssertionError, match=r"old Gym API"):
        check_env(env)


def test_a_wrong_dict_entry_names_its_key() -> None:
    env = SimpleMultiObsEnv()
    obs, _ = env.reset()
    env.reset = lambda seed=None: ({"img": obs["img"], "vec": obs["img"]}, {})  # type: ignore[method-assign]
    with pytest.raises(AssertionError, match=r"key=vec"):
        check_env(env)


def test_not_an_env_and_not_a_space_are_type_and_assertion_errors() -> None:
    with pytest.raises(TypeError, match=r"gymnasium\.Env"):
        check_env("CartPole-v1")  # type: ignore[arg-type]
    env = ScriptedEnv(BOX)
    env.action_space = "Discrete(2)"  # type: ignore[assignment]
    with pytest.raises(AssertionError, match=r"action_space must be a gymnasium\.spaces\.Space"):
        check_env(env)


@pytest.mark.parametrize(
    ("space", "name"),
    [
        (spaces.Sequence(spaces.Discrete(8)), "Sequence"),
        (spaces.Dict({"seq": spaces.Sequence(spaces.Box(-1, 1, (1,), np.float32))}), "Sequence"),
        (spaces.Tuple((spaces.Sequence(spaces.Box(-1, 1, (1,), np.float32)),)), "Sequence"),
        (spaces.Graph(node_space=spaces.Box(0, 1, (2,)), edge_space=spaces.Box(0, 1, (3,))), "Graph"),
        (spaces.Dict({"g": spaces.Graph(node_space=spaces.Box(0, 1, (2,)), edge_space=None)}), "Graph"),
        (spaces.OneOf((spaces.Discrete(3), spaces.Box(-1, 1, (1,), np.float32))), "OneOf"),
    ],
)
def test_spaces_no_algorithm_takes_warn_and_skip_the_value_checks(space: spaces.Space, name: str) -> None:
    # the env returns something that is not even in the space: the checks of values are skipped
    env = ScriptedEnv(space, reset_obs="not an observation", step_result=("nor this", 0.0, False, False, {}))
    with pytest.warns(UserWarning, match=rf"{name} observation spaces are not supported.*skipped"):
        check_env(env)


@pytest.mark.parametrize(
    ("space", "message"),
    [
        (spaces.Box(0, 255, (64, 64, 3), np.float32), r"looks like an image but has dtype float32"),
        (spaces.Box(-1, 1, (64, 3), np.float32), r"unconventional shape \(64, 3\)"),
        (spaces.MultiDiscrete(np.array([[4, 4], [2, 3]])), r"multi-dimensional MultiDiscrete"),
        (spaces.Dict({"obs": spaces.Discrete(3, start=1)}), r"\(key 'obs'\).*does not start at 0"),
    ],
)
def test_observation_spaces_that_train_badly_warn(space: spaces.Space, message: str) -> None:
    with pytest.warns(UserWarning, match=message):
        check_env(ScriptedEnv(space))


def test_action_spaces_warn_and_unbounded_boxes_raise_after_the_warnings() -> None:
    with pytest.warns(UserWarning, match=r"multi-dimensional MultiDiscrete"):
        check_env(ScriptedEnv(BOX, action_space=spaces.MultiDiscrete(np.array([[4, 4], [2, 3]]))))
    unbounded = spaces.Box(low=-np.inf, high=1, shape=(2,), dtype=np.float32)
    with pytest.raises(EnvCheckError, match=r"finite lower and upper bounds") as caught:
        with pytest.warns(UserWarning, match=r"normalized Box action space"):
            check_env(ScriptedEnv(BOX, action_space=unbounded))
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, ValueError)


def test_non_finite_rewards_warn_as_sb3s_nan_check() -> None:
    env = ScriptedEnv(BOX, step_result=(np.zeros(2, np.float32), float("nan"), False, False, {}))
    with pytest.warns(UserWarning, match=r"NaN or infinite rewards"):
        check_env(env, warn=False)


def test_a_good_env_passes_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(ScriptedEnv(BOX, action_space=spaces.Box(-1.0, 1.0, (2,), np.float32)))
        check_env(
            ScriptedEnv(spaces.Dict({"a": BOX, "b": spaces.Discrete(3)}), action_space=spaces.Discrete(2))
        )


class _GoalKeyedEnv(gym.Env):
    """A Dict env whose keys are HER's; with ``compute_reward`` only when ``goal_env``."""

    def __init__(self, goal_env: bool, batched: bool = True) -> None:
        box = spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = spaces.Dict({"observation": box, "achieved_goal": box, "desired_goal": box})
        self.action_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
        if goal_env:
            self.compute_reward = self._batched if batched else self._one_reward

    def _batched(self, achieved: np.ndarray, desired: np.ndarray, info: Any) -> np.ndarray:
        return -np.linalg.norm(achieved - desired, axis=-1)

    def _one_reward(self, achieved: np.ndarray, desired: np.ndarray, info: Any) -> float:
        return -1.0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: np.ndarray) -> tuple[Any, float, bool, bool, dict]:
        return self.observation_space.sample(), 0.0, False, False, {}


def test_goal_keys_make_a_goal_env_only_with_compute_reward() -> None:
    """SB3 checks compute_reward on envs that have one; HER's key names alone are a plain Dict env."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(_GoalKeyedEnv(goal_env=False), warn=False, skip_render_check=True)
        check_env(_GoalKeyedEnv(goal_env=True), warn=False, skip_render_check=True)
    with pytest.raises(EnvCheckError, match="must work on batches"):
        check_env(_GoalKeyedEnv(goal_env=True, batched=False), warn=False, skip_render_check=True)
