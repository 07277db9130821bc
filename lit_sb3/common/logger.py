"""``stable_baselines3.common.logger``: SB3's logger, writing through Lightning loggers.

``csv`` and ``tensorboard`` are Lightning's ``CSVLogger`` and ``TensorBoardLogger``; ``stdout``, ``log`` and
``json`` are SB3's text formats. See ``lit_sb3_core.sb3.logger``.
"""

from __future__ import annotations

from lit_sb3_core.sb3.logger import (
    DEBUG,
    DISABLED,
    ERROR,
    INFO,
    WARN,
    CSVOutputFormat,
    Figure,
    FormatUnsupportedError,
    HParam,
    HumanOutputFormat,
    Image,
    JSONOutputFormat,
    KVWriter,
    Logger,
    SeqWriter,
    TensorBoardOutputFormat,
    Video,
    configure,
    filter_excluded_keys,
    make_output_format,
    read_csv,
    read_json,
)

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
    "Logger",
    "SeqWriter",
    "TensorBoardOutputFormat",
    "Video",
    "configure",
    "filter_excluded_keys",
    "make_output_format",
    "read_csv",
    "read_json",
]
