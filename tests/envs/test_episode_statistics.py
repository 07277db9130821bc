"""One reader of training-episode statistics, and SB3's ``stats_window_size`` working for every algorithm:
``ep_info_buffer`` keeps that many episodes and ``rollout/ep_rew_mean`` averages over the last that many."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from lit_sb3 import A2C, DQN, PPO, SAC
from lit_sb3_core.envs.episodes import EpisodeStatistics, RecordSameStepEpisodeStatistics
from lit_sb3_core.errors import ConfigurationError


def _recorded_env() -> Any:
    env = RecordEpisodeStatistics(
        gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")]), buffer_length=100
    )
    env.return_queue.extend(np.arange(20, dtype=np.float64))
    env.length_queue.extend(np.arange(20))
    env.time_queue.extend(np.zeros(20))
    return env


def test_the_reader_finds_the_recorder_through_wrappers_and_windows_it() -> None:
    env = gym.wrappers.vector.NormalizeReward(_recorded_env())  # the recorder is not the outermost wrapper
    stats = EpisodeStatistics(env, window=5)
    assert stats.returns == [15.0, 16.0, 17.0, 18.0, 19.0]  # the newest five
    assert [info["r"] for info in stats.infos()] == stats.returns and stats.infos().maxlen == 5
    # the recorder itself now keeps five, so training appends into a five-episode window
    assert EpisodeStatistics(env).window == 5
    stats.clear()
    assert EpisodeStatistics(env).returns == []


def test_restored_episodes_keep_every_episode_and_its_own_time() -> None:
    """Episodes a checkpoint puts back have no time; ep_info_buffer still lists them all, and the episodes
    recorded after them keep theirs (the time queue stays beside the others)."""
    env = _recorded_env()
    env.time_queue.clear()
    env.time_queue.extend([1.5] * 3)  # a recorder whose times cover only its newest episodes
    infos = list(EpisodeStatistics(env).infos())
    assert len(infos) == 20 and [info["t"] for info in infos[-4:]] == [0.0, 1.5, 1.5, 1.5]
    stats = EpisodeStatistics(env)
    stats.extend([100.0, 101.0], [5, 6])
    env.return_queue.append(102.0)
    env.length_queue.append(7)
    env.time_queue.append(2.5)
    infos = list(stats.infos())
    assert len(infos) == 23
    assert [(info["r"], info["t"]) for info in infos[-3:]] == [(100.0, 0.0), (101.0, 0.0), (102.0, 2.5)]


def _same_step_envs(n_envs: int) -> gym.vector.SyncVectorEnv:
    fns = [lambda: gym.make("CartPole-v1", max_episode_steps=15) for _ in range(n_envs)]
    return gym.vector.SyncVectorEnv(fns, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)


def test_the_same_step_recorder_records_what_gymnasiums_does() -> None:
    """Same infos, queues and counters as gymnasium's recorder over terminated and truncated episodes."""
    ours = RecordSameStepEpisodeStatistics(_same_step_envs(3), buffer_length=7)
    theirs = RecordEpisodeStatistics(_same_step_envs(3), buffer_length=7)
    ours.reset(seed=3)
    theirs.reset(seed=3)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(120):
        actions = rng.integers(0, 2, size=3)
        *_, our_infos = ours.step(actions)
        *_, their_infos = theirs.step(actions)
        assert ("episode" in our_infos) == ("episode" in their_infos)
        if "episode" in their_infos:
            ended += 1
            np.testing.assert_array_equal(our_infos["_episode"], their_infos["_episode"])
            for key in ("r", "l"):
                np.testing.assert_array_equal(our_infos["episode"][key], their_infos["episode"][key])
    assert ended > 5
    assert ours.episode_count == theirs.episode_count
    assert list(ours.return_queue) == list(theirs.return_queue) and ours.return_queue.maxlen == 7
    assert list(ours.length_queue) == list(theirs.length_queue)
    assert len(ours.time_queue) == len(theirs.time_queue)
    np.testing.assert_array_equal(ours.episode_returns, theirs.episode_returns)
    np.testing.assert_array_equal(ours.episode_lengths, theirs.episode_lengths)


def test_the_same_step_recorder_refuses_next_step_envs() -> None:
    with pytest.raises(ValueError, match="SAME_STEP"):
        RecordSameStepEpisodeStatistics(gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")]))


def test_an_env_without_a_recorder_reads_as_no_episodes() -> None:
    stats = EpisodeStatistics(gym.vector.SyncVectorEnv([lambda: gym.make("CartPole-v1")]), window=5)
    assert (stats.returns, stats.count, len(stats.infos())) == ([], 0, 0)


@pytest.mark.parametrize(
    ("cls", "kwargs", "env_id", "steps"),
    [
        (PPO, {"n_steps": 256, "batch_size": 64, "n_epochs": 1}, "CartPole-v1", 512),
        (A2C, {"n_steps": 64}, "CartPole-v1", 512),
        (DQN, {"learning_starts": 100, "buffer_size": 1000, "train_freq": 16}, "CartPole-v1", 512),
        (
            SAC,
            {
                "learning_starts": 50,
                "batch_size": 16,
                "buffer_size": 1000,
                "policy_kwargs": {"net_arch": [16]},
            },
            "Pendulum-v1",
            1000,
        ),
    ],
    ids=["ppo", "a2c", "dqn", "sac"],
)
def test_stats_window_size_sets_ep_info_buffer_and_ep_rew_mean(
    cls: type, kwargs: dict[str, Any], env_id: str, steps: int
) -> None:
    model = cls("MlpPolicy", env_id, stats_window_size=5, seed=0, **kwargs)
    model.learn(steps)
    buffer = model.ep_info_buffer
    assert buffer.maxlen == 5 and len(buffer) == 5  # more than five episodes finished
    assert model.ep_success_buffer.maxlen == 5
    last_five = np.mean([info["r"] for info in buffer])
    assert model.last_metrics["rollout/ep_rew_mean"] == pytest.approx(last_five)
    assert model.last_metrics["rollout/ep_len_mean"] == pytest.approx(np.mean([info["l"] for info in buffer]))


def test_a_bad_stats_window_size_is_refused() -> None:
    model = PPO("MlpPolicy", "CartPole-v1", stats_window_size=0, n_steps=32, batch_size=32)
    with pytest.raises(ConfigurationError, match="stats_window_size"):
        model.learn(64)
