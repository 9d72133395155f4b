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


def check_output(target, inputs=()) -> None:
    """Refuse a target that is an input, lies inside an input directory, or contains an input."""
    target = Path(target)
    where = target.resolve()
    for src in inputs or ():
        if src is None or not isinstance(src, (str, os.PathLike)):
            continue
        src = Path(src)
        if not src.exists():
            continue
        src = src.resolve()
        if where == src or where.is_relative_to(src) or src.is_relative_to(where):
            raise EmbdebiasError(f"{target}: refusing to write over the input {src}; choose another output path")


def _existing_output_error(target: Path, resumable: str | None) -> EmbdebiasError | None:
    """Why an existing ``target`` may not be written without ``--force`` (None: it may)."""
    if not target.exists() and not target.is_symlink():
        return None
    if resumable is not None:
        if not target.is_dir():
            return EmbdebiasError(f"{target}: exists and is not a directory")
        if (target / resumable).is_file() or not any(target.iterdir()):
            return None  # an earlier run's output (resumed) or an empty directory
        return EmbdebiasError(f"{target}: an existing directory that is not an earlier run's output (no "
                              f"{resumable}); use --force to write into it anyway")
    return EmbdebiasError(f"{target}: exists; use --force to replace it")


def prepare_output(target, *, force: bool = False, inputs=(), resumable: str | None = None,
                   log=None) -> Path:
    """Check a command's output path before any work is done; the one rule for every command.

    Parameters
    ----------
    target : path-like
        The file or directory the command will write.
    force : bool
        Replace an existing output (``--force``). Without it an existing output is
        kept and this raises.
    inputs : sequence of path-like
        Files being read: writing over, into or around one of them is refused even with
        ``force`` (:func:`check_output`).
    resumable : str, optional
        For an output directory that a command resumes (``run``): the file that marks
        an earlier output of the command. Such a directory, or an empty one, is used
        without ``force``.
    log : callable, optional
        Receives one line when a parent directory is created.

    Returns
    -------
    Path

    Raises
    ------
    EmbdebiasError
        The output exists (and ``force`` is false), is an input, or its parent is
        missing more than one level deep (only the last missing level is created,
        so that a typo does not build a whole tree).
    """
    target = Path(target)
    check_output(target, inputs)
    if not force:
        error = _existing_output_error(target, resumable)
        if error is not None:
            raise error
    parent = target.parent
    if parent.exists() and not parent.is_dir():
        raise EmbdebiasError(f"{target}: {parent} is not a directory")
    if not parent.exists():
        if not parent.parent.is_dir():
            raise EmbdebiasError(f"{target}: the directory {parent} does not exist and neither does "
                                 f"{parent.parent}; only one missing directory level is created")
        parent.mkdir()
        if log is not None:
            log(f"created directory {parent}")
    return target


def check_replaceable(target, *, directory: bool, replaceable: str = "embdebias.json",
                      contents=None) -> None:
    """Raise if :func:`atomic_file` (``directory=False``) or :func:`atomic_dir` could not replace ``target``.

    A file cannot replace a directory; a directory replaces only an empty directory or
    one holding ``replaceable`` (an embdebias output), never a file, and, when
    ``contents`` (a set of names) is given, only one holding nothing but those names.
    Commands whose work is long check this before it starts.
    """
    target = Path(target)
    if not directory:
        if target.is_dir():
            raise EmbdebiasError(f"{target}: is a directory; refusing to replace it with a file")
        return
    if target.exists() and not target.is_dir():
        raise EmbdebiasError(f"{target}: exists and is not a directory")
    if target.is_dir() and any(target.iterdir()) and not (target / replaceable).is_file():
        # Only a directory we wrote ourselves is replaced; anything else may hold a user's files.
        raise EmbdebiasError(f"{target}: an existing directory that is not an embdebias output; "
                             f"refusing to replace it (choose a new path or remove it)")
    if contents is not None and target.is_dir():
        _check_only(target, contents)


def _check_only(target: Path, contents) -> None:
    """Refuse an output directory holding names outside ``contents``: replacing it would delete them."""
    foreign = sorted(p.name for p in target.iterdir() if p.name not in contents)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise EmbdebiasError(f"{target}: holds files that are not part of an embdebias output ({shown}); "
                             f"refusing to replace it (move them out, or choose a new path)")


@contextlib.contextmanager
def atomic_file(target, *, inputs=()):
    """Yield a temporary path next to ``target``; rename it to ``target`` on success.

    ``inputs`` lists files being read: writing over one of them is refused.
    """
    target = Path(target)
    check_output(target, inputs)
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
def atomic_dir(target, *, inputs=(), replaceable: str = "embdebias.json", contents=None):
    """Yield a temporary directory next to ``target``; swap it in on success.

    An existing ``target`` directory is replaced only when it is empty or holds the
    file ``replaceable`` (the marker of a directory embdebias wrote) and, if
    ``contents`` is given, nothing but the names in it (:func:`check_replaceable`);
    it is moved aside first and deleted only after the new one is in place.
    """
    target = Path(target)
    check_output(target, inputs)
    check_replaceable(target, directory=True, replaceable=replaceable, contents=contents)
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
