"""``lit-sb3 enjoy`` and ``lit-sb3 record-video``: watch a trained agent, or record it, as rl-zoo3's
``enjoy.py`` / ``record_video.py`` do.

The model is a file (``lit-sb3 enjoy model.zip --env ID``) or a ``lit-sb3 train`` run found the rl-zoo3 way
(``--algo ppo --env CartPole-v1 -f logs``: the latest run, or ``--exp-id N``; its final model, or
``--load-best`` / ``--load-checkpoint STEPS`` / ``--load-last-checkpoint``). Videos are written by gymnasium's
``RecordVideo`` (which needs moviepy) from ``rgb_array`` frames, so they work on a headless machine; the window
needs a display (and pygame for the classic-control envs); ``--no-render`` needs neither.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from lit_sb3_core.cli.common import CliError
from lit_sb3_core.cli.evaluate import check_model_path, load_model_file
from lit_sb3_core.cli.zoo_layout import find_model, parse_key_values

__all__ = ["configure", "configure_record_video", "run_enjoy", "run_record_video"]

_VIDEO_HINT = "pip install moviepy (or pip install 'lit-sb3-core[video]')"
_REFUSED = {
    ("--custom-objects",): "not needed: lit-sb3 model files hold no pickled objects to replace",
    (
        "--norm-reward",
    ): "rewards are shown as the env gives them; normalization statistics apply to observations",
    ("--reward-log",): "lit-sb3 evaluate MODEL --env ID prints the returns of N episodes",
    ("--gym-packages",): "name the env with its module, --env my_package:MyEnv-v0 (gymnasium imports it)",
    ("--n-envs",): "enjoy plays one env; lit-sb3 evaluate MODEL --env ID --n-envs N spreads episodes over N",
}


def _add_model_arguments(parser: argparse.ArgumentParser, n_timesteps: int | None) -> None:
    add = parser.add_argument
    add("model", nargs="?", default=None, help="a model file; without it, the run given by --algo/--env/-f")
    add("--env", default=None, help="gymnasium environment id (default CartPole-v1 with --algo)")
    add(
        "--algo",
        default=None,
        help="find the model of a `lit-sb3 train` run of this algorithm (rl-zoo3 style)",
    )
    add("-f", "--folder", default="logs", help="the log folder of `lit-sb3 train -f` (default logs)")
    add("--exp-id", type=int, default=0, help="run number: 0 the latest, -1 models directly in FOLDER/ALGO")
    add("--load-best", action="store_true", help="the run's best_model.zip (train --eval-freq)")
    add(
        "--load-checkpoint",
        type=int,
        default=None,
        metavar="STEPS",
        help="the run's rl_model_STEPS_steps.zip",
    )
    add("--load-last-checkpoint", action="store_true", help="the run's checkpoint with the most steps")
    add("-n", "--n-timesteps", type=int, default=n_timesteps, help="environment steps to play")
    add("--stochastic", action="store_true", help="sample actions instead of taking the mode")
    add("--deterministic", action="store_true", help="take the mode of the action distribution (the default)")
    add("--seed", type=int, default=0, help="seed of the environment (default 0)")
    add(
        "--env-kwargs",
        nargs="+",
        default=None,
        metavar="KEY:VALUE",
        help="keyword arguments for gymnasium.make: KEY:VALUE pairs or one JSON object",
    )
    for name in ("--device", "--num-threads", "--verbose"):
        add(name, default=None, help=argparse.SUPPRESS)  # rl-zoo3 flags without an effect here
    add("-P", "--progress", action="store_true", help=argparse.SUPPRESS)
    for flags, instead in _REFUSED.items():
        add(*flags, nargs="*", action=_Refused, instead=instead, help=argparse.SUPPRESS)


class _Refused(argparse.Action):
    def __init__(self, *args: Any, instead: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.instead = instead

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option: Any = None
    ) -> None:
        parser.error(f"{option} is an rl-zoo3 option that lit-sb3 does not take: {self.instead}.")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Run a trained model and show it: in a window (render_mode='human'), recorded to one mp4 per episode "
        "with --video DIR (works without a display), or not at all with --no-render."
    )
    parser.epilog = (
        "examples:\n  lit-sb3 enjoy ppo_cartpole.zip --env CartPole-v1\n"
        "  lit-sb3 enjoy --algo ppo --env CartPole-v1 -f logs/ --load-best --no-render -n 2000\n"
        "  lit-sb3 enjoy ppo_cartpole.zip --env CartPole-v1 --video videos/ --episodes 3"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    _add_model_arguments(parser, n_timesteps=None)
    parser.add_argument(
        "--episodes", type=int, default=None, help="episodes to play (default 1; -n counts steps)"
    )
    parser.add_argument("--no-render", action="store_true", help="do not render (no display needed)")
    parser.add_argument(
        "--video", default=None, metavar="DIR", help="record mp4 videos into DIR instead of opening a window"
    )
    parser.add_argument(
        "--max-steps", type=int, default=10_000, help="stop an episode after this many steps (default 10000)"
    )


def configure_record_video(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Record a trained model playing: one mp4 of the first N environment steps (rl-zoo3's record_video). "
        "Works without a display; needs moviepy."
    )
    parser.epilog = (
        "examples:\n  lit-sb3 record-video --algo ppo --env CartPole-v1 -f logs/ -n 1000\n"
        "  lit-sb3 record-video ppo_cartpole.zip --env CartPole-v1 -o videos/"
    )
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    _add_model_arguments(parser, n_timesteps=1000)
    parser.add_argument(
        "-o", "--output-folder", default=None, help="where the video goes (default: <run>/videos or videos/)"
    )
    parser.add_argument("--no-render", action="store_true", help=argparse.SUPPRESS)  # rl-zoo3 accepts it here


# resolving the model -----------------------------------------------------------------------------------
def _resolve(args: argparse.Namespace) -> tuple[Path, Path | None, str]:
    """(model file, run folder or None, video name prefix)."""
    if args.model is not None:
        if args.env is None:
            raise CliError("--env is required with a model file: lit-sb3 enjoy MODEL.zip --env CartPole-v1.")
        check_model_path(args.model)
        return Path(args.model), None, Path(args.model).stem
    if args.algo is None:
        raise CliError(
            "give a model file (lit-sb3 enjoy MODEL.zip --env ID) or a training run (--algo ALGO --env ID -f FOLDER)."
        )
    from lit_sb3_core.registry.registry import get_algo_class

    args.env = args.env or "CartPole-v1"
    algo = get_algo_class(args.algo).algo_name or args.algo.lower()
    if args.folder.rstrip("/").endswith("rl-trained-agents") and not Path(args.folder).is_dir():
        raise CliError(
            f"{args.folder} does not exist: lit-sb3 downloads no agents; train one with "
            f"`lit-sb3 train --algo {algo} --env {args.env}` and enjoy it with -f logs."
        )
    path, run = find_model(
        args.folder,
        algo,
        args.env,
        args.exp_id,
        args.load_best,
        args.load_checkpoint,
        args.load_last_checkpoint,
    )
    kind = "best-model" if args.load_best else "checkpoint" if "rl_model_" in path.name else "final-model"
    return path, run, f"{kind}-{algo}-{args.env}"


def _env_kwargs(values: list[str] | None) -> dict[str, Any]:
    if not values:
        return {}
    if len(values) == 1 and values[0].lstrip().startswith("{"):
        try:
            parsed = json.loads(values[0])
        except json.JSONDecodeError as exc:
            raise CliError(f"--env-kwargs must be a JSON object or KEY:VALUE pairs: {exc}.") from None
        if not isinstance(parsed, dict):
            raise CliError(f"--env-kwargs must be a JSON object, got {values[0]!r}.")
        return parsed
    return parse_key_values(values, "--env-kwargs")


# enjoy -------------------------------------------------------------------------------------------------
def run_enjoy(args: argparse.Namespace) -> int:
    path, _, _ = _resolve(args)
    if args.video is not None and importlib.util.find_spec("moviepy") is None:
        raise CliError(f"--video needs moviepy, which is not installed: {_VIDEO_HINT}.")
    render = args.video is None and not args.no_render
    if render and not _has_display():
        raise CliError(
            "no display to open a window on (DISPLAY is not set): record a video instead with --video DIR, or "
            "play without rendering with --no-render."
        )
    print(f"Loading {path}")
    render_mode = "rgb_array" if args.video is not None else "human" if render else None
    env = _make_env(args.env, _env_kwargs(args.env_kwargs), render_mode)
    if args.video is not None:
        from gymnasium.wrappers import RecordVideo

        env = RecordVideo(
            env, args.video, episode_trigger=lambda episode: True, name_prefix=path.stem, disable_logger=True
        )
    try:
        model = load_model_file(str(path), env)
        n_steps = args.n_timesteps
        if n_steps is None and args.model is None and args.episodes is None:
            n_steps = 1000  # rl-zoo3's default for a training run
        episodes = _play(model, env, args, n_steps=n_steps, n_episodes=args.episodes)
    finally:
        env.close()
    for i, (episode_return, length) in enumerate(episodes):
        print(f"episode {i + 1}: return {episode_return:.2f}, length {length}")
    if args.video is not None:
        videos = sorted(Path(args.video).glob("*.mp4"))
        print(f"Recorded {len(videos)} video(s) in {args.video}: " + ", ".join(v.name for v in videos))
    return 0


def run_record_video(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("moviepy") is None:
        raise CliError(f"record-video needs moviepy, which is not installed: {_VIDEO_HINT}.")
    path, run, prefix = _resolve(args)
    folder = Path(args.output_folder) if args.output_folder else (run / "videos" if run else Path("videos"))
    from gymnasium.wrappers import RecordVideo

    print(f"Loading {path}")
    env = _make_env(args.env, _env_kwargs(args.env_kwargs), "rgb_array")
    length = args.n_timesteps
    env = RecordVideo(
        env,
        str(folder),
        step_trigger=lambda step: step == 0,
        video_length=length,
        name_prefix=prefix,
        disable_logger=True,
    )
    try:
        model = load_model_file(str(path), env)
        _play(model, env, args, n_steps=length, n_episodes=None)
    finally:
        env.close()
    video = folder / f"{prefix}-step-0-to-step-{length}.mp4"  # rl-zoo3's name
    (folder / f"{prefix}-step-0.mp4").replace(video)
    print(f"Recorded {length} steps to {video}")
    return 0


def _has_display() -> bool:
    """Linux needs an X11 or Wayland display for render_mode='human'; other systems always have one."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _make_env(env_id: str, kwargs: dict[str, Any], render_mode: str | None) -> Any:
    import gymnasium as gym

    from lit_sb3_core.envs.make import make_env_by_id

    if render_mode is not None:
        kwargs = {**kwargs, "render_mode": render_mode}
    if render_mode == "rgb_array":
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")  # pygame draws off-screen: no display needed
    try:
        return make_env_by_id(env_id, kwargs)
    except gym.error.DependencyNotInstalled as exc:
        raise CliError(f"rendering {env_id} needs a package that is not installed: {exc}") from None


def _play(
    model: Any, env: Any, args: argparse.Namespace, n_steps: int | None, n_episodes: int | None
) -> list[tuple[float, int]]:
    """Play ``n_steps`` steps (over as many episodes as they take) or ``n_episodes`` whole episodes."""
    if n_steps is None and n_episodes is None:
        n_episodes = 1
    episodes: list[tuple[float, int]] = []
    observation, _ = env.reset(seed=args.seed)
    state, episode_start = None, True
    total, length, steps = 0.0, 0, 0
    while (n_steps is None or steps < n_steps) and (n_episodes is None or len(episodes) < n_episodes):
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
        total, length, steps, episode_start = total + float(reward), length + 1, steps + 1, False
        if terminated or truncated or length >= getattr(args, "max_steps", 1 << 62):
            episodes.append((total, length))
            total, length, episode_start = 0.0, 0, True
            last = n_episodes is not None and len(episodes) >= n_episodes
            if not last and (n_steps is None or steps < n_steps):
                observation, _ = env.reset()  # a reset after the last one would start (and record) another
    return episodes
