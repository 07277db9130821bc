"""What every ``lit-sb3`` command shares: the error type for bad input, and how such errors are shown."""

from __future__ import annotations

import errno
import sys

from lit_sb3_core.errors import CliError  # in the LitSb3Error tree; importable from here as before

__all__ = ["CliError", "is_user_error", "report_error"]


# A file could not be written for want of room or rights (ENOSPC, EDQUOT, EFBIG, EROFS, EACCES, EPERM).
_DISK_ERRORS = {
    getattr(errno, name, None) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS", "EACCES", "EPERM")
}
_DISK_ERRORS.discard(None)


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
