"""Atari preprocessing the way Stable-Baselines3 users train it (SB3's ``AtariWrapper`` semantics).

The parts are separate gymnasium wrappers with SB3's names, so SB3 code composes them as it always has.
Where gymnasium already has the piece it is used: ``MaxAndSkipObservation`` (frame skip with max-pooling
over the last two frames), ``TransformReward`` and ``FrameStackObservation``. What gymnasium lacks is
written here with SB3's exact semantics: random no-ops at reset (``NoopResetEnv``), a lost life ends the
*training* episode but the game resets only at game over (``EpisodicLifeEnv``), FIRE is pressed after every
reset (``FireResetEnv``), sticky actions drawn from the env's own RNG (``StickyActionEnv``), and SB3's cv2
grayscale and resize (``WarpFrame``).

The order matters for the pixels an agent sees: SB3 max-pools the two last *colour* frames and then
converts the result to grey. Gymnasium's ``AtariPreprocessing`` max-pools two *grey* frames, which gives
other 84×84 observations wherever two colours of one grey level meet (over 2,000 random steps: 63 % of
Seaquest's, 44 % of Road Runner's, 8 % of Pong's, one of Breakout's), so ``AtariWrapper`` composes SB3's
order and gives SB3's frames bit for bit.

``AtariPreset`` is what ``RLEnvDataModule(atari=True)`` applies to every env it builds: gymnasium's
``RecordEpisodeStatistics`` on the raw game (where SB3's ``make_atari_env`` puts ``Monitor``), then
``AtariWrapper``, then a stack of the last 4 frames, channel-first (4×84×84 uint8). The recorder below the
life-loss and reward-clipping wrappers reports whole games with their real scores; the datamodule's
episode statistics and ``evaluate_policy`` read those (``lit_sb3_core.envs.episodes``), which is how SB3
reports Atari returns.

This module imports gymnasium only; ale-py and opencv (the ``atari`` extra) are needed when an Atari env
is built.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.wrappers import (
    FrameStackObservation,
    MaxAndSkipObservation,
    RecordEpisodeStatistics,
    TransformReward,
)

from lit_sb3_core.errors import ConfigurationError
from lit_sb3_core.foundation.checks import check_int, check_number

__all__ = [
    "ATARI_DEFAULTS",
    "AtariPreset",
    "AtariWrapper",
    "ClipRewardEnv",
    "EpisodicLifeEnv",
    "FireResetEnv",
    "MaxAndSkipEnv",
    "NoopResetEnv",
    "StickyActionEnv",
    "WarpFrame",
    "atari_env_kwargs",
    "is_atari_id",
    "parse_atari",
    "require_atari",
]

# SB3's AtariWrapper defaults plus SB3's usual VecFrameStack(n_stack=4): what ``atari=True`` means.
ATARI_DEFAULTS: dict[str, Any] = {
    "noop_max": 30,
    "frame_skip": 4,
    "screen_size": 84,
    "terminal_on_life_loss": True,
    "clip_reward": True,
    "action_repeat_probability": 0.0,
    "frame_stack": 4,
}

_INSTALL_HINT = (
    "Install the Atari extra: pip install 'lit-sb3-core[atari]' (ale-py with its ROMs, and opencv)."
)


def require_atari() -> None:
    """Import ale-py (registering the ``ALE/...`` and ``...NoFrameskip-v4`` ids) and check for opencv."""
    try:
        import ale_py
    except ImportError as exc:
        raise ConfigurationError(
            f"Atari environments need ale-py, which is not installed. {_INSTALL_HINT}"
        ) from exc
    try:
        import cv2  # noqa: F401
    except ImportError as exc:
        raise ConfigurationError(
            f"Atari preprocessing resizes frames with opencv, which is not installed. {_INSTALL_HINT}"
        ) from exc
    gym.register_envs(ale_py)


def is_atari_id(env_id: str) -> bool:
    """True for the ids ale-py registers: ``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``Pong-v4``, ..."""
    if env_id.startswith("ALE/"):
        return True
    spec = gym.registry.get(env_id)
    if spec is None:
        try:
            import ale_py

            gym.register_envs(ale_py)
        except ImportError:
            return "NoFrameskip" in env_id
        spec = gym.registry.get(env_id)
    return spec is not None and str(spec.entry_point).startswith("ale_py")


def atari_env_kwargs(env_id: str, env_kwargs: dict[str, Any], frame_skip: int) -> dict[str, Any]:
    """``gym.make`` kwargs for an Atari id under ``AtariWrapper``.

    ``ALE/*-v5`` ids skip 4 frames inside the emulator (without max-pooling); when the wrapper skips
    frames itself, the emulator must not, so ``frameskip=1`` is added unless the caller set it. The v5
    ids keep their sticky actions (``repeat_action_probability=0.25``), as Machado et al. recommend;
    ``*NoFrameskip-v4`` ids have none, as in SB3's and rl-zoo3's Atari results.
    """
    kwargs = dict(env_kwargs)
    spec = gym.registry.get(env_id)
    if frame_skip > 1 and spec is not None and "frameskip" not in kwargs:
        if spec.kwargs.get("frameskip", 1) != 1:
            kwargs["frameskip"] = 1
    return kwargs


def parse_atari(atari: bool | dict[str, Any] | None) -> dict[str, Any] | None:
    """``atari=`` of ``RLEnvDataModule``: ``False``/``None`` (off), ``True`` (SB3's defaults) or a dict of
    ``AtariWrapper`` options plus ``frame_stack``; returns the full options, or None when off."""
    if atari is None or atari is False:
        return None
    if atari is True:
        return dict(ATARI_DEFAULTS)
    if not isinstance(atari, dict):
        raise ConfigurationError(
            f"atari must be True, False or a dict of AtariWrapper options, got {atari!r}. "
            f"Options: {', '.join(sorted(ATARI_DEFAULTS))}."
        )
    unknown = sorted(set(atari) - set(ATARI_DEFAULTS))
    if unknown:
        raise ConfigurationError(
            f"Unknown Atari option(s) {', '.join(map(repr, unknown))}: use {', '.join(sorted(ATARI_DEFAULTS))}."
        )
    options = {**ATARI_DEFAULTS, **atari}
    for key in ("noop_max", "frame_skip", "screen_size", "frame_stack"):
        value = options[key]
        low = 0 if key in ("noop_max", "frame_stack") else 1
        options[key] = check_int(f"atari option {key}", value, minimum=low)
    check_number(
        "atari option action_repeat_probability",
        options["action_repeat_probability"],
        minimum=0.0,
        maximum=1.0,
        exclusive_maximum=True,
    )
    return options


def _action_meanings(env: gym.Env) -> list[str]:
    meanings = getattr(env.unwrapped, "get_action_meanings", None)
    if meanings is None:
        raise ConfigurationError(
            f"{type(env.unwrapped).__name__} is not an Atari environment (it has no get_action_meanings()): "
            "the Atari wrappers need an ale-py env such as 'ALE/Pong-v5' or 'PongNoFrameskip-v4'."
        )
    return list(meanings())


def _lives(env: gym.Env) -> int:
    return int(env.unwrapped.ale.lives())  # type: ignore[attr-defined]


class StickyActionEnv(gym.Wrapper):
    """With probability ``action_repeat_probability`` repeat the previous action instead of the new one
    (Machado et al. 2018, https://arxiv.org/abs/1709.06009). The first action after a reset is NOOP."""

    def __init__(self, env: gym.Env, action_repeat_probability: float) -> None:
        super().__init__(env)
        if _action_meanings(env)[0] != "NOOP":
            raise ConfigurationError("StickyActionEnv needs action 0 to be NOOP.")
        self.action_repeat_probability = float(action_repeat_probability)
        self._sticky_action = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self._sticky_action = 0
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.np_random.random() >= self.action_repeat_probability:
            self._sticky_action = action
        return self.env.step(self._sticky_action)


class NoopResetEnv(gym.Wrapper):
    """Start each game from a random state: after ``reset`` take between 1 and ``noop_max`` NOOPs (the
    number drawn from the env's RNG), resetting again if the game ends meanwhile."""

    def __init__(self, env: gym.Env, noop_max: int = 30) -> None:
        super().__init__(env)
        if _action_meanings(env)[0] != "NOOP":
            raise ConfigurationError("NoopResetEnv needs action 0 to be NOOP.")
        self.noop_max = int(noop_max)
        self.override_num_noops: int | None = None
        self.noop_action = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        noops = self.override_num_noops
        if noops is None:
            noops = int(self.unwrapped.np_random.integers(1, self.noop_max + 1))
        for _ in range(noops):
            obs, _, terminated, truncated, info = self.env.step(self.noop_action)
            if terminated or truncated:
                obs, info = self.env.reset(**kwargs)
        return obs, info


class MaxAndSkipEnv(MaxAndSkipObservation):
    """Repeat each action ``skip`` times, sum the rewards and return the pixel-wise maximum of the last two
    frames (Atari sprites flicker between frames). Gymnasium's ``MaxAndSkipObservation`` under SB3's name."""

    def __init__(self, env: gym.Env, skip: int = 4) -> None:
        super().__init__(env, skip=skip)


class EpisodicLifeEnv(gym.Wrapper):
    """A lost life ends the episode (``terminated=True``), but the game itself is reset only at game over.

    DeepMind's DQN trick for value estimation. ``reset`` after a lost life takes one NOOP step instead of
    resetting, so every state of the game stays reachable. Evaluations should count whole games: an
    episode recorder below this wrapper (``RLEnvDataModule(atari=True)`` puts one there) sees them.
    """

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.lives = 0
        self.was_real_done = True

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.was_real_done = bool(terminated or truncated)
        lives = _lives(self.env)
        # Some games (Qbert) sit at 0 lives for a few frames before game over: only a drop to a positive
        # count is a lost life, so the game-over step is reported once, by the game itself.
        if 0 < lives < self.lives:
            terminated = True
        self.lives = lives
        return obs, reward, terminated, truncated, info

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        if self.was_real_done:
            obs, info = self.env.reset(**kwargs)
        else:
            obs, _, terminated, truncated, info = self.env.step(0)
            if terminated or truncated:  # the NOOP itself can end the game
                obs, info = self.env.reset(**kwargs)
        self.lives = _lives(self.env)
        return obs, info


class FireResetEnv(gym.Wrapper):
    """Press FIRE (then action 2) after every reset, for games that stand still until the player fires
    (Breakout's ball is served by FIRE). Under ``EpisodicLifeEnv`` this happens after every lost life."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        meanings = _action_meanings(env)
        if len(meanings) < 3 or meanings[1] != "FIRE":
            raise ConfigurationError(
                f"FireResetEnv needs action 1 to be FIRE and at least 3 actions; this game has {meanings}."
            )

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        self.env.reset(**kwargs)
        obs, _, terminated, truncated, _ = self.env.step(1)
        if terminated or truncated:
            self.env.reset(**kwargs)
        obs, _, terminated, truncated, _ = self.env.step(2)
        if terminated or truncated:
            obs, _ = self.env.reset(**kwargs)
        return obs, {}


class WarpFrame(gym.ObservationWrapper):
    """RGB frames to ``height``×``width``×1 grayscale with opencv (``COLOR_RGB2GRAY``, ``INTER_AREA``), as
    the Nature DQN paper and SB3 do. ``channel_axis=False`` drops the trailing axis (``height``×``width``),
    which ``FrameStackObservation`` turns into the channel-first stack convolutions expect."""

    def __init__(self, env: gym.Env, width: int = 84, height: int = 84, *, channel_axis: bool = True) -> None:
        super().__init__(env)
        if not isinstance(env.observation_space, spaces.Box) or len(env.observation_space.shape) != 3:
            raise ConfigurationError(f"WarpFrame needs RGB image observations, got {env.observation_space}.")
        self.width, self.height = int(width), int(height)
        self.channel_axis = bool(channel_axis)
        shape = (self.height, self.width, 1) if self.channel_axis else (self.height, self.width)
        self.observation_space = spaces.Box(low=0, high=255, shape=shape, dtype=env.observation_space.dtype)

    def observation(self, frame: np.ndarray) -> np.ndarray:
        import cv2

        frame = cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)
        frame = cv2.resize(frame, (self.width, self.height), interpolation=cv2.INTER_AREA)
        return frame[:, :, None] if self.channel_axis else frame


def _sign(reward: SupportsFloat) -> float:
    return float(np.sign(float(reward)))


class ClipRewardEnv(TransformReward):
    """Rewards binned to {-1, 0, +1} by their sign, so one learning rate fits every game."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env, _sign)


class AtariWrapper(gym.Wrapper):
    """SB3's Atari 2600 preprocessing: no-op reset, frame skip with max-pooling, a lost life ends the
    episode, FIRE on reset, 84×84 grayscale, rewards clipped to their sign, optional sticky actions.

    The wrappers above in SB3's order, so the frames, rewards and ends are SB3's for the same seed and
    actions. Use it with an env that does not skip frames itself (``*NoFrameskip-v4``, or ``ALE/*-v5`` made
    with ``frameskip=1``).

    Args:
        env: an ale-py environment.
        noop_max: at most this many NOOPs after a reset (0: none).
        frame_skip: the agent acts every ``frame_skip`` frames (1: every frame).
        screen_size: side of the square observation.
        terminal_on_life_loss: end the episode when a life is lost (``EpisodicLifeEnv``).
        clip_reward: clip rewards to their sign (``ClipRewardEnv``).
        action_repeat_probability: sticky-action probability (``StickyActionEnv``; 0: off).
        channel_axis: keep SB3's trailing channel axis (``84×84×1``); ``False`` gives ``84×84``, which
            ``FrameStackObservation`` turns into the channel-first ``k×84×84`` convolutions expect.
    """

    def __init__(
        self,
        env: gym.Env,
        noop_max: int = 30,
        frame_skip: int = 4,
        screen_size: int = 84,
        terminal_on_life_loss: bool = True,
        clip_reward: bool = True,
        action_repeat_probability: float = 0.0,
        channel_axis: bool = True,
    ) -> None:
        meanings = _action_meanings(env)
        if frame_skip > 1 and getattr(env.unwrapped, "_frameskip", 1) != 1:
            raise ConfigurationError(
                f"{env.spec.id if env.spec else 'This env'} already skips frames inside the emulator "
                f"(frameskip={env.unwrapped._frameskip}), and AtariWrapper would skip frame_skip={frame_skip} "  # type: ignore[attr-defined]
                "more. Make the env with frameskip=1 (env_kwargs={'frameskip': 1}), use a *NoFrameskip-v4 id, "
                "or set frame_skip=1."
            )
        if action_repeat_probability > 0.0:
            env = StickyActionEnv(env, action_repeat_probability)
        if noop_max > 0:
            env = NoopResetEnv(env, noop_max=noop_max)
        if frame_skip > 1:
            env = MaxAndSkipEnv(env, skip=frame_skip)
        if terminal_on_life_loss:
            env = EpisodicLifeEnv(env)
        if "FIRE" in meanings:
            env = FireResetEnv(env)
        env = WarpFrame(env, width=screen_size, height=screen_size, channel_axis=channel_axis)
        if clip_reward:
            env = ClipRewardEnv(env)
        super().__init__(env)


class AtariPreset:
    """``env -> env``: an episode recorder on the raw game, ``AtariWrapper``, and a channel-first stack of
    the last ``frame_stack`` frames (zero-padded after a reset, as SB3's ``VecFrameStack``).

    A plain picklable object, so async workers can build it. ``options`` are ``AtariWrapper``'s plus
    ``frame_stack`` (see ``ATARI_DEFAULTS``).
    """

    def __init__(self, **options: Any) -> None:
        self.options = parse_atari(options or True) or {}

    def __call__(self, env: gym.Env) -> gym.Env:
        options = dict(self.options)
        frame_stack = options.pop("frame_stack")
        env = RecordEpisodeStatistics(env)
        env = AtariWrapper(env, channel_axis=frame_stack == 0, **options)
        if frame_stack > 0:
            env = FrameStackObservation(env, frame_stack, padding_type="zero")
        return env

    def __repr__(self) -> str:
        return f"AtariPreset({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"
