"""Stable-Baselines3's logger (``record``/``dump``, ``configure``, ``HParam``, ``Image``, ``Figure``, ``Video``)
written through Lightning loggers.

SB3 code records values (``self.logger.record("train/loss", v)`` in a callback) and dumps them once per
iteration. Here the :class:`Logger` is that front end; what it writes to are *outputs*:

* any Lightning logger (TensorBoard, CSV, MLflow, W&B ...) wrapped in :class:`LightningOutput`: scalars go
  to ``log_metrics``, ``HParam`` to ``log_hyperparams``, images, figures and videos to TensorBoard's
  ``experiment``. An algorithm's logger uses the run's Lightning loggers (``RLTrainer(logger=...)``,
  TensorBoard with ``tensorboard_log``), so nothing is logged twice;
* SB3's text formats that Lightning has no logger for: ``stdout`` / ``log`` (the ASCII table, also what
  ``verbose=1`` prints) and ``json`` (one JSON object per dump).

``configure(folder, ["stdout", "csv", "tensorboard"])`` builds a Logger whose ``csv`` is Lightning's
``CSVLogger`` (writing SB3's ``progress.csv``) and whose ``tensorboard`` is Lightning's
``TensorBoardLogger``, both writing straight into ``folder``; ``model.set_logger(logger)`` makes a model
log there (``learn`` hands those Lightning loggers to its trainer).

Attributes a Logger does not have (``experiment``, ``log_metrics``, ``log_dir``, ``save_dir``,
``version``, ...) are looked up on its first Lightning logger, so code written for ``model.logger`` as
Lightning's logger keeps working.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import tempfile
import warnings
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np

__all__ = [
    "DEBUG",
    "DISABLED",
    "ERROR",
    "INFO",
    "WARN",
    "CSVOutputFormat",
    "Figure",
    "FormatUnsupportedError",
    "HParam",
    "HumanOutputFormat",
    "Image",
    "JSONOutputFormat",
    "KVWriter",
    "LightningOutput",
    "Logger",
    "SeqWriter",
    "TensorBoardOutputFormat",
    "Video",
    "configure",
    "configure_logger",
    "default_log_folder",
    "filter_excluded_keys",
    "make_output_format",
    "output_for",
    "read_csv",
    "read_json",
    "tensorboard_run_name",
]

DEBUG, INFO, WARN, ERROR, DISABLED = 10, 20, 30, 40, 50


# values that are not numbers ---------------------------------------------------------------------------
class Video:
    """A video to log: ``frames`` a (N, T, C, H, W) uint8/float tensor, played at ``fps``."""

    def __init__(self, frames: Any, fps: float) -> None:
        self.frames, self.fps = frames, fps


class Figure:
    """A matplotlib figure to log; ``close`` closes it once written."""

    def __init__(self, figure: Any, close: bool) -> None:
        self.figure, self.close = figure, close


class Image:
    """An image to log: an array or tensor laid out as ``dataformats`` says (``"HWC"``, ``"CHW"``, ...)."""

    def __init__(self, image: Any, dataformats: str) -> None:
        self.image, self.dataformats = image, dataformats


class HParam:
    """Hyperparameters and the metrics to show beside them (TensorBoard's HPARAMS tab)."""

    def __init__(self, hparam_dict: dict[str, Any], metric_dict: dict[str, Any]) -> None:
        if not metric_dict:
            raise ValueError("HParam needs a non-empty metric_dict, or TensorBoard shows nothing.")
        self.hparam_dict, self.metric_dict = hparam_dict, metric_dict


_MEDIA = (Video, Figure, Image, HParam)


class FormatUnsupportedError(NotImplementedError):
    """A value (video, figure, image, hparam) that an output format cannot write, and was not excluded."""

    def __init__(self, unsupported_formats: Sequence[str], value_description: str) -> None:
        formats = ", ".join(f"`{fmt}`" for fmt in unsupported_formats)
        super().__init__(
            f"The {value_description} values cannot be written to {formats}: exclude them, e.g. "
            f"logger.record(key, value, exclude=({', '.join(repr(f) for f in unsupported_formats)},))."
        )


def _excluded_from(excluded: str | tuple[str, ...] | None, *formats: str) -> bool:
    """Whether ``exclude=`` (a format name or a tuple of them, as SB3 takes it) names one of ``formats``."""
    if not excluded:
        return False
    names = (excluded,) if isinstance(excluded, str) else tuple(excluded)
    return any(fmt in names for fmt in formats)


def filter_excluded_keys(
    key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], _format: str
) -> dict[str, Any]:
    """``key_values`` without the keys excluded from ``_format``."""
    return {k: v for k, v in key_values.items() if not _excluded_from(key_excluded.get(k), _format)}


# outputs ------------------------------------------------------------------------------------------------
class KVWriter:
    """Writes one dump of key-value pairs."""

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Release files."""


class SeqWriter:
    """Writes free text (``logger.log(...)``)."""

    def write_sequence(self, sequence: list[str]) -> None:
        raise NotImplementedError


def _refuse_media(values: dict[str, Any], formats: list[str]) -> None:
    for value in values.values():
        if isinstance(value, _MEDIA):
            raise FormatUnsupportedError(formats, type(value).__name__.lower())


class HumanOutputFormat(KVWriter, SeqWriter):
    """SB3's ASCII table (``| rollout/ | ... |``) to a stream or a file (``stdout`` and ``log`` formats)."""

    def __init__(self, filename_or_file: str | Path | TextIO, max_length: int = 36) -> None:
        self.max_length = max_length
        self.path: str | None = None
        if isinstance(filename_or_file, (str, Path)):
            self.path = str(filename_or_file)
            self.file: TextIO = open(self.path, "w")
            self.own_file = True
        elif hasattr(filename_or_file, "write"):
            self.file, self.own_file = filename_or_file, False
        else:
            raise ValueError(f"Expected a file or a path, got {filename_or_file!r}.")

    def __getstate__(self) -> dict[str, Any]:
        # Models are pickled to start DDP workers: files are reopened there (appending), stdout is stdout.
        return {"max_length": self.max_length, "path": self.path, "stdout": self.file is sys.stdout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.max_length, self.path = state["max_length"], state["path"]
        self.own_file = self.path is not None
        self.file = open(self.path, "a") if self.path is not None else sys.stdout

    def _short(self, text: str) -> str:
        return text if len(text) <= self.max_length else text[: self.max_length - 3] + "..."

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        shown = {
            k: v for k, v in key_values.items() if not _excluded_from(key_excluded.get(k), "stdout", "log")
        }
        _refuse_media(shown, ["stdout", "log"])
        if not shown:
            warnings.warn("Tried to write empty key-value dict", UserWarning, stacklevel=2)
            return
        rows: list[tuple[str, str]] = []
        seen: set[tuple[str | None, str]] = set()
        group = None
        for key in sorted(shown):
            value = shown[key]
            text = f"{value:<8.3g}" if isinstance(value, float) else str(value)
            prefix, slash, name = key.partition("/")
            if slash and prefix != group:
                group = prefix
                rows.append((self._short(prefix + "/"), ""))
            shown_key = self._short(f"   {name}" if slash else key)
            if (group if slash else None, shown_key) in seen:
                raise ValueError(
                    f"Key {key!r} truncated to {shown_key.strip()!r}, which another key already shows as: "
                    f"increase max_length (now {self.max_length})."
                )
            seen.add((group if slash else None, shown_key))
            rows.append((shown_key, self._short(text)))
        key_width = max(len(k) for k, _ in rows)
        value_width = max(len(v) for _, v in rows)
        dashes = "-" * (key_width + value_width + 7)
        lines = [dashes, *(f"| {k:<{key_width}} | {v:<{value_width}} |" for k, v in rows), dashes]
        self.file.write("\n".join(lines) + "\n")
        self.file.flush()

    def write_sequence(self, sequence: list[str]) -> None:
        self.file.write(" ".join(str(item) for item in sequence) + "\n")
        self.file.flush()

    def close(self) -> None:
        if self.own_file:
            self.file.close()


class JSONOutputFormat(KVWriter):
    """One JSON object per dump (``progress.json``)."""

    def __init__(self, filename: str | Path) -> None:
        self.path = str(filename)
        self.file = open(self.path, "w")

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self.file = open(self.path, "a")

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        values = filter_excluded_keys(key_values, key_excluded, "json")
        _refuse_media(values, ["json"])
        plain = {k: v.item() if isinstance(v, np.generic) else v for k, v in values.items()}
        self.file.write(json.dumps(plain, default=str) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def _format_name(logger: Any) -> str:
    name = type(logger).__name__.lower()
    if "tensorboard" in name:
        return "tensorboard"
    if "csv" in name:
        return "csv"
    return name.removesuffix("logger") or name


def _tensor_type() -> type:
    """``torch.Tensor`` when torch is imported (a tensor value implies it is), else a type nothing is."""
    torch = sys.modules.get("torch")
    return torch.Tensor if torch is not None else _Never


class _Never:
    """A type no value has."""


def _scalar(value: Any) -> float | None:
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    item = getattr(value, "item", None)
    if callable(item) and getattr(value, "numel", lambda: 0)() == 1:
        return float(item())
    return None


class LightningOutput(KVWriter):
    """One Lightning logger as an output; ``name`` is the format ``exclude=`` refers to (``"tensorboard"``)."""

    def __init__(self, logger: Any, name: str | None = None) -> None:
        self.logger = logger
        self.name = name or _format_name(logger)

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0
    ) -> None:
        values = filter_excluded_keys(key_values, key_excluded, self.name)
        tensorboard = self.name == "tensorboard"
        # TensorBoard as SB3 writes it: arrays and tensors are histograms, strings text, numbers scalars.
        arrays = {
            k: v for k, v in values.items() if tensorboard and isinstance(v, (np.ndarray, _tensor_type()))
        }
        texts = {k: v for k, v in values.items() if tensorboard and isinstance(v, str)}
        scalars = {k: s for k, v in values.items() if k not in arrays and (s := _scalar(v)) is not None}
        if scalars:
            self.logger.log_metrics(scalars, step=step)
        media = {k: v for k, v in values.items() if isinstance(v, _MEDIA)}
        if self.name == "csv":
            _refuse_media(media, ["csv"])
        if tensorboard and (arrays or texts or media):
            writer = self.logger.experiment
            for key, array in arrays.items():
                writer.add_histogram(
                    key, np.asarray(array.detach().cpu() if hasattr(array, "detach") else array), step
                )
            for key, text in texts.items():
                writer.add_text(key, text, step)
        for key, value in media.items():
            if isinstance(value, HParam):
                self.logger.log_hyperparams(value.hparam_dict, value.metric_dict)
            elif tensorboard:
                writer = self.logger.experiment
                if isinstance(value, Image):
                    writer.add_image(key, value.image, step, dataformats=value.dataformats)
                elif isinstance(value, Figure):
                    writer.add_figure(key, value.figure, step, close=value.close)
                elif isinstance(value, Video):
                    writer.add_video(key, value.frames, step, value.fps)
        if scalars or arrays or texts or media:
            self.flush()

    def flush(self) -> None:
        """Put this dump on disk now, as SB3's formats do: SB3 code reads the files while training runs."""
        if self.name == "tensorboard":
            self.logger.experiment.flush()
        elif self.name == "csv":
            self.logger.save()

    def close(self) -> None:
        finalize = getattr(self.logger, "finalize", None)
        if callable(finalize):
            finalize("success")


class TensorBoardOutputFormat(LightningOutput):
    """Lightning's ``TensorBoardLogger`` as SB3's tensorboard format; ``writer`` is its ``SummaryWriter``.

    Args:
        folder: where the event files go (directly, as SB3 writes them), or a ``TensorBoardLogger`` to use.
    """

    def __init__(self, folder: str | Path | Any) -> None:
        if isinstance(folder, (str, Path)):
            from lightning.pytorch.loggers import TensorBoardLogger

            folder = TensorBoardLogger(save_dir=str(folder), name="", version="", default_hp_metric=False)
        super().__init__(folder, "tensorboard")

    @property
    def writer(self) -> Any:
        return self.logger.experiment


class CSVOutputFormat(LightningOutput):
    """Lightning's ``CSVLogger`` as SB3's csv format (``progress.csv``).

    Args:
        filename: the CSV file to write, or a ``CSVLogger`` to use.
    """

    def __init__(self, filename: str | Path | Any) -> None:
        if isinstance(filename, (str, Path)):
            Path(filename).write_text("")  # SB3 opens the file at once: it exists before the first dump
            filename = _csv_logger(Path(filename))
        super().__init__(filename, "csv")


def output_for(logger: Any) -> LightningOutput:
    """The SB3 output format for a Lightning logger (TensorBoard and CSV get SB3's classes)."""
    name = _format_name(logger)
    if name == "tensorboard":
        return TensorBoardOutputFormat(logger)
    if name == "csv":
        return CSVOutputFormat(logger)
    return LightningOutput(logger, name)


def _csv_logger(path: Path) -> Any:
    from lightning.pytorch.loggers import CSVLogger
    from lightning.pytorch.loggers.csv_logs import ExperimentWriter

    class _Writer(ExperimentWriter):
        NAME_METRICS_FILE = path.name

    class _NamedCSVLogger(CSVLogger):
        """Lightning's CSVLogger, but its metrics file has the name SB3 users read (progress.csv)."""

        @property
        def experiment(self) -> Any:
            if getattr(self, "_experiment", None) is None:
                os.makedirs(self.log_dir, exist_ok=True)
                with warnings.catch_warnings():
                    # The folder holds SB3's other formats (log.txt, events): only progress.csv is replaced.
                    warnings.filterwarnings("ignore", message="Experiment logs directory")
                    self._experiment = _Writer(log_dir=self.log_dir)
            return self._experiment

    return _NamedCSVLogger(save_dir=str(path.parent), name="", version="")


def make_output_format(_format: str, log_dir: str | Path, log_suffix: str = "") -> KVWriter:
    """One of SB3's formats: ``stdout``, ``log``, ``json``, ``csv``, ``tensorboard``."""
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    if _format == "stdout":
        return HumanOutputFormat(sys.stdout)
    if _format == "log":
        return HumanOutputFormat(folder / f"log{log_suffix}.txt")
    if _format == "json":
        return JSONOutputFormat(folder / f"progress{log_suffix}.json")
    if _format == "csv":
        return CSVOutputFormat(folder / f"progress{log_suffix}.csv")
    if _format == "tensorboard":
        return TensorBoardOutputFormat(folder)
    raise ValueError(f"Unknown log format {_format!r}: use 'stdout', 'log', 'json', 'csv' or 'tensorboard'.")


# the logger ---------------------------------------------------------------------------------------------
class Logger:
    """Collects values between dumps and writes each dump to every output.

    Args:
        folder: where the file formats write (``get_dir()``); ``None`` for none.
        output_formats: the outputs (``make_output_format(...)``, :class:`LightningOutput`, any KVWriter).
    """

    def __init__(self, folder: str | Path | None, output_formats: list[KVWriter]) -> None:
        self.name_to_value: dict[str, Any] = defaultdict(float)
        self.name_to_count: dict[str, int] = defaultdict(int)
        self.name_to_excluded: dict[str, tuple[str, ...]] = {}
        self.level = INFO
        self.dir = None if folder is None else str(folder)
        self.output_formats = list(output_formats)

    @staticmethod
    def to_tuple(exclude: str | tuple[str, ...] | None) -> tuple[str, ...]:
        if exclude is None:
            return ()
        return (exclude,) if isinstance(exclude, str) else tuple(exclude)

    def record(self, key: str, value: Any, exclude: str | tuple[str, ...] | None = None) -> None:
        """Set ``key`` for the next dump (the last value recorded wins)."""
        self.name_to_value[key] = value
        self.name_to_excluded[key] = self.to_tuple(exclude)

    def record_mean(self, key: str, value: Any, exclude: str | tuple[str, ...] | None = None) -> None:
        """Average ``key`` over every value recorded before the next dump."""
        if value is None:
            return
        mean, count = self.name_to_value[key], self.name_to_count[key]
        self.name_to_value[key] = mean * count / (count + 1) + value / (count + 1)
        self.name_to_count[key] = count + 1
        self.name_to_excluded[key] = self.to_tuple(exclude)

    def dump(self, step: int = 0) -> None:
        """Write the recorded values to every output, then forget them."""
        if self.level == DISABLED:
            return
        values, excluded = dict(self.name_to_value), dict(self.name_to_excluded)
        if values:
            for output in self.output_formats:
                output.write(values, excluded, step)
        self.name_to_value.clear()
        self.name_to_count.clear()
        self.name_to_excluded.clear()

    def log(self, *args: Any, level: int = INFO) -> None:
        """Write ``args`` as text to the text outputs, if ``level`` is at least the logger's level."""
        if self.level <= level:
            for output in self.output_formats:
                if isinstance(output, SeqWriter):
                    output.write_sequence([str(arg) for arg in args])

    def debug(self, *args: Any) -> None:
        self.log(*args, level=DEBUG)

    def info(self, *args: Any) -> None:
        self.log(*args, level=INFO)

    def warn(self, *args: Any) -> None:
        self.log(*args, level=WARN)

    def error(self, *args: Any) -> None:
        self.log(*args, level=ERROR)

    def set_level(self, level: int) -> None:
        self.level = level

    def get_dir(self) -> str | None:
        return self.dir

    def close(self) -> None:
        for output in self.output_formats:
            output.close()

    def lightning_loggers(self) -> list[Any]:
        """The Lightning loggers among the outputs (what ``learn`` gives its trainer)."""
        return [output.logger for output in self.output_formats if isinstance(output, LightningOutput)]

    def __getattr__(self, name: str) -> Any:
        # Only reached for names a Logger lacks: fall back to the first Lightning logger (``experiment``...).
        if name.startswith("__") or name in ("output_formats", "name_to_value"):
            raise AttributeError(name)
        for logger in self.lightning_loggers():
            if hasattr(logger, name):
                return getattr(logger, name)
        raise AttributeError(
            f"'Logger' has no attribute {name!r} (SB3's logger; its Lightning loggers have none either)."
        )


def default_log_folder() -> str:
    """SB3's log folder when none is given: ``SB3_LOGDIR``, else a new time-stamped name in the temporary
    folder."""
    folder = os.getenv("SB3_LOGDIR")
    if folder is None:
        stamp = datetime.datetime.now().strftime("SB3-%Y-%m-%d-%H-%M-%S-%f")
        folder = str(Path(tempfile.gettempdir()) / stamp)
    return folder


def tensorboard_run_name(
    tensorboard_log: str | Path, tb_log_name: str, reset_num_timesteps: bool = True
) -> str:
    """SB3's TensorBoard run folder name under ``tensorboard_log``: ``<tb_log_name>_<N>``, ``N`` one more
    than the latest run of that name, or the latest itself when ``reset_num_timesteps=False`` (the run
    goes on in the same folder)."""
    from lit_sb3_core.foundation.files import next_run_id

    run_id = next_run_id(Path(tensorboard_log), tb_log_name)
    return f"{tb_log_name}_{run_id if reset_num_timesteps else run_id - 1}"


def configure_logger(
    verbose: int = 0,
    tensorboard_log: str | Path | None = None,
    tb_log_name: str = "",
    reset_num_timesteps: bool = True,
) -> Logger:
    """SB3's ``utils.configure_logger``: the console with ``verbose >= 1``, TensorBoard (Lightning's
    ``TensorBoardLogger``) in ``<tensorboard_log>/<tb_log_name>_<N>`` when ``tensorboard_log`` is given."""
    if tensorboard_log is None:
        return configure(None, ["stdout"] if verbose >= 1 else [""])
    folder = Path(tensorboard_log) / tensorboard_run_name(tensorboard_log, tb_log_name, reset_num_timesteps)
    return configure(folder, ["stdout", "tensorboard"] if verbose >= 1 else ["tensorboard"])


def configure(folder: str | Path | None = None, format_strings: list[str] | None = None) -> Logger:
    """A Logger writing to ``folder`` in ``format_strings`` (SB3's defaults: ``SB3_LOGDIR``, a new temporary
    folder, ``SB3_LOG_FORMAT`` or ``stdout,log,csv``)."""
    if folder is None:
        folder = default_log_folder()
    Path(folder).mkdir(parents=True, exist_ok=True)
    if format_strings is None:
        format_strings = os.getenv("SB3_LOG_FORMAT", "stdout,log,csv").split(",")
    formats = [make_output_format(fmt.strip(), folder) for fmt in format_strings if fmt.strip()]
    logger = Logger(folder=folder, output_formats=formats)
    if formats and str(folder):
        logger.log(f"Logging to {folder}")
    return logger


def read_json(filename: str | Path) -> Any:
    """A ``progress.json`` as a pandas DataFrame."""
    import pandas

    with open(filename) as handle:
        return pandas.DataFrame([json.loads(line) for line in handle if line.strip()])


def read_csv(filename: str | Path) -> Any:
    """A ``progress.csv`` as a pandas DataFrame."""
    import pandas

    return pandas.read_csv(filename, index_col=None, comment="#")
