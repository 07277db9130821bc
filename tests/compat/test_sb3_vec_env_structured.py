"""Issue 24: SB3's VecEnv behaviour that its own test suite checks, on lit-sb3's views over gymnasium.

Dict/Tuple actions given as one per env, per-env reset options, ``has_attr``/``set_attr`` in workers, a
stopped worker, nested observation spaces, and SB3 VecEnvs that return fewer infos on plain steps.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from lit_sb3 import PPO
from lit_sb3.common.monitor import Monitor
from lit_sb3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecFrameStack, VecNormalize
from lit_sb3_core.errors import EnvError, NestedSpaceError

VEC_ENV_CLASSES = [DummyVecEnv, SubprocVecEnv]


class SpaceEnv(gym.Env):
    """Observations and actions in ``space``; records the reset options it got."""

    def __init__(self, space: spaces.Space) -> None:
        self.observation_space = space
        self.action_space = space
        self.current_options: dict[str, Any] | None = None
        self.steps = 0
        self.last_action: Any = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        super().reset(seed=seed)
        self.observation_space.seed(seed)
        self.current_options = options
        self.steps = 0
        return self.observation_space.sample(), {}

    def step(self, action: Any) -> Any:
        self.last_action = action
        self.steps += 1
        return self.observation_space.sample(), 1.0, False, self.steps >= 3, {}


DICT_SPACE = spaces.Dict({"a": spaces.Discrete(3), "b": spaces.Box(-1, 1, (2,), dtype=np.float32)})
TUPLE_SPACE = spaces.Tuple((spaces.Discrete(3), spaces.Box(-1, 1, (2,), dtype=np.float32)))


@pytest.mark.parametrize("vec_env_class", VEC_ENV_CLASSES)
@pytest.mark.parametrize("space", [DICT_SPACE, TUPLE_SPACE], ids=["dict", "tuple"])
def test_structured_actions_are_taken_one_per_env(vec_env_class: Any, space: spaces.Space) -> None:
    venv = vec_env_class([lambda: SpaceEnv(space) for _ in range(3)])
    try:
        venv.reset()
        actions = [space.sample() for _ in range(3)]
        for _ in range(4):  # past an episode end: the reset observation comes back in the same step
            obs, _, dones, _infos = venv.step(actions)
        assert dones.shape == (3,)
        if isinstance(space, spaces.Dict):
            assert set(obs) == {"a", "b"} and obs["b"].shape == (3, 2)
        else:
            assert isinstance(obs, tuple) and obs[1].shape == (3, 2)
        taken = venv.get_attr("last_action")
        for sent, got in zip(actions, taken):
            if isinstance(space, spaces.Dict):
                assert got["a"] == sent["a"] and np.allclose(got["b"], sent["b"])
            else:
                assert got[0] == sent[0] and np.allclose(got[1], sent[1])
    finally:
        venv.close()


def test_the_wrong_number_of_structured_actions_is_refused() -> None:
    venv = DummyVecEnv([lambda: SpaceEnv(DICT_SPACE) for _ in range(2)])
    venv.reset()
    with pytest.raises(ValueError, match="2 envs"):
        venv.step([DICT_SPACE.sample()])
    venv.close()


@pytest.mark.parametrize("vec_env_class", VEC_ENV_CLASSES)
def test_reset_options_per_env(vec_env_class: Any) -> None:
    space = spaces.Box(-1, 1, (2,), dtype=np.float32)
    venv = vec_env_class([lambda: SpaceEnv(space) for _ in range(3)])
    try:
        venv.reset()
        assert venv.get_attr("current_options") == [None] * 3
        options = [{"level": 2}, {"level": 1}, {"level": 1}]
        venv.set_options(options)
        venv.seed(7)
        obs = venv.reset()
        assert venv.get_attr("current_options") == options
        assert obs.shape == (3, 2)
        # the seeds of that reset reached every env, in whichever group it was reset
        reference = [SpaceEnv(space).reset(seed=7 + i)[0] for i in range(3)]
        assert np.allclose(obs, np.stack(reference))
        # an env without options in a mixed list gets none (None or an empty dict), not its neighbours'
        venv.set_options([{}, {"level": 3}, {}])
        venv.reset()
        first, second, third = venv.get_attr("current_options")
        assert not first and second == {"level": 3} and not third
        venv.reset()  # options are used by one reset only
        assert venv.get_attr("current_options") == [None] * 3
    finally:
        venv.close()


@pytest.mark.parametrize("vec_env_class", VEC_ENV_CLASSES)
def test_has_attr_and_set_attr_as_sb3(vec_env_class: Any) -> None:
    space = spaces.Box(-1, 1, (2,), dtype=np.float32)
    venv = vec_env_class([lambda: Monitor(SpaceEnv(space)) for _ in range(2)])
    try:
        assert not venv.has_attr("dummy")  # asked in the workers without ending them
        assert venv.has_attr("current_options")
        venv.set_attr("dummy", 12)
        assert venv.get_attr("dummy") == [12, 12]
        if vec_env_class is DummyVecEnv:
            assert venv.envs[0].dummy == 12  # on the outermost wrapper, as SB3's plain setattr
        venv.set_attr("dummy", 5, indices=1)
        assert venv.get_attr("dummy") == [12, 5]
        venv.reset()
        assert venv.step(np.zeros((2, 2), dtype=np.float32))[0].shape == (2, 2)
    finally:
        venv.close()


def test_a_stopped_worker_is_named() -> None:
    space = spaces.Box(-1, 1, (2,), dtype=np.float32)
    venv = SubprocVecEnv([lambda: SpaceEnv(space) for _ in range(2)])
    try:
        with pytest.raises(AttributeError):
            venv.get_attr("no_such_attribute")  # gymnasium's workers end on an error
        with pytest.raises(EnvError, match="worker of env 0 has stopped"):
            venv.get_attr("steps")
    finally:
        venv.close()


def test_nested_observation_spaces_raise_not_implemented() -> None:
    nested = spaces.Dict({"inner": spaces.Dict({"x": spaces.Box(-1, 1, (2,))}), "y": spaces.Discrete(2)})

    class NestedEnv(SpaceEnv):
        def __init__(self) -> None:
            super().__init__(nested)
            self.action_space = spaces.Discrete(2)

    with pytest.raises(NotImplementedError, match="Nested observation spaces are not supported"):
        DummyVecEnv([NestedEnv])
    with pytest.raises(NestedSpaceError, match="nested Dicts"):
        PPO("MultiInputPolicy", NestedEnv())


def test_frame_stack_channels_order_is_asserted() -> None:
    space = spaces.Box(0, 255, (8, 8, 3), dtype=np.uint8)
    venv = DummyVecEnv([lambda: SpaceEnv(space)])
    with pytest.raises(AssertionError, match="channels_order must be 'first' or 'last'"):
        VecFrameStack(venv, n_stack=2, channels_order="sideways")  # type: ignore[arg-type]
    venv.close()


def test_vec_normalize_space_errors_read_as_sb3s() -> None:
    discrete = DummyVecEnv([lambda: SpaceEnv(spaces.Discrete(3))])
    with pytest.raises(ValueError, match="only supports"):
        VecNormalize(discrete)
    box = DummyVecEnv([lambda: SpaceEnv(spaces.Box(-1, 1, (2,), dtype=np.float32))])
    with pytest.raises(ValueError, match="is applicable only"):
        VecNormalize(box, norm_obs_keys=["key"])
    mixed = DummyVecEnv([lambda: SpaceEnv(DICT_SPACE)])
    with pytest.raises(ValueError, match="explicitly pass the observation keys"):
        VecNormalize(mixed)
    VecNormalize(mixed, norm_obs_keys=["b"])


class SparseInfoVecEnv(VecEnv):
    """An SB3 VecEnv that returns infos only on the step that ends its episodes (as procgen does)."""

    def __init__(self) -> None:
        self.n_steps = 0
        super().__init__(2, spaces.Box(-1, 1, (3,), dtype=np.float32), spaces.Discrete(2))

    def reset(self) -> Any:
        self.n_steps = 0
        return np.zeros((2, 3), dtype=np.float32)

    def step_async(self, actions: np.ndarray) -> None:
        pass

    def step_wait(self) -> Any:
        self.n_steps += 1
        done = self.n_steps % 5 == 0
        infos = (
            [{"terminal_observation": np.ones(3, dtype=np.float32), "TimeLimit.truncated": True}] * 2
            if done
            else []
        )
        return np.zeros((2, 3), dtype=np.float32), np.ones(2, dtype=np.float32), np.full(2, done), infos

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name: str, *args: Any, indices: Any = None, **kwargs: Any) -> list[Any]:
        raise NotImplementedError

    def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]


def test_a_vec_env_with_fewer_infos_on_plain_steps_trains() -> None:
    model = PPO("MlpPolicy", SparseInfoVecEnv(), n_steps=16, batch_size=32, n_epochs=1)
    model.learn(32)
    assert model.num_timesteps == 32
