"""SB3's ``results_plotter``: learning curves from ``Monitor`` files (matplotlib and pandas: lit-sb3's
``plot`` extra). ``lit-sb3 plot`` draws the same curves from TensorBoard and CSV logs."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from lit_sb3.common.monitor import load_results

# As SB3: importing this module without its optional dependencies fails at once, naming the missing one.
for _package in ("pandas", "matplotlib"):
    if importlib.util.find_spec(_package) is None:
        raise ImportError(
            f"{_package} is required for plotting (lit_sb3.common.results_plotter): pip install {_package}, "
            "or pip install 'lit-sb3-core[plot]'."
        )

__all__ = [
    "EPISODES_WINDOW",
    "POSSIBLE_X_AXES",
    "X_EPISODES",
    "X_TIMESTEPS",
    "X_WALLTIME",
    "load_results",
    "plot_curves",
    "plot_results",
    "rolling_window",
    "ts2xy",
    "window_func",
]

X_TIMESTEPS = "timesteps"
X_EPISODES = "episodes"
X_WALLTIME = "walltime_hrs"
POSSIBLE_X_AXES = [X_TIMESTEPS, X_EPISODES, X_WALLTIME]
EPISODES_WINDOW = 100


def rolling_window(array: np.ndarray, window: int) -> np.ndarray:
    """The windows of ``window`` consecutive values along the last axis (a view, no copy)."""
    return np.lib.stride_tricks.sliding_window_view(array, window, axis=-1)


def window_func(
    var_1: np.ndarray, var_2: np.ndarray, window: int, func: Callable
) -> tuple[np.ndarray, np.ndarray]:
    """``func`` (such as ``np.mean``) over each window of ``var_2``, against the last ``var_1`` of the window."""
    return var_1[window - 1 :], func(rolling_window(np.asarray(var_2), window), axis=-1)


def ts2xy(data_frame: Any, x_axis: str) -> tuple[np.ndarray, np.ndarray]:
    """Episode returns (y) against timesteps, episodes or wall time in hours (x)."""
    returns = data_frame["r"].to_numpy()
    if x_axis == X_TIMESTEPS:
        return np.cumsum(data_frame["l"].to_numpy()), returns
    if x_axis == X_EPISODES:
        return np.arange(len(data_frame)), returns
    if x_axis == X_WALLTIME:
        return data_frame["t"].to_numpy() / 3600.0, returns
    raise NotImplementedError(f"Unknown x_axis {x_axis!r}: use one of {POSSIBLE_X_AXES}.")


def _pyplot() -> Any:
    try:
        from matplotlib import pyplot
    except ImportError as exc:
        raise ImportError("matplotlib is required for plotting: pip install 'lit-sb3-core[plot]'.") from exc
    return pyplot


def plot_curves(
    xy_list: list[tuple[np.ndarray, np.ndarray]], x_axis: str, title: str, figsize: tuple[int, int] = (8, 2)
) -> None:
    """One figure: each curve's episodes as points, and their mean over ``EPISODES_WINDOW`` episodes."""
    plt = _pyplot()
    plt.figure(title, figsize=figsize)
    for x, y in xy_list:
        plt.scatter(x, y, s=2)
        if x.shape[0] >= EPISODES_WINDOW:
            plt.plot(*window_func(x, y, EPISODES_WINDOW, np.mean))
    plt.xlim(0, max(x[-1] for x, _ in xy_list if len(x)) if any(len(x) for x, _ in xy_list) else 1)
    plt.title(title)
    plt.xlabel(x_axis)
    plt.ylabel("Episode Rewards")
    plt.tight_layout()


def plot_results(
    dirs: list[str], num_timesteps: int | None, x_axis: str, task_name: str, figsize: tuple[int, int] = (8, 2)
) -> None:
    """Plot the monitor files of each folder in ``dirs`` (only the episodes within ``num_timesteps``)."""
    frames = []
    for folder in dirs:
        frame = load_results(folder)
        if num_timesteps is not None:
            frame = frame[frame["l"].cumsum() <= num_timesteps]
        frames.append(frame)
    plot_curves([ts2xy(frame, x_axis) for frame in frames], x_axis, task_name, figsize)
