"""Atomic output: write to a temporary name in the target's directory, then rename.

An interrupted or failed write leaves the target untouched (the old file, or no
file) and removes its temporary; a write never goes to the file being read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from .errors import EmbdebiasError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _check_not_input(target: Path, inputs) -> None:
    for src in inputs or ():
        if src is None:
            continue
        src = Path(src)
        if src.exists() and target.exists() and os.path.samefile(src, target):
            raise EmbdebiasError(f"{target}: refusing to overwrite an input file; choose another output path")


@contextlib.contextmanager
def atomic_file(target, *, inputs=()):
    """Yield a temporary path next to ``target``; rename it to ``target`` on success.

    ``inputs`` lists files being read: writing over one of them is refused.
    """
    target = Path(target)
    _check_not_input(target, inputs)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(target, *, inputs=()):
    """Yield a temporary directory next to ``target``; swap it in on success.

    An existing ``target`` directory is moved aside first and deleted only after the
    new one is in place.
    """
    target = Path(target)
    _check_not_input(target, inputs)
    if target.exists() and not target.is_dir():
        raise EmbdebiasError(f"{target}: exists and is not a directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    try:
        yield tmp
        old = None
        if target.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
            os.rmdir(old)
            os.rename(target, old)
        os.rename(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
