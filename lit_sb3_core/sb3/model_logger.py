"""``model.logger`` is Stable-Baselines3's logger, writing through the run's Lightning loggers.

SB3 code reads ``self.logger`` inside callbacks and algorithms (``self.logger.record("custom/x", v)``);
Lightning gives a LightningModule a ``logger`` property too (the trainer's first logger). Here ``logger``
is SB3's (:class:`lit_sb3_core.sb3.logger.Logger`): its outputs are the trainer's Lightning loggers
(and the console with ``verbose=1``), so a record reaches TensorBoard (or CSV, MLflow, ...) once, at the
next dump, with the iteration's own metrics. Attributes only Lightning's loggers have (``experiment``,
``log_metrics``, ``log_dir``) are forwarded to the first of them; ``model.loggers`` stays Lightning's list.
``set_logger(configure(folder, formats))`` replaces it, as in SB3.

:class:`ModelLogger` is a helper the algorithm holds (``RLAlgorithm._sb3_logger``); ``logger``,
``set_logger`` and ``dump_logs`` are the algorithm's delegates to it.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from lit_sb3_core.sb3.logger import HumanOutputFormat, Logger, default_log_folder, output_for

if TYPE_CHECKING:
    import lightning as L

__all__ = ["ModelLogger"]


class ModelLogger:
    """One algorithm's SB3 logger: the one ``set_logger`` gave, or a default over its Lightning loggers."""

    def __init__(self, algorithm: L.LightningModule) -> None:
        self.algorithm = algorithm
        self.custom: Logger | None = None  # the logger set_logger gave (it replaces tensorboard_log)
        self._default: Logger | None = None

    @property
    def logger(self) -> Logger:
        """SB3's logger: ``record``, ``record_mean``, ``dump``; Lightning's logger attributes forwarded."""
        if self.custom is not None:
            return self.custom
        if self._default is None:
            self._default = Logger(None, self._default_outputs())
        return self._default

    def set_logger(self, logger: Logger) -> None:
        """Log to ``logger`` from now on (see ``RLAlgorithm.set_logger``)."""
        if not isinstance(logger, Logger):
            raise TypeError(
                f"set_logger takes a logger from lit_sb3.common.logger.configure(...), got {type(logger).__name__}. "
                "Lightning loggers go to RLTrainer(logger=...)."
            )
        self.custom = logger

    def _default_outputs(self) -> list[Any]:
        # SB3's order: the console first (verbose=1), then the files (the run's Lightning loggers).
        outputs: list[Any] = (
            [HumanOutputFormat(sys.stdout)] if getattr(self.algorithm, "verbose", 0) >= 1 else []
        )
        return outputs + [output_for(logger) for logger in self.algorithm.loggers]

    def _default_folder(self) -> str:
        """SB3's ``logger.dir``: the run's log folder (``<tensorboard_log>/<tb_log_name>_<N>``), else
        ``SB3_LOGDIR`` or a new name in the temporary folder (nothing is written there)."""
        for logger in self.algorithm.loggers:
            log_dir = getattr(logger, "log_dir", None)
            if log_dir:
                return str(log_dir)
        return default_log_folder()

    def refresh_outputs(self) -> None:
        """Point the default logger at the current run's Lightning loggers (called when training starts)."""
        self.logger  # noqa: B018 -- creates the default logger
        if self._default is not None:
            self._default.output_formats = self._default_outputs()
            self._default.dir = self._default_folder()

    def write_record(self, record: dict[str, Any], step: int) -> dict[str, Any]:
        """Record ``record`` and dump everything recorded since the last dump; returns what was written."""
        logger = self.logger
        for key, value in record.items():
            logger.record(key, value)
        written = dict(logger.name_to_value)
        logger.dump(step)
        return written

    def dump_logs(self, record: dict[str, float], step: int, print_them: bool = False) -> bool:
        """Write ``record`` (the latest metrics) again now; ``print_them`` also prints it as SB3's table when
        the logger does not print already. Returns whether there was anything to write."""
        if not record:
            return False
        logger = self.logger
        prints = any(isinstance(o, HumanOutputFormat) and o.file is sys.stdout for o in logger.output_formats)
        if print_them and not prints:
            HumanOutputFormat(sys.stdout).write(record, {}, step)
        self.write_record(record, step)
        return True
