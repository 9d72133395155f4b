"""Opening an input that must be a regular file, without ever blocking on a special one."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO


def open_regular(path, error, what: str) -> BinaryIO:
    """``path`` opened for binary reading, if it is a regular file; else ``error(message)`` is raised.

    The file is opened without blocking and checked on the open descriptor, so a FIFO,
    a device (``/dev/zero``) or a directory is refused at once, never read, even if it
    replaced a file after an earlier check. ``what`` names the expected input in the
    message ("a word list", "a scores file"). The descriptor is set back to blocking.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise error(f"{path}: file not found") from None
    except IsADirectoryError:
        raise error(f"{path}: not a regular file ({what} must be a file)") from None
    except OSError as exc:
        raise error(f"{path}: cannot open it ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise error(f"{path}: not a regular file (a FIFO, device or directory; {what} must be a file)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
