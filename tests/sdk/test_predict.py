import numpy as np
import pytest

from lit_sb3 import PPO


def test_single_and_batched_observations() -> None:
    model = PPO(env="CartPole-v1", seed=0, n_steps=8, batch_size=8)
    action, state = model.predict(np.zeros(4, np.float32), deterministic=True)
    assert np.ndim(action) == 0 and state is None
    actions, _ = model.predict(np.zeros((5, 4), np.float32), deterministic=True)
    assert actions.shape == (5,) and actions.dtype == np.int64
    again, _ = model.predict(np.zeros((5, 4), np.float32), deterministic=True)
    np.testing.assert_array_equal(actions, again)


@pytest.mark.parametrize("shape", [(3,), (2, 5), (1, 2, 4), ()])
def test_wrong_shapes_name_the_expected_ones(shape: tuple) -> None:
    model = PPO(env="CartPole-v1", n_steps=8, batch_size=8)
    with pytest.raises(ValueError, match=r"expected \(4,\) for one observation or \(n_envs, 4\)"):
        model.predict(np.zeros(shape))


def test_box_actions_are_clipped_to_the_bounds() -> None:
    model = PPO(env="Pendulum-v1", n_steps=8, batch_size=8, policy_kwargs={"log_std_init": 3.0})
    actions, _ = model.predict(np.zeros((200, 3), np.float32))
    assert actions.shape == (200, 1)
    assert actions.min() >= -2.0 and actions.max() <= 2.0 and np.abs(actions).max() == 2.0


def test_discrete_observations_are_one_hot_encoded() -> None:
    model = PPO(env="FrozenLake-v1", n_steps=8, batch_size=8)
    action, _ = model.predict(3)
    assert 0 <= int(action) < 4
    actions, _ = model.predict(np.array([0, 5, 15]))
    assert actions.shape == (3,)


def test_predict_before_the_policy_exists_explains_why() -> None:
    with pytest.raises(RuntimeError, match="env="):
        PPO().predict(np.zeros(4))
