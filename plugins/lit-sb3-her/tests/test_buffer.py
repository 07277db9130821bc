"""HerReplayBuffer on its own: which goals it relabels with, the rewards, the ratio, bookkeeping, files.

The transitions here are labelled so every check can be read off the sample: in episode ``e`` the
observation at step ``t`` is ``[e, t]``, its achieved goal ``[e, t]`` and the next one ``[e, t + 1]``; real
desired goals are ``[-1, -1]``, which no episode achieves, and real rewards are -7, which
``compute_reward`` never returns.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.sdk import DictReplayBuffer, ReplaySamples
from lit_sb3_her import BitFlippingEnv, GoalSelectionStrategy, HerReplayBuffer

BOX = spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float32)
OBS_SPACE = spaces.Dict({"observation": BOX, "achieved_goal": BOX, "desired_goal": BOX})
ACTION_SPACE = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
REAL_GOAL = -1.0
REAL_REWARD = -7.0


class Scorer:
    """Stands in for a goal env: 0 where the goals match, -1 elsewhere; remembers each call's batch size."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def compute_reward(self, achieved: np.ndarray, desired: np.ndarray, info: list) -> np.ndarray:
        assert len(info) == len(achieved) == len(desired)
        self.calls.append(len(achieved))
        return -np.any(achieved != desired, axis=-1).astype(np.float32)


def make_buffer(rows: int = 1000, n_envs: int = 1, **kwargs) -> HerReplayBuffer:
    kwargs.setdefault("env", Scorer())
    return HerReplayBuffer(rows * n_envs, OBS_SPACE, ACTION_SPACE, n_envs=n_envs, seed=0, **kwargs)


def fill(buffer: HerReplayBuffer, lengths: list[list[int]], truncate: bool = False) -> dict[int, int]:
    """Run ``lengths[env]`` episodes in each env (ids ``100 * env + k``); the last entry stays unfinished.

    Returns the length of every finished episode by id. Episodes end by termination, or by truncation
    with ``truncate``.
    """
    n = buffer.n_envs
    episode = [0] * n
    step = [0] * n
    finished: dict[int, int] = {}
    while all(episode[env] < len(lengths[env]) - 1 or step[env] < lengths[env][-1] for env in range(n)):
        ids = [100 * env + episode[env] for env in range(n)]
        obs = np.array([[ids[env], step[env]] for env in range(n)], dtype=np.float32)
        nxt = obs + np.array([0, 1], dtype=np.float32)
        goals = np.full((n, 2), REAL_GOAL, dtype=np.float32)
        ended = np.array([step[env] + 1 == lengths[env][episode[env]] for env in range(n)])
        ended &= np.array([episode[env] < len(lengths[env]) - 1 for env in range(n)])  # last one runs on
        buffer.add(
            {"observation": obs, "achieved_goal": obs, "desired_goal": goals},
            {"observation": nxt, "achieved_goal": nxt, "desired_goal": goals},
            obs[:, 1:2] / 100,
            np.full(n, REAL_REWARD, dtype=np.float32),
            ended & (not truncate),
            ended & truncate,
        )
        for env in range(n):
            if ended[env]:
                finished[ids[env]] = lengths[env][episode[env]]
                episode[env] += 1
                step[env] = 0
            else:
                step[env] += 1
    return finished


def as_numpy(samples) -> dict[str, np.ndarray]:
    return {
        "obs": samples.observations["observation"].numpy(),
        "goal": samples.observations["desired_goal"].numpy(),
        "next_goal": samples.next_observations["desired_goal"].numpy(),
        "next_achieved": samples.next_observations["achieved_goal"].numpy(),
        "reward": samples.rewards.numpy()[:, 0],
        "done": samples.dones.numpy()[:, 0],
    }


@pytest.mark.parametrize("strategy", ["future", "final", "episode", GoalSelectionStrategy.EPISODE])
def test_goals_come_from_the_right_steps_of_the_same_episode(strategy) -> None:
    buffer = make_buffer(n_envs=2, goal_selection_strategy=strategy)
    lengths = fill(buffer, [[3, 7, 5, 4], [6, 2, 8, 3]])
    batch = as_numpy(buffer.sample(4000))
    virtual = batch["goal"][:, 0] != REAL_GOAL
    assert virtual.sum() == int(0.8 * 4000)  # n_sampled_goal=4: 1 - 1/5 of the batch
    episode, t = batch["obs"][virtual, 0], batch["obs"][virtual, 1]
    goal_episode, goal_step = batch["goal"][virtual, 0], batch["goal"][virtual, 1]
    ends = np.array([lengths[int(e)] for e in episode])
    np.testing.assert_array_equal(goal_episode, episode)  # same episode, hence same env
    np.testing.assert_array_equal(batch["next_goal"], batch["goal"])  # next observation relabelled alike
    # Goals are achieved goals of next observations: steps 1..L of an episode of length L.
    name = strategy.key if isinstance(strategy, GoalSelectionStrategy) else strategy
    if name == "final":
        np.testing.assert_array_equal(goal_step, ends)
    elif name == "future":
        assert np.all((goal_step >= t + 1) & (goal_step <= ends))
        assert np.any(goal_step == t + 1) and np.any((goal_step == ends) & (t + 1 < ends))  # both ends
    else:
        assert np.all((goal_step >= 1) & (goal_step <= ends))
        assert np.any(goal_step < t + 1)  # earlier steps too, unlike "future"
    # Every finished episode is drawn from; the unfinished last ones never are.
    assert set(np.unique(batch["obs"][:, 0]).astype(int)) == set(lengths)


def test_rewards_are_recomputed_for_virtual_transitions_only() -> None:
    scorer = Scorer()
    buffer = make_buffer(env=scorer, goal_selection_strategy="episode")
    fill(buffer, [[4, 6, 3, 2]])
    batch = as_numpy(buffer.sample(500))
    virtual = batch["goal"][:, 0] != REAL_GOAL
    assert np.all(batch["reward"][~virtual] == REAL_REWARD)  # real transitions keep the stored reward
    reached = np.all(batch["next_achieved"][virtual] == batch["goal"][virtual], axis=1)
    np.testing.assert_array_equal(batch["reward"][virtual], np.where(reached, 0.0, -1.0))
    assert reached.any() and not reached.all()
    assert scorer.calls == [virtual.sum()]  # one batched call per minibatch


@pytest.mark.parametrize(("n_sampled_goal", "virtual"), [(0, 0), (1, 50), (4, 80), (9, 90)])
def test_real_and_virtual_ratio(n_sampled_goal: int, virtual: int) -> None:
    buffer = make_buffer(n_sampled_goal=n_sampled_goal)
    fill(buffer, [[5, 5, 5]])
    assert buffer.her_ratio == pytest.approx(1 - 1 / (n_sampled_goal + 1))
    goals = as_numpy(buffer.sample(100))["goal"][:, 0]
    assert (goals != REAL_GOAL).sum() == virtual
    assert np.all(goals[: 100 - virtual] == REAL_GOAL)  # real transitions first, then virtual ones


def test_overwritten_episodes_are_forgotten_and_wrapped_ones_kept() -> None:
    buffer = make_buffer(rows=10, goal_selection_strategy="final")
    # Episodes of 3 steps: 14 steps overwrite rows 0-3. Episode 0 (rows 0-2) is gone, episode 1 (rows 3-5)
    # lost its first row, episode 2 (rows 6-8) is intact, episode 3 wraps around (rows 9, 0, 1) and
    # episode 4 (rows 2-3) is still running.
    fill(buffer, [[3, 3, 3, 3, 2]])
    assert buffer.full and buffer.pos == 4
    batch = as_numpy(buffer.sample(1000))
    assert set(np.unique(batch["obs"][:, 0]).astype(int)) == {2, 3}
    virtual = batch["goal"][:, 0] != REAL_GOAL
    final = np.column_stack([batch["obs"][virtual, 0], np.full(virtual.sum(), 3.0)])
    np.testing.assert_array_equal(batch["goal"][virtual], final)


def test_an_episode_longer_than_the_buffer_is_never_sampled() -> None:
    too_long = make_buffer(rows=4)
    fill(too_long, [[6, 0]])  # sampled right after it ends
    with pytest.raises(ConfigurationError, match="no finished episode"):
        too_long.sample(8)
    then_short = make_buffer(rows=4)
    fill(then_short, [[6, 2, 1]])  # episode 1 (2 steps) fits: it is sampled alone
    assert set(np.unique(as_numpy(then_short.sample(50))["obs"][:, 0]).astype(int)) == {1}


def test_sampling_before_any_episode_ends_says_how_to_fix_it() -> None:
    buffer = make_buffer()
    with pytest.raises(RuntimeError, match="empty"):
        buffer.sample(4)
    fill(buffer, [[5]])
    with pytest.raises(ConfigurationError, match="learning_starts"):
        buffer.sample(4)


def test_truncating_ends_the_episodes_in_progress() -> None:
    buffer = make_buffer(n_envs=2, goal_selection_strategy="final")
    fill(buffer, [[2, 3], [3, 2]])  # in progress: episode 1 of env 0 (3 steps), episode 101 of env 1 (2)
    buffer.truncate_last_transition()
    batch = as_numpy(buffer.sample(2000))
    assert set(np.unique(batch["obs"][:, 0]).astype(int)) == {0, 1, 100, 101}
    for episode, length in ((1, 3), (101, 2)):
        rows = batch["obs"][:, 0] == episode
        virtual = rows & (batch["goal"][:, 0] != REAL_GOAL)
        assert np.all(batch["goal"][virtual, 1] == length)  # the truncation point is its final step
        assert np.all(batch["done"][rows] == 0)  # and it bootstraps, being a truncation
    assert np.all(buffer._current_ep_len == 0)


@pytest.mark.parametrize("handle_timeouts", [True, False])
def test_dones_are_the_real_ones_and_timeouts_bootstrap(handle_timeouts: bool) -> None:
    buffer = make_buffer(handle_timeout_termination=handle_timeouts, goal_selection_strategy="final")
    fill(buffer, [[2, 3, 1]], truncate=True)
    batch = as_numpy(buffer.sample(400))
    last_step = batch["obs"][:, 1] + 1 == np.where(batch["obs"][:, 0] == 0, 2, 3)
    np.testing.assert_array_equal(batch["done"], last_step & (not handle_timeouts))
    terminated = make_buffer(handle_timeout_termination=handle_timeouts)
    fill(terminated, [[2, 3, 1]])
    batch = as_numpy(terminated.sample(400))
    last_step = batch["obs"][:, 1] + 1 == np.where(batch["obs"][:, 0] == 0, 2, 3)
    np.testing.assert_array_equal(batch["done"], last_step)  # terminations never bootstrap


def test_save_and_load_keep_bookkeeping_settings_and_sampling(tmp_path: Path) -> None:
    buffer = make_buffer(rows=12, n_envs=2, n_sampled_goal=2, goal_selection_strategy="final")
    fill(buffer, [[4, 3, 5, 6, 2], [2, 5, 4, 4, 3]])  # wraps around, episodes in progress in both envs
    path = buffer.save(tmp_path / "her")
    loaded = HerReplayBuffer.load(path)
    assert loaded.n_sampled_goal == 2 and loaded.goal_selection_strategy is GoalSelectionStrategy.FINAL
    for name in ("ep_start", "ep_length", "_current_ep_start", "_current_ep_len"):
        np.testing.assert_array_equal(getattr(loaded, name), getattr(buffer, name), err_msg=name)
    loaded.set_env(Scorer())
    for left, right in zip(buffer.sample(64), loaded.sample(64)):  # same data, same generator state
        if isinstance(left, dict):
            for key in left:
                torch.testing.assert_close(left[key], right[key])
        elif left is not None:
            torch.testing.assert_close(left, right)
    # Adding to the loaded copy continues the episodes in progress exactly as the original would.
    fill(buffer, [[1, 4, 1]] * 2)
    fill(loaded, [[1, 4, 1]] * 2)
    np.testing.assert_array_equal(loaded.ep_length, buffer.ep_length)


def test_a_file_whose_episode_bookkeeping_does_not_fit_is_refused(tmp_path: Path) -> None:
    buffer = make_buffer(rows=12, n_envs=2)
    fill(buffer, [[4, 3, 5], [2, 5, 4]])
    with np.load(buffer.save(tmp_path / "her"), allow_pickle=False) as data:
        contents = {name: data[name] for name in data.files}
    contents["ep_start"] = np.zeros((5, 3), np.int64)  # three envs' bookkeeping for a two-env buffer
    np.savez(tmp_path / "tampered.npz", **contents)
    with pytest.raises(ConfigurationError, match=r"'ep_start' of shape \(5, 3\)"):
        HerReplayBuffer.load(tmp_path / "tampered.npz")


def test_checkpoint_state_round_trips_with_weights_only(tmp_path: Path) -> None:
    buffer = make_buffer(rows=20, goal_selection_strategy="episode")
    fill(buffer, [[4, 5, 3]])
    torch.save(buffer.state_dict(), tmp_path / "state.pt")
    restored = make_buffer(rows=20)
    restored.load_state_dict(torch.load(tmp_path / "state.pt", weights_only=True))
    assert restored.goal_selection_strategy is GoalSelectionStrategy.EPISODE
    np.testing.assert_array_equal(restored.ep_length, buffer.ep_length)
    np.testing.assert_array_equal(restored._current_ep_len, buffer._current_ep_len)


def test_a_plain_buffer_file_is_refused(tmp_path: Path) -> None:
    plain = DictReplayBuffer(100, OBS_SPACE, ACTION_SPACE)
    fill(plain, [[3, 2]])  # type: ignore[arg-type]
    path = plain.save(tmp_path / "plain")
    with pytest.raises(ConfigurationError, match="without HER's episode bookkeeping"):
        HerReplayBuffer.load(path)
    # The other way round works: a HER file is a DictReplayBuffer file with extra arrays.
    her = make_buffer(rows=100)
    fill(her, [[3, 2]])
    assert DictReplayBuffer.load(her.save(tmp_path / "her")).size() == her.size()


def count_calls(env: gym.Env) -> list[int]:
    calls: list[int] = []
    original = env.compute_reward

    def counted(achieved, desired, info):
        calls.append(len(achieved))
        return original(achieved, desired, info)

    env.compute_reward = counted  # type: ignore[method-assign]
    return calls


def test_compute_reward_comes_from_the_first_env_of_a_vector_env() -> None:
    envs = [BitFlippingEnv(n_bits=4) for _ in range(3)]
    calls = [count_calls(env) for env in envs]
    vector = gym.wrappers.vector.RecordEpisodeStatistics(
        gym.vector.SyncVectorEnv(
            [lambda e=e: e for e in envs], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
        )
    )
    buffer = bit_buffer(vector)
    buffer.sample(10)
    assert calls == [[8], [], []]


def test_async_vector_envs_are_scored_by_a_local_copy() -> None:
    vector = gym.vector.AsyncVectorEnv(
        [lambda: BitFlippingEnv(n_bits=4)] * 2, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    try:
        buffer = bit_buffer(vector)
        samples = buffer.sample(50)
        reached = (samples.next_observations["achieved_goal"] == samples.observations["desired_goal"]).all(1)
        torch.testing.assert_close(samples.rewards[10:, 0], -(~reached[10:]).float())
    finally:
        vector.close()


def bit_buffer(env) -> HerReplayBuffer:
    """A HER buffer over 4-bit episodes of random actions, from one BitFlippingEnv."""
    source = BitFlippingEnv(n_bits=4)
    buffer = HerReplayBuffer(200, source.observation_space, source.action_space, env=env, seed=0)
    obs, _ = source.reset(seed=0)
    for step in range(60):
        action = step % 4
        nxt, reward, terminated, truncated, _ = source.step(action)
        batch = {key: value[None] for key, value in obs.items()}
        buffer.add(
            batch, {k: v[None] for k, v in nxt.items()}, np.array([action]), np.array([reward]),
            np.array([terminated]), np.array([truncated]),
        )  # fmt: skip
        obs = source.reset()[0] if terminated or truncated else nxt
    return buffer


def test_compute_reward_must_be_vectorised() -> None:
    class Scalar:
        def compute_reward(self, achieved, desired, info):
            return -1.0

    buffer = make_buffer(env=Scalar())
    fill(buffer, [[3, 1]])
    with pytest.raises(ConfigurationError, match="vectorised"):
        buffer.sample(10)


def test_without_an_env_sampling_asks_for_one() -> None:
    buffer = make_buffer(env=None)
    fill(buffer, [[3, 1]])
    buffer.sample(1)  # all real: no reward to recompute
    with pytest.raises(ConfigurationError, match="set_env"):
        buffer.sample(10)


def test_copy_info_dict_keeps_infos_per_transition_and_refuses_unsaveable_ones(tmp_path: Path) -> None:
    seen: list[list[dict]] = []

    class Recorder(Scorer):
        def compute_reward(self, achieved: np.ndarray, desired: np.ndarray, info: list) -> np.ndarray:
            seen.append(info)
            return super().compute_reward(achieved, desired, info)

    buffer = make_buffer(n_envs=2, env=Recorder(), copy_info_dict=True)
    for t in range(6):
        obs = np.array([[0, t], [1, t]], dtype=np.float32)
        goals = np.full((2, 2), REAL_GOAL, dtype=np.float32)
        buffer.add(
            {"observation": obs, "achieved_goal": obs, "desired_goal": goals},
            {"observation": obs + 1, "achieved_goal": obs + 1, "desired_goal": goals},
            np.zeros((2, 1), dtype=np.float32),
            np.zeros(2, dtype=np.float32),
            np.array([t % 3 == 2, t % 3 == 2]),
            np.zeros(2, dtype=bool),
            infos=[{"env": 0, "t": np.int64(t)}, {"env": 1, "t": np.int64(t)}],
        )
    batch = buffer.sample(200)
    infos = seen[-1]
    assert len(infos) == int(0.8 * 200)
    obs = batch.observations["observation"].numpy()[-len(infos) :]  # the virtual part, in order
    assert [(i["env"], int(i["t"])) for i in infos] == [(int(o[0]), int(o[1])) for o in obs]
    loaded = HerReplayBuffer.load(buffer.save(tmp_path / "infos"))
    assert loaded.copy_info_dict and loaded.infos[4, 1] == {"env": 1, "t": 4}
    two_envs = {"observation": obs[:2], "achieved_goal": obs[:2], "desired_goal": obs[:2]}
    buffer.add(
        two_envs,
        two_envs,
        np.zeros((2, 1), dtype=np.float32),
        np.zeros(2, dtype=np.float32),
        np.zeros(2, dtype=bool),
        infos=[{"handle": object()}, {}],
    )
    with pytest.raises(ConfigurationError, match=r"infos\['handle'\] of type object"):
        buffer.save(tmp_path / "bad")
    with pytest.raises(ConfigurationError, match="3 info dicts for n_envs=2"):
        buffer.add(
            two_envs,
            two_envs,
            np.zeros((2, 1), dtype=np.float32),
            np.zeros(2, dtype=np.float32),
            np.zeros(2, dtype=bool),
            infos=[{}, {}, {}],
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"optimize_memory_usage": True}, "optimize_memory_usage"),
        ({"n_steps": 3}, "n_steps=3"),
        ({"goal_selection_strategy": "futur"}, "'future', 'final', 'episode'"),
        ({"goal_selection_strategy": 0}, "goal_selection_strategy"),
        ({"n_sampled_goal": -1}, "n_sampled_goal"),
        ({"n_sampled_goal": 2.5}, "n_sampled_goal"),
        ({"env": object()}, "compute_reward"),
        ({"env": gym.make("CartPole-v1")}, "CartPoleEnv has none"),
    ],
)
def test_bad_arguments_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        make_buffer(**kwargs)


@pytest.mark.parametrize(
    ("space", "match"),
    [
        (BOX, "needs Dict observations"),
        (spaces.Dict({"observation": BOX, "achieved_goal": BOX}), "lacks 'desired_goal'"),
        (
            spaces.Dict({"achieved_goal": BOX, "desired_goal": spaces.Box(0, 1, shape=(3,))}),
            "same shape",
        ),
    ],
)
def test_observation_spaces_without_goals_are_refused(space: spaces.Space, match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        HerReplayBuffer(10, space, ACTION_SPACE, env=Scorer())


class _HalvingNormalizer:
    """A stand-in for a VecNormalize: observations (dicts) and rewards halved."""

    def normalize_obs(self, obs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {key: value / 2 for key, value in obs.items()}

    def normalize_reward(self, reward: np.ndarray) -> np.ndarray:
        return reward / 2


def test_sample_is_dict_typed_and_normalized_by_an_env_as_sb3s() -> None:
    buffer = make_buffer(env=Scorer(), goal_selection_strategy="episode")
    fill(buffer, [[4, 6, 3, 2]])
    state = buffer.rng.bit_generator.state
    raw = buffer.sample(64)
    buffer.rng.bit_generator.state = state
    halved = buffer.sample(64, env=_HalvingNormalizer())
    assert type(raw) is buffer.samples_type and buffer.samples_type is not ReplaySamples  # SB3's Dict samples
    torch.testing.assert_close(halved.rewards, raw.rewards / 2)
    for key in ("observation", "desired_goal"):
        torch.testing.assert_close(halved.next_observations[key], raw.next_observations[key].float() / 2)


def test_minibatches_are_sb3s_draws_from_the_same_numpy_seed() -> None:
    """Same stored episodes, same global seed: SB3's HerReplayBuffer and this one give the same minibatch
    (which transitions, which are relabelled, with which future goals), so a seed gives SB3's HER run."""
    sb3_her = pytest.importorskip("stable_baselines3.her.her_replay_buffer")
    from stable_baselines3.common.vec_env import DummyVecEnv

    n_envs, n_bits = 2, 4
    env = DummyVecEnv([lambda: BitFlippingEnv(n_bits=n_bits) for _ in range(n_envs)])
    space = env.observation_space
    kwargs = {"n_envs": n_envs, "n_sampled_goal": 4, "goal_selection_strategy": "future"}
    theirs = sb3_her.HerReplayBuffer(64, space, env.action_space, env=env, **kwargs)  # type: ignore[arg-type]
    ours = HerReplayBuffer(64, space, env.action_space, env=env, **kwargs)
    rng = np.random.default_rng(0)
    obs = {key: rng.integers(0, 2, (n_envs, n_bits), dtype=np.int8) for key in space.spaces}
    for step in range(50):  # episodes of 3 to 7 steps, ending at different steps per env; wraps around
        next_obs = {key: rng.integers(0, 2, (n_envs, n_bits), dtype=np.int8) for key in space.spaces}
        action = rng.integers(0, n_bits, (n_envs, 1))
        reward = -np.ones(n_envs, dtype=np.float32)
        done = (step + 1) % np.array([3, 7]) == 0
        infos = [{"TimeLimit.truncated": bool(d and i == 1)} for i, d in enumerate(done)]
        for buffer in (theirs, ours):
            buffer.add(obs, next_obs, action, reward, done, infos)  # type: ignore[arg-type]
        obs = next_obs
    np.random.seed(3)
    expected = theirs.sample(32)
    np.random.seed(3)
    got = ours.sample(32)
    for key in space.spaces:
        torch.testing.assert_close(got.observations[key], expected.observations[key], msg=key)
        torch.testing.assert_close(got.next_observations[key], expected.next_observations[key], msg=key)
    torch.testing.assert_close(got.actions.long(), expected.actions.long())
    torch.testing.assert_close(got.rewards, expected.rewards)
    torch.testing.assert_close(got.dones, expected.dones)
