"""Reading input files: a regular file opened without ever blocking on a special one, gzip, undecodable bytes.

The bottom layer's file helpers, shared by the vector readers (:mod:`embdebias.io`), the
corpus reader (:mod:`embdebias.text`), the bundled data (:mod:`embdebias.data`) and the
scores file of :mod:`embdebias.fairness`; and the one gzip-or-plain output stream
(:func:`open_output`) of the vector writers and the augmented corpus (:mod:`embdebias.cda`).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from .errors import EmbdebiasError, file_not_found

#: The first two bytes of a gzip stream.
GZIP_MAGIC = b"\x1f\x8b"
#: What a truncated or damaged gzip stream raises while it is read.
GZIP_ERRORS = (EOFError, zlib.error, gzip.BadGzipFile)
#: gensim's ``unicode_errors``: what the readers do with undecodable UTF-8 in a word.
UNICODE_ERRORS = ("strict", "ignore", "replace")


def check_unicode_errors(value) -> str:
    """Validate ``unicode_errors`` (one of :data:`UNICODE_ERRORS`)."""
    if value not in UNICODE_ERRORS:
        raise EmbdebiasError(f"unicode_errors must be one of {', '.join(UNICODE_ERRORS)}, got {value!r}")
    return value


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
        raise file_not_found(path, error) from None
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


@contextlib.contextmanager
def open_output(tmp: Path, target: Path, compresslevel: int = 6):
    """A binary output stream to ``tmp``, gzip-compressed (at ``compresslevel``) when ``target`` ends in ``.gz``."""
    if target.name.endswith(".gz"):
        # mtime=0 keeps the output byte-identical between runs.
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=compresslevel,
                                                    filename="", mtime=0) as fh:
            yield fh
    else:
        with open(tmp, "wb") as fh:
            yield fh
