import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from lit_sb3 import PPO, evaluate_policy


class FixedLength(gym.Env):
    """Episode i of each env lasts 2 + (i % 3) steps, reward 1 per step: returns are known exactly."""

    observation_space = gym.spaces.Box(-1, 1, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self.episode = -1

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode += 1
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 1.0, self.t >= 2 + self.episode % 3, False, {}


@pytest.fixture(scope="module")
def model() -> PPO:
    return PPO(env=FixedLength(), n_steps=8, batch_size=8)


def test_counts_whole_episodes_spread_over_sub_envs(model: PPO) -> None:
    env = gym.vector.SyncVectorEnv(
        [FixedLength, FixedLength, FixedLength], autoreset_mode=AutoresetMode.SAME_STEP
    )
    rewards, lengths = evaluate_policy(model, env, n_eval_episodes=7, return_episode_rewards=True)
    assert len(rewards) == 7
    assert rewards == [float(n) for n in lengths]
    # Targets per env are 2, 2, 3 episodes: lengths 2,3 / 2,3 / 2,3,4.
    assert sorted(lengths) == [2, 2, 2, 3, 3, 3, 4]


def test_mean_and_std_with_a_single_env(model: PPO) -> None:
    mean, std = evaluate_policy(model, FixedLength(), n_eval_episodes=3)
    assert mean == pytest.approx(3.0) and std == pytest.approx(np.std([2, 3, 4]))


def test_threshold_and_bad_counts(model: PPO) -> None:
    with pytest.raises(AssertionError, match="below the threshold"):
        evaluate_policy(model, FixedLength(), n_eval_episodes=2, reward_threshold=100)
    with pytest.raises(ValueError, match="n_eval_episodes"):
        evaluate_policy(model, FixedLength(), n_eval_episodes=0)


def test_env_ids_are_built_and_closed() -> None:
    model = PPO(env="CartPole-v1", n_steps=8, batch_size=8)
    rewards, lengths = evaluate_policy(model, "CartPole-v1", n_eval_episodes=2, return_episode_rewards=True)
    assert len(rewards) == len(lengths) == 2 and all(r >= 1 for r in rewards)
