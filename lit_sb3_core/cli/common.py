"""What every ``lit-sb3`` command shares: the error type for bad input, and how such errors are shown."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import Any

from lit_sb3_core.errors import CliError, ConfigurationError  # CliError: in the LitSb3Error tree
from lit_sb3_core.foundation.checks import check_positive_int

__all__ = ["CliError", "is_user_error", "positive_int", "positive_int_option", "report_error"]


# A file could not be written for want of room or rights (ENOSPC, EDQUOT, EFBIG, EROFS, EACCES, EPERM).
_DISK_ERRORS = {
    getattr(errno, name, None) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EACCES", "EPERM")
}
_DISK_ERRORS.discard(None)


def positive_int_option(flag: str, value: Any) -> int:
    """``value`` of the command-line option ``flag`` (text or a parsed number) as a positive ``int``, or a
    ``CliError`` worded as the library's validators word it (``--trials must be a positive integer, got 0.``)."""
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            pass  # refused below, with the text as given
    try:
        return check_positive_int(flag, value)
    except ConfigurationError as error:
        raise CliError(str(error)) from None


def positive_int(text: str) -> int:
    """An argparse ``type=``: a positive integer (argparse names the option in its usage error)."""
    try:
        return positive_int_option("the value", text)
    except CliError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def is_user_error(error: BaseException) -> bool:
    """Errors that describe bad input (unknown names, ids, files), shown without a traceback."""
    from lit_sb3_core.errors import LitSb3Error

    if isinstance(error, (LitSb3Error, FileNotFoundError)):
        return True
    if isinstance(error, OSError) and error.filename is not None and error.errno in _DISK_ERRORS:
        return True  # a full disk, a quota, a read-only folder: the message names the file
    # gymnasium's errors (an unknown env id, a missing optional dependency), without importing gymnasium.
    return type(error).__module__.startswith("gymnasium.error")


def report_error(command: str, error: BaseException) -> int:
    """Print ``error`` for the user; returns the exit status."""
    text = str(error).strip() or type(error).__name__
    if isinstance(error, KeyError) and text.startswith(("'", '"')) and text.endswith(("'", '"')):
        text = text[1:-1]
    print(f"lit-sb3 {command}: error: {text}", file=sys.stderr)
    return 2
