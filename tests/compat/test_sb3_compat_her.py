"""SB3's HER surface on lit-sb3: BitFlippingEnv's SB3 variants, HerReplayBuffer over SB3 VecEnvs, HER name."""

from __future__ import annotations

import warnings
from copy import deepcopy

import numpy as np
import pytest

from lit_sb3 import SAC, HerReplayBuffer
from lit_sb3.common.env_checker import check_env
from lit_sb3.common.env_util import make_vec_env
from lit_sb3.common.envs import BitFlippingEnv
from lit_sb3.common.noise import NormalActionNoise


def test_sb3_bit_flipping_goal_is_all_ones_and_the_plugins_is_random() -> None:
    from lit_sb3_her import BitFlippingEnv as PluginEnv

    env = BitFlippingEnv(n_bits=6)
    goals = [env.reset(seed=i)[0]["desired_goal"] for i in range(5)]
    assert all(np.array_equal(goal, np.ones(6)) for goal in goals)
    plugin = PluginEnv(n_bits=6)
    assert len({tuple(plugin.reset(seed=i)[0]["desired_goal"]) for i in range(5)}) > 1


def test_sb3_bit_flipping_episodes_equal_sb3s_draw_for_draw_even_from_a_solved_start() -> None:
    """Seeded alike, every start, reward (to its sign: SB3's success reward is -0.0) and episode end is
    SB3's; with 2 bits a quarter of the starts already equal the goal and are kept, as SB3 keeps them."""
    from stable_baselines3.common.envs import BitFlippingEnv as SB3BitFlippingEnv

    ours, theirs = BitFlippingEnv(n_bits=2), SB3BitFlippingEnv(n_bits=2)
    ours_obs, _ = ours.reset(seed=5)
    theirs_obs, _ = theirs.reset(seed=5)
    actions = np.random.default_rng(0).integers(0, 2, size=200)
    solved_starts = 0
    for action in actions:
        np.testing.assert_array_equal(ours_obs["observation"], theirs_obs["observation"])
        ours_obs, ours_reward, ours_terminated, ours_truncated, _ = ours.step(int(action))
        theirs_obs, theirs_reward, theirs_terminated, theirs_truncated, _ = theirs.step(int(action))
        assert np.copysign(1.0, ours_reward) == np.copysign(1.0, theirs_reward)
        assert (ours_reward, ours_terminated) == (theirs_reward, theirs_terminated)
        assert ours_terminated or ours_truncated == theirs_truncated  # SB3 may flag a success truncated too
        if ours_terminated or ours_truncated:
            ours_obs, _ = ours.reset()
            theirs_obs, _ = theirs.reset()
            solved_starts += int(np.array_equal(ours_obs["observation"], np.ones(2)))
    assert solved_starts > 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"discrete_obs_space": True},
        {"image_obs_space": True},
        {"image_obs_space": True, "channel_first": False},
    ],
)
def test_bit_flipping_encodings_pass_check_env_and_score_batches(kwargs: dict) -> None:
    env = BitFlippingEnv(n_bits=4, **kwargs)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        check_env(env)
    assert not record
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    for bit in np.flatnonzero(env.decode(obs["achieved_goal"]) == 0):
        obs, reward, terminated, _, _ = env.step(int(bit))
    assert terminated and reward == 0.0
    achieved = np.stack([obs["achieved_goal"], env.reset(seed=1)[0]["achieved_goal"]])
    desired = np.stack([obs["desired_goal"]] * 2)
    np.testing.assert_array_equal(env.compute_reward(achieved, desired, [{}, {}]), [0.0, -1.0])


def test_discrete_and_image_observations_together_are_refused() -> None:
    with pytest.raises(Exception, match="not both"):
        BitFlippingEnv(discrete_obs_space=True, image_obs_space=True)


def test_her_buffer_relabels_through_an_sb3_vec_env_and_truncates_with_a_warning() -> None:
    venv = make_vec_env(lambda: BitFlippingEnv(n_bits=4, continuous=True), 2)
    buffer = HerReplayBuffer(100, venv.observation_space, venv.action_space, env=venv, n_envs=2)
    obs = venv.reset()
    for _ in range(3):  # 3 steps of 4-bit episodes: some still running
        actions = np.random.default_rng(0).uniform(-1, 1, size=(2, 4)).astype(np.float32)
        next_obs, rewards, dones, infos = venv.step(actions)
        buffer.add(obs, next_obs, actions, rewards, dones, infos)
        obs = next_obs
    running = (buffer.dones[buffer.pos - 1] == 0).any()
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        buffer.truncate_last_trajectory()
    assert len(record) == int(running)
    assert (buffer._current_ep_start == buffer.pos).all()
    assert (buffer.ep_length[buffer.pos - 1] > 0).all()
    batch = buffer.sample(16)  # relabelled rewards come from the VecEnv's first env
    assert batch.rewards.shape == (16, 1)
    copied = deepcopy(buffer)  # the env (with its locks) stays out of copies
    assert copied.env is None and buffer.env is venv
    np.testing.assert_array_equal(copied.ep_length, buffer.ep_length)


def test_sac_keeps_the_action_noise_it_was_given() -> None:
    noise = NormalActionNoise(np.zeros(1), 0.1 * np.ones(1))
    model = SAC("MultiInputPolicy", BitFlippingEnv(n_bits=3, continuous=True), action_noise=noise)
    assert model.action_noise is noise


def test_her_name_explains_it_is_a_replay_buffer_now() -> None:
    with pytest.raises(ImportError, match="documentation"):
        from lit_sb3 import HER

        HER("MlpPolicy")


def test_check_env_failures_are_assertion_errors_as_in_sb3() -> None:
    from lit_sb3_core.errors import EnvCheckError

    env = BitFlippingEnv(n_bits=4)
    del env.observation_space.spaces["observation"]  # reset() now returns a key the space lacks
    with pytest.raises(AssertionError) as caught:
        check_env(env)
    assert isinstance(caught.value, EnvCheckError) and "observation" in str(caught.value)


@pytest.mark.parametrize("normalize", [False, True])
def test_her_success_share_through_vec_normalize_is_sb3s(normalize: bool) -> None:
    """HER's relabelled rewards through a goal-normalizing VecNormalize: SB3 stores the original goals and
    scores relabelled goals on them, so the share of successes in a minibatch is the raw env's; lit-sb3 draws
    the same minibatch and scores the same rewards (it once scored normalized goals: 74 % against 20.6 %)."""
    sb3 = pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv as SB3DummyVecEnv
    from stable_baselines3.common.vec_env import VecNormalize as SB3VecNormalize

    from lit_sb3.common.vec_env import DummyVecEnv, VecNormalize
    from lit_sb3_core.testing import PointGoalEnv

    def share(sac: type, buffer: type, dummy: type, wrapper: type) -> float:
        env = dummy([PointGoalEnv])
        if normalize:
            env = wrapper(env, norm_obs=True, norm_reward=False)
        model = sac(
            "MultiInputPolicy", env, replay_buffer_class=buffer, learning_starts=10_000, seed=0, device="cpu"
        )
        model.learn(600)
        np.random.seed(1)
        rewards = model.replay_buffer.sample(2000, env=model.get_vec_normalize_env()).rewards.numpy()
        return float((rewards == 0).mean())

    theirs = share(sb3.SAC, sb3.HerReplayBuffer, SB3DummyVecEnv, SB3VecNormalize)
    ours = share(SAC, HerReplayBuffer, DummyVecEnv, VecNormalize)
    assert 0.15 < theirs < 0.3, theirs
    assert ours == pytest.approx(theirs, abs=0.02)
