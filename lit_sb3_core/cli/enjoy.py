"""``lit-sb3 enjoy MODEL.zip --env ID``: watch a saved model play, in a window or recorded to video.

Videos are written by gymnasium's ``RecordVideo`` (which needs moviepy) from ``rgb_array`` frames, so they
work on a headless machine; the window needs a display (and pygame for the classic-control envs).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError
from lit_sb3_core.cli.evaluate import add_play_arguments, check_model_path, load_model_file, parse_env_kwargs

__all__ = ["configure", "run_enjoy"]

_VIDEO_HINT = "pip install moviepy (or pip install 'lit-sb3-core[video]')"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run a saved model and show it: in a window (render_mode='human'), or recorded to one mp4 per "
        "episode with --video DIR (render_mode='rgb_array', works without a display)."
    )
    parser.epilog = (
        "examples:\n  lit-sb3 enjoy ppo_cartpole.zip --env CartPole-v1\n"
        "  lit-sb3 enjoy ppo_cartpole.zip --env CartPole-v1 --video videos/ --episodes 3"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    add_play_arguments(parser, episodes=1)
    parser.add_argument(
        "--video", default=None, metavar="DIR", help="record mp4 videos into DIR instead of opening a window"
    )
    parser.add_argument(
        "--max-steps", type=int, default=10_000, help="stop an episode after this many steps (default 10000)"
    )


def run_enjoy(args: argparse.Namespace) -> int:
    check_model_path(args.model)
    if args.video is not None and importlib.util.find_spec("moviepy") is None:
        raise CliError(f"--video needs moviepy, which is not installed: {_VIDEO_HINT}.")
    if args.video is None and not _has_display():
        raise CliError(
            "no display to open a window on (DISPLAY is not set): record a video instead with --video DIR."
        )
    env = _make_env(args)
    try:
        model = load_model_file(args.model, env)
        returns = _play(model, env, args)
    finally:
        env.close()
    for i, episode_return in enumerate(returns):
        print(f"episode {i + 1}: return {episode_return:.2f}")
    if args.video is not None:
        videos = sorted(Path(args.video).glob("*.mp4"))
        print(f"Recorded {len(videos)} video(s) in {args.video}: " + ", ".join(v.name for v in videos))
    return 0


def _has_display() -> bool:
    """Linux needs an X11 or Wayland display for render_mode='human'; other systems always have one."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _make_env(args: argparse.Namespace) -> Any:
    import gymnasium as gym

    from lit_sb3_core.engine.envs import make_env_by_id

    kwargs = parse_env_kwargs(args.env_kwargs)
    kwargs["render_mode"] = "rgb_array" if args.video is not None else "human"
    if args.video is not None:
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws off-screen: no display needed
    try:
        env = make_env_by_id(args.env, kwargs)
    except gym.error.DependencyNotInstalled as exc:
        raise CliError(f"rendering {args.env} needs a package that is not installed: {exc}") from None
    if args.video is None:
        return env
    from gymnasium.wrappers import RecordVideo

    name = Path(args.model).stem
    return RecordVideo(
        env, args.video, episode_trigger=lambda episode: True, name_prefix=name, disable_logger=True
    )


def _play(model: Any, env: Any, args: argparse.Namespace) -> list[float]:
    returns = []
    observation, _ = env.reset(seed=args.seed)
    state = None
    for episode in range(args.episodes):
        total, episode_start = 0.0, True
        for _ in range(args.max_steps):
            action, state = model.predict(
                observation, state=state, episode_start=[episode_start], deterministic=not args.stochastic
            )
            try:
                observation, reward, terminated, truncated, _ = env.step(action)
            except Exception as exc:  # pygame without a display raises its own error type
                if type(exc).__module__.startswith("pygame") or "display" in str(exc).lower():
                    raise CliError(
                        f"cannot open a window ({exc}); record a video instead with --video DIR."
                    ) from None
                raise
            total += float(reward)
            episode_start = False
            if terminated or truncated:
                break
        returns.append(total)
        if episode + 1 < args.episodes:  # a reset after the last one would start (and record) another
            observation, _ = env.reset()
    return returns
