"""SB3's ``Monitor``: episode statistics in ``info["episode"]`` and, optionally, in a ``monitor.csv`` file.

``Monitor`` is gymnasium's ``RecordEpisodeStatistics`` (which lit-sb3 already reads: when every sub-env
carries one, training statistics and ``evaluate_policy`` count its episodes, as SB3 counts Monitor's) plus
SB3's file: a JSON header line, then one ``r,l,t`` row per episode. ``load_results`` reads those files back
into a pandas DataFrame (``pip install pandas``, or lit-sb3's ``plot`` extra).
"""

from __future__ import annotations

import csv
import json
import os
import time
from glob import glob
from typing import Any, SupportsFloat

import gymnasium as gym
from gymnasium.wrappers import RecordEpisodeStatistics

from lit_sb3_core.errors import LitSb3Error

__all__ = [
    "LoadMonitorResultsError",
    "Monitor",
    "ResultsWriter",
    "get_monitor_files",
    "load_results",
    "monitored",
]


class Monitor(RecordEpisodeStatistics):
    """Record each episode's return, length and end time (seconds since the monitor started).

    At the end of an episode ``info["episode"]`` holds ``{"r": return, "l": length, "t": time}`` as in SB3;
    with a ``filename`` each episode is also a row of ``<filename>.monitor.csv`` (or ``<folder>/monitor.csv``
    when ``filename`` is a folder). ``return_queue``/``length_queue`` hold the last 100 episodes (gymnasium's
    names); ``get_episode_rewards()`` and the other SB3 getters all of them. ``episode_returns`` is the
    running return of the current episode (gymnasium's meaning).

    Args:
        env: the env to monitor.
        filename: where to write the CSV log (None: no file).
        allow_early_resets: allow ``reset()`` before the episode ended.
        reset_keywords: keywords of ``reset()`` (``seed``, ``options``) or keys of its ``options`` to log with
            each episode.
        info_keywords: ``info`` keys of an episode's last step to log with it.
        override_existing: start a new file (True) or append to an existing one.
    """

    EXT = "monitor.csv"

    def __init__(
        self,
        env: gym.Env,
        filename: str | None = None,
        allow_early_resets: bool = True,
        reset_keywords: tuple[str, ...] = (),
        info_keywords: tuple[str, ...] = (),
        override_existing: bool = True,
    ) -> None:
        super().__init__(env)
        self.t_start = time.time()
        self.results_writer: ResultsWriter | None = None
        if filename is not None:
            env_id = env.spec.id if env.spec is not None else None
            self.results_writer = ResultsWriter(
                filename,
                header={"t_start": self.t_start, "env_id": str(env_id)},
                extra_keys=tuple(reset_keywords) + tuple(info_keywords),
                override_existing=override_existing,
            )
        self.reset_keywords = tuple(reset_keywords)
        self.info_keywords = tuple(info_keywords)
        self.allow_early_resets = allow_early_resets
        self.rewards: list[float] = []
        self.needs_reset = True
        self._all_returns: list[float] = []
        self._all_lengths: list[int] = []
        self._all_times: list[float] = []
        self.total_steps = 0
        self.current_reset_info: dict[str, Any] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if not self.allow_early_resets and not self.needs_reset:
            raise RuntimeError(
                "Tried to reset an environment before done: its episode has not ended. Create the Monitor "
                "with allow_early_resets=True to allow it."
            )
        self.current_reset_info = {}
        given = {"seed": seed, "options": options}
        for key in self.reset_keywords:
            # SB3 logs reset()'s own keywords; gymnasium envs take everything else through options.
            value = given[key] if key in given else (options or {}).get(key)
            if value is None:
                how = f"reset({key}=...)" if key in given else f"reset(options={{{key!r}: ...}})"
                raise ValueError(
                    f"Expected you to pass keyword argument {key} into reset: the Monitor logs it with each "
                    f"episode (reset_keywords). Call {how}."
                )
            self.current_reset_info[key] = value
        self.rewards = []
        self.needs_reset = False
        if options is not None:
            return super().reset(seed=seed, options=options)
        # No options: call reset(seed=...) alone, as SB3 does, so envs whose reset takes no options work;
        # then start the episode statistics as RecordEpisodeStatistics.reset does.
        observation, info = self.env.reset(seed=seed)
        self.episode_start_time = time.perf_counter()
        self.episode_returns, self.episode_lengths = 0.0, 0
        return observation, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.needs_reset:
            raise RuntimeError(
                "Tried to step environment that needs reset: it was never reset, or its episode ended. Call "
                "reset() first."
            )
        observation, reward, terminated, truncated, info = super().step(action)
        self.rewards.append(float(reward))
        self.total_steps += 1
        if terminated or truncated:
            self.needs_reset = True
            episode = info["episode"]
            elapsed = round(time.time() - self.t_start, 6)
            # SB3's numbers: the return rounded to 6 places, and "t" since the monitor started.
            episode.update({"r": round(float(episode["r"]), 6), "l": int(episode["l"]), "t": elapsed})
            self._all_returns.append(episode["r"])
            self._all_lengths.append(episode["l"])
            self._all_times.append(elapsed)
            row = dict(episode)
            for key in self.info_keywords:
                row[key] = info[key]
            row.update(self.current_reset_info)
            if self.results_writer is not None:
                self.results_writer.write_row(row)
        return observation, reward, terminated, truncated, info

    def close(self) -> None:
        super().close()
        if self.results_writer is not None:
            self.results_writer.close()

    def get_total_steps(self) -> int:
        return self.total_steps

    def get_episode_rewards(self) -> list[float]:
        return list(self._all_returns)

    def get_episode_lengths(self) -> list[int]:
        return list(self._all_lengths)

    def get_episode_times(self) -> list[float]:
        return list(self._all_times)


class LoadMonitorResultsError(LitSb3Error):
    """No monitor file where one was expected, or one that cannot be read (the message names file and line)."""


class ResultsWriter:
    """Writes SB3's monitor CSV: ``#{json header}``, then ``r,l,t[,extra keys]`` rows.

    Args:
        filename: the file, or a folder (``monitor.csv`` is added), or a prefix (``.monitor.csv`` is added).
        header: the JSON header (``t_start``, ``env_id``).
        extra_keys: more columns after ``r,l,t``.
        override_existing: start a new file (True) or append to an existing one.
    """

    def __init__(
        self,
        filename: str = "",
        header: dict[str, Any] | None = None,
        extra_keys: tuple[str, ...] = (),
        override_existing: bool = True,
    ) -> None:
        filename = os.fspath(filename)
        if not filename.endswith(Monitor.EXT):
            filename = (
                os.path.join(filename, Monitor.EXT)
                if os.path.isdir(filename)
                else f"{filename}.{Monitor.EXT}"
            )
        filename = os.path.realpath(filename)
        os.makedirs(os.path.dirname(filename), exist_ok=True)
        self.filename = filename
        self.file_handler = open(filename, "w" if override_existing else "a", newline="\n")
        self.logger = csv.DictWriter(self.file_handler, fieldnames=("r", "l", "t", *extra_keys))
        if override_existing:
            self.file_handler.write(f"#{json.dumps(header or {})}\n")
            self.logger.writeheader()
        self.file_handler.flush()

    def write_row(self, epinfo: dict[str, Any]) -> None:
        self.logger.writerow(epinfo)
        self.file_handler.flush()

    def close(self) -> None:
        self.file_handler.close()


def get_monitor_files(path: str) -> list[str]:
    """The monitor files (``*monitor.csv``) in folder ``path``."""
    return glob(os.path.join(os.fspath(path), "*" + Monitor.EXT))


MAX_MONITOR_BYTES = 2**30
_COLUMNS = ("r", "l", "t")


def _read_text(name: str) -> str:
    """A monitor file's text: a regular file only (a FIFO or a device is refused without blocking), bounded."""
    import stat

    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise LoadMonitorResultsError(f"{name} cannot be opened: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as handle:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) else "not a file"
            raise LoadMonitorResultsError(
                f"{name} is {kind}, not a regular monitor file: load_results reads only files Monitor wrote. "
                "Remove it or rename it so it does not end in monitor.csv."
            )
        too_large = (
            os.fstat(fd).st_size > MAX_MONITOR_BYTES
        )  # refused unread; the bounded read catches growth
        data = b"" if too_large else handle.read(MAX_MONITOR_BYTES + 1)
    if too_large or len(data) > MAX_MONITOR_BYTES:
        raise LoadMonitorResultsError(
            f"{name} is larger than the {MAX_MONITOR_BYTES} bytes load_results reads from one monitor file."
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LoadMonitorResultsError(f"{name} is not text (byte {exc.start} is not UTF-8).") from None


def _read_monitor_file(name: str, pandas: Any) -> tuple[dict[str, Any], Any]:
    """Header and rows of one monitor file, every problem named with the file and the line."""
    import io

    text = _read_text(name)
    first, _, rest = text.partition("\n")
    if not first.startswith("#"):
        raise LoadMonitorResultsError(f"{name} is not a monitor file: it has no '#{{...}}' header line.")
    try:
        header = json.loads(first[1:])
    except (ValueError, RecursionError) as exc:
        raise LoadMonitorResultsError(f"{name}, line 1: the header is not JSON ({exc}).") from None
    if not isinstance(header, dict) or not isinstance(header.get("t_start"), (int, float)):
        raise LoadMonitorResultsError(
            f"{name}, line 1: the header must be a JSON object with a number t_start, as Monitor writes it."
        )
    rows = list(csv.reader(io.StringIO(rest)))
    if not rows:
        raise LoadMonitorResultsError(f"{name}, line 2: no column names (expected r,l,t).")
    columns = rows[0]
    missing = [c for c in _COLUMNS if c not in columns]
    if missing:
        raise LoadMonitorResultsError(
            f"{name}, line 2: the columns {columns} lack {missing}; a monitor file has r,l,t (then extra keys)."
        )
    where = [columns.index(c) for c in _COLUMNS]
    for number, row in enumerate(rows[1:], start=3):
        if not row:
            continue
        if len(row) != len(columns):
            raise LoadMonitorResultsError(
                f"{name}, line {number}: {len(row)} values for {len(columns)} columns."
            )
        for column, index in zip(_COLUMNS, where):
            try:
                float(row[index])
            except ValueError:
                raise LoadMonitorResultsError(
                    f"{name}, line {number}: {column}={row[index]!r:.40} is not a number."
                ) from None
    return header, pandas.read_csv(io.StringIO(rest), index_col=None)


def load_results(path: str) -> Any:
    """Every monitor file in folder ``path`` as one pandas DataFrame (columns ``r``, ``l``, ``t``, ...),
    sorted by time, ``t`` in seconds since the earliest monitor started."""
    try:
        import pandas
    except ImportError as exc:
        raise ImportError(
            "pandas is required for loading results (load_results): pip install pandas (or pip install "
            "'lit-sb3-core[plot]')."
        ) from exc
    files = get_monitor_files(path)
    if not files:
        raise LoadMonitorResultsError(f"No monitor files of the form *{Monitor.EXT} in {path}.")
    frames, starts = [], []
    for name in files:
        header, frame = _read_monitor_file(name, pandas)
        frame["t"] += header["t_start"]
        starts.append(header["t_start"])
        frames.append(frame)
    frames = [frame for frame in frames if not frame.empty]
    if not frames:
        return pandas.DataFrame(columns=["r", "l", "t"]).reset_index()
    data = pandas.concat(frames).sort_values("t").reset_index()
    data["t"] -= min(starts)
    return data


def monitored(env: gym.Env) -> gym.Env:
    """``env`` in a ``Monitor``, as SB3's algorithms wrap an env they are given (``_wrap_env``,
    ``make_vec_env``), unless its chain records episodes already (a ``Monitor`` or gymnasium's
    ``RecordEpisodeStatistics``: a second recorder would clash over ``info["episode"]``)."""
    from lit_sb3_core.envs.episodes import has_episode_recorder

    return env if has_episode_recorder(env) else Monitor(env)
