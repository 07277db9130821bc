"""Atari preprocessing: SB3's AtariWrapper semantics, whole-game statistics, every CnnPolicy on a real game."""

from __future__ import annotations

import itertools

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("ale_py", reason="the atari extra is not installed: pip install 'lit-sb3-core[atari]'")
pytest.importorskip("cv2", reason="the atari extra is not installed: pip install 'lit-sb3-core[atari]'")

from lit_sb3_core import RLEnvDataModule, RLTrainer, evaluate_policy, make_algo
from lit_sb3_core.envs.atari import (
    AtariPreset,
    AtariWrapper,
    ClipRewardEnv,
    EpisodicLifeEnv,
    FireResetEnv,
    MaxAndSkipEnv,
    NoopResetEnv,
    StickyActionEnv,
    WarpFrame,
    atari_env_kwargs,
    parse_atari,
    require_atari,
)
from lit_sb3_core.errors import ConfigurationError

require_atari()


class ActionLog(gym.Wrapper):
    """Records every action that reaches the wrapped env, and its resets."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.log: list[object] = []

    def reset(self, **kwargs):
        self.log.append("reset")
        return self.env.reset(**kwargs)

    def step(self, action):
        self.log.append(int(action))
        return self.env.step(action)


def _trainer(steps: int) -> RLTrainer:
    return RLTrainer(
        max_steps=steps,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )


_OTHER_OPTIONS = {
    "noop_max": 0,
    "frame_skip": 1,
    "screen_size": 64,
    "terminal_on_life_loss": False,
    "clip_reward": False,
    "action_repeat_probability": 0.25,
}


@pytest.mark.parametrize(
    ("game", "options"),
    [
        ("BreakoutNoFrameskip-v4", {}),
        ("PongNoFrameskip-v4", {}),
        ("RoadRunnerNoFrameskip-v4", {}),
        ("SeaquestNoFrameskip-v4", {}),
        ("SeaquestNoFrameskip-v4", _OTHER_OPTIONS),
    ],
)
def test_atari_wrapper_steps_exactly_as_sb3s(game: str, options: dict[str, object]) -> None:
    """Same seed, same actions: SB3's AtariWrapper's frames bit for bit, and its rewards, terminations and
    truncations. Pong, Road Runner and Seaquest have pooled frames where max-pooling grey frames (gymnasium's
    ``AtariPreprocessing``) differs from SB3's max over colour frames converted afterwards."""
    sb3_atari = pytest.importorskip("stable_baselines3.common.atari_wrappers")
    theirs, ours = sb3_atari.AtariWrapper(gym.make(game), **options), AtariWrapper(gym.make(game), **options)
    obs_theirs, _ = theirs.reset(seed=3)
    obs_ours, _ = ours.reset(seed=3)
    side = options.get("screen_size", 84)
    assert obs_ours.shape == obs_theirs.shape == (side, side, 1) and obs_ours.dtype == np.uint8
    assert np.array_equal(obs_ours, obs_theirs)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(600):
        action = int(rng.integers(theirs.action_space.n))
        step_theirs, step_ours = theirs.step(action), ours.step(action)
        assert step_ours[1:4] == step_theirs[1:4]
        assert np.array_equal(step_ours[0], step_theirs[0])
        if step_theirs[2] or step_theirs[3]:
            ends += 1
            obs_theirs, _ = theirs.reset()
            obs_ours, _ = ours.reset()
            assert np.array_equal(obs_ours, obs_theirs)
    if game.startswith("Breakout"):
        assert ends >= 3  # lost lives ended episodes along the way


def test_a_lost_life_ends_the_episode_but_not_the_game() -> None:
    env = EpisodicLifeEnv(MaxAndSkipEnv(ActionLog(gym.make("BreakoutNoFrameskip-v4")), skip=4))
    log = env.env.env.log
    env.reset(seed=0)
    assert env.lives == 5
    while True:
        _, _, terminated, _, _ = env.step(1)  # FIRE serves; the paddle stays put and misses
        if terminated:
            break
    assert env.lives == 4 and not env.was_real_done
    log.clear()
    env.reset()
    assert log == [0, 0, 0, 0]  # one NOOP step (4 frames), no reset of the game
    assert env.lives == 4


def test_fire_reset_and_noop_reset_take_their_actions() -> None:
    logged = ActionLog(gym.make("BreakoutNoFrameskip-v4"))
    noop = NoopResetEnv(logged, noop_max=30)
    noop.override_num_noops = 7
    env = FireResetEnv(noop)
    env.reset(seed=0)
    assert logged.log == ["reset", 0, 0, 0, 0, 0, 0, 0, 1, 2]
    logged.log.clear()
    noop.override_num_noops = None
    noop.reset(seed=1)
    assert 1 <= len(logged.log) - 1 <= 30 and set(logged.log[1:]) == {0}
    with pytest.raises(ConfigurationError, match="FIRE"):
        FireResetEnv(gym.make("FreewayNoFrameskip-v4"))


def test_clip_reward_warp_frame_and_sticky_actions() -> None:
    env = ClipRewardEnv(gym.make("BreakoutNoFrameskip-v4"))
    assert [env.reward(r) for r in (7.0, 0.0, -3.0)] == [1.0, 0.0, -1.0]
    warped = WarpFrame(gym.make("PongNoFrameskip-v4"), width=84, height=84)
    obs, _ = warped.reset(seed=0)
    assert obs.shape == (84, 84, 1) and warped.observation_space.shape == (84, 84, 1)
    flat = WarpFrame(gym.make("PongNoFrameskip-v4"), channel_axis=False)
    assert flat.observation_space.shape == (84, 84) and np.array_equal(flat.reset(seed=0)[0], obs[:, :, 0])
    logged = ActionLog(gym.make("BreakoutNoFrameskip-v4"))
    sticky = StickyActionEnv(logged, action_repeat_probability=0.9)
    sticky.reset(seed=0)
    for t in range(60):
        sticky.step(2 + t % 2)  # the agent alternates; the env mostly repeats the previous action
    taken = logged.log[1:]
    assert taken[0] in (0, 2) and sum(a != b for a, b in itertools.pairwise(taken)) < 25


def test_preset_stacks_four_channel_first_frames_zero_padded() -> None:
    env = AtariPreset()(gym.make("PongNoFrameskip-v4"))
    assert env.observation_space.shape == (4, 84, 84) and env.observation_space.dtype == np.uint8
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 84, 84) and not obs[:3].any() and obs[3].any()
    obs, *_ = env.step(0)
    assert not obs[:2].any() and obs[2].any() and obs[3].any()
    flat = AtariPreset(frame_stack=0)(gym.make("PongNoFrameskip-v4"))
    assert flat.observation_space.shape == (84, 84, 1)  # SB3's layout, transposed by the policy


def test_atari_options_are_checked() -> None:
    assert parse_atari(False) is None and parse_atari(True)["frame_stack"] == 4
    assert parse_atari({"terminal_on_life_loss": False})["terminal_on_life_loss"] is False
    with pytest.raises(ConfigurationError, match="Unknown Atari option"):
        parse_atari({"frameskip": 4})
    with pytest.raises(ConfigurationError, match="frame_stack"):
        parse_atari({"frame_stack": -1})
    with pytest.raises(ConfigurationError, match="True, False or a dict"):
        RLEnvDataModule(train_env="PongNoFrameskip-v4", atari="yes")
    with pytest.raises(ConfigurationError, match="not an Atari environment"):
        AtariWrapper(gym.make("CartPole-v1"))
    with pytest.raises(ConfigurationError, match="frameskip=1"):
        AtariWrapper(gym.make("ALE/Pong-v5"))


def test_v5_ids_are_made_without_emulator_frameskip() -> None:
    assert atari_env_kwargs("ALE/Pong-v5", {}, frame_skip=4) == {"frameskip": 1}
    assert atari_env_kwargs("ALE/Pong-v5", {"frameskip": 2}, frame_skip=4) == {"frameskip": 2}
    assert atari_env_kwargs("PongNoFrameskip-v4", {}, frame_skip=4) == {}
    dm = RLEnvDataModule(train_env="ALE/Pong-v5", atari=True, seed=0)
    env = dm.get_env("fit")
    assert env.single_observation_space.shape == (4, 84, 84)
    assert env.unwrapped.envs[0].unwrapped._frameskip == 1
    dm.close()


def test_training_statistics_and_evaluation_count_whole_games() -> None:
    """Episodes end at every lost life for training, but ep_rew_mean and evaluate_policy report whole
    games with unclipped returns, lengths in frames, as SB3's Monitor-based numbers do."""
    dm = RLEnvDataModule(train_env="BreakoutNoFrameskip-v4", n_envs=2, atari=True, seed=0)
    env = dm.get_env("fit")
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    dones = 0
    while env.episode_count < 2:
        _, _, terminated, truncated, _ = env.step(rng.integers(4, size=2))
        dones += int(np.sum(terminated | truncated))
    assert dones >= 4 * env.episode_count  # every game is 5 lives
    assert all(length > 100 for length in env.length_queue)  # frames, not agent steps

    class RandomAgent:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return rng.integers(4, size=len(obs)), None

    eval_env = dm.get_env("test")
    life_ends = []
    rewards, lengths = evaluate_policy(
        RandomAgent(),
        eval_env,
        n_eval_episodes=1,
        return_episode_rewards=True,
        callback=lambda local, _: life_ends.append(bool(local["dones"][0])),
    )
    assert len(rewards) == 1 and sum(life_ends) >= 5  # five lost lives, one game
    assert lengths[0] > 4 * len(life_ends) - 10  # the recorder counts frames
    dm.close()


def test_atari_needs_envs_it_can_wrap() -> None:
    vector = gym.vector.SyncVectorEnv(
        [lambda: gym.make("PongNoFrameskip-v4")], autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    with pytest.raises(ConfigurationError, match="cannot wrap a VectorEnv"):
        RLEnvDataModule(train_env=vector, atari=True).get_env("fit")
    vector.close()


_CNN_CASES = {
    "ppo": {"policy": "CnnPolicy", "n_steps": 16, "batch_size": 32, "n_epochs": 1},
    "a2c": {"policy": "CnnPolicy", "n_steps": 8},
    "trpo": {
        "policy": "CnnPolicy",
        "n_steps": 16,
        "batch_size": 32,
        "n_critic_updates": 1,
        "cg_max_steps": 2,
    },
    "recurrent_ppo": {"policy": "CnnLstmPolicy", "n_steps": 16, "batch_size": 32, "n_epochs": 1},
    "dqn": {"policy": "CnnPolicy", "buffer_size": 64, "learning_starts": 16, "optimize_memory_usage": True},
    "qrdqn": {"policy": "CnnPolicy", "buffer_size": 64, "learning_starts": 16, "optimize_memory_usage": True},
}


def _first_byte_is_uint8(buffer: object) -> bool:
    observations = buffer.observations  # type: ignore[attr-defined]
    if isinstance(observations, dict):
        observations = next(iter(observations.values()))
    return str(observations.dtype) in ("uint8", "torch.uint8")


@pytest.mark.parametrize("algo", sorted(_CNN_CASES))
def test_every_cnn_policy_trains_on_a_real_game_with_uint8_storage(algo: str) -> None:
    kwargs = dict(_CNN_CASES[algo])
    if algo in ("dqn", "qrdqn"):
        kwargs["replay_buffer_kwargs"] = {"handle_timeout_termination": False}
    model = make_algo(algo, seed=0, **kwargs)
    dm = RLEnvDataModule(train_env="PongNoFrameskip-v4", n_envs=2, atari=True)
    _trainer(64).fit(model, datamodule=dm)
    assert model.num_timesteps >= 64
    buffer = getattr(model, "replay_buffer", None) or model.rollout
    assert _first_byte_is_uint8(buffer)  # frames stay bytes; the policy scales them on its device
    if algo in ("dqn", "qrdqn"):
        assert buffer.next_observations is None  # optimize_memory_usage stores each frame stack once
    action, _ = model.predict(dm.get_env("fit").observation_space.sample(), deterministic=True)
    assert action.shape == (2,)
    dm.close()


def test_maskable_ppo_cnn_policy_on_a_game_with_masks() -> None:
    from lit_sb3_ppo_mask import ActionMasker

    def no_fire(env: gym.Env) -> np.ndarray:
        return np.array([True, False, True, True, True, True])  # Pong: FIRE masked out

    model = make_algo("maskable_ppo", policy="CnnPolicy", seed=0, n_steps=16, batch_size=32, n_epochs=1)
    dm = RLEnvDataModule(
        train_env="PongNoFrameskip-v4", n_envs=2, atari=True, wrappers=[lambda e: ActionMasker(e, no_fire)]
    )
    _trainer(32).fit(model, datamodule=dm)
    assert model.num_timesteps >= 32
    assert not (model.rollout.actions == 1).any()  # no masked action was ever taken
    dm.close()


def test_sb3_names_are_views_of_these_wrappers() -> None:
    from lit_sb3.common import atari_wrappers

    assert atari_wrappers.AtariWrapper is AtariWrapper and atari_wrappers.EpisodicLifeEnv is EpisodicLifeEnv
