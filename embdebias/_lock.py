"""An exclusive lock on an output, so that two processes never write the same one.

The lock is a small file, ``.NAME.embdebias-lock`` beside an output that is replaced
by a rename (a native directory, any file), or ``.embdebias-lock`` inside a directory
that is written into (``run``'s output directory). The holder keeps it open with
``fcntl.flock``: the kernel releases the lock when the holder's process ends, however
it ends, so a lock can never outlive its holder. The file also holds a record of the
holder (process id, host, purpose, start time and a random token) for the message the
next writer gets:

- while the holder runs, another writer gets :class:`~embdebias.errors.OutputLockedError`
  (one line naming the holder's pid and host; the CLI exits with status 2);
- a lock file whose holder died (SIGKILL, a crash: the file is there but nothing holds
  the flock) is taken over, with a warning naming the dead process.

A holder removes the file when it releases the lock, removing it while still holding
the flock. A writer that opened the file before that, and got the flock once it was
released, finds that its descriptor no longer is the file at that name, and starts
again on the new one: two writers never both believe they hold the lock.

The lock is re-entrant within a process: a command that locks its output and a writer
inside it that locks the same output share one lock (and one token). It guards writers
against writers; readers take no lock (a reader never sees a half-written output anyway,
see :mod:`embdebias._atomic`). Locks on network file systems are only as good as their
``flock``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import secrets
import socket
import stat
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from ._warn import warn
from .errors import EmbdebiasError, OutputLockedError

#: The name of a lock file ends with this (and starts with a dot: hidden).
LOCK_SUFFIX = ".embdebias-lock"
# The record is a few hundred bytes; more is not ours and is not read.
_MAX_RECORD = 4096
# A contender may find the record not written yet (the holder writes it just after locking).
_RECORD_WAIT_S = 0.2
# How often a writer starts again because the file it locked was removed meanwhile (see above).
_MAX_ATTEMPTS = 50

_held: dict[str, str] = {}  # lock file -> token, of the locks this process holds
_held_guard = threading.Lock()


def _forget_after_fork() -> None:
    # A forked child shares the parent's descriptors (and so its flocks) but does not hold them.
    _held.clear()


os.register_at_fork(after_in_child=_forget_after_fork)


def lock_path(target, *, inside: bool = False) -> Path:
    """The lock file of ``target``: ``.NAME.embdebias-lock`` beside it, or ``.embdebias-lock`` in it."""
    target = Path(target)
    if inside:
        return target / LOCK_SUFFIX
    absolute = Path(os.path.abspath(target))  # "." and "out/." name a directory too
    return absolute.parent / f".{absolute.name}{LOCK_SUFFIX}"


def new_token() -> str:
    """A random identity token (16 hex digits) for one run or one write."""
    return secrets.token_hex(8)


@contextlib.contextmanager
def output_lock(target, *, purpose: str = "write", inside: bool = False, wait: float = 0.0):
    """Hold the exclusive lock of ``target`` for the duration; yield the holder's token.

    Parameters
    ----------
    target : path-like
        The output (file or directory) to lock. It need not exist. The directory the lock
        file goes in is created if missing (with ``inside``, ``target`` itself).
    purpose : str
        What the holder does ("run", "convert", ...), named in another writer's message.
    inside : bool
        Put the lock file in the directory ``target`` (for a directory written into)
        rather than beside it (for an output replaced by a rename).
    wait : float
        Seconds to wait for a busy lock before giving up (0: fail at once).

    Yields
    ------
    str
        The holder's token (:func:`new_token`); a nested lock of the same output in the
        same process yields the outer one's.

    Raises
    ------
    OutputLockedError
        Another process holds the lock (after ``wait`` seconds).
    EmbdebiasError
        The lock file cannot be created (the directory is not writable) or is not a
        regular file.
    """
    path = lock_path(target, inside=inside)
    key = os.path.join(os.path.realpath(path.parent), path.name)
    with _held_guard:
        held = _held.get(key)
    if held is not None:  # nested in this process's own lock of the same output: that one is released
        yield held
        return
    fd = _acquire(path, Path(target), purpose, wait)
    token = new_token()
    try:
        try:
            _write_record(fd, {"pid": os.getpid(), "host": socket.gethostname(), "purpose": purpose,
                               "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "token": token, "target": os.fspath(target)})
        except OSError as exc:  # a full disk: no output could be written either
            raise EmbdebiasError(f"{target}: cannot write its lock file {path} ({exc.strerror})") from None
        with _held_guard:
            _held[key] = token
        yield token
    finally:
        with _held_guard:
            _held.pop(key, None)
        _release(fd, path)


def _acquire(path: Path, target: Path, purpose: str, wait: float) -> int:
    """A descriptor of ``path`` holding its flock (see the module docstring)."""
    deadline = time.monotonic() + wait
    for _ in range(_MAX_ATTEMPTS):
        fd = _open(path, target)
        try:
            _flock(fd, path, target, deadline)
            if _is_named(fd, path):
                _warn_taken_over(fd, target)
                return fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # the holder removed it as we locked: lock the file now at that name
    raise EmbdebiasError(f"{target}: could not lock {path}: it was replaced {_MAX_ATTEMPTS} times meanwhile")


def _open(path: Path, target: Path) -> int:
    """Open (creating) the lock file, never through a symlink, and only a regular file."""
    try:
        if not path.parent.is_dir():
            path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise EmbdebiasError(f"{target}: cannot create its lock file {path} ({exc.strerror}); the directory "
                             f"must be writable") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise EmbdebiasError(f"{target}: its lock file {path} is not a regular file; remove it")
    return fd


def _flock(fd: int, path: Path, target: Path, deadline: float) -> None:
    """Take the flock of ``fd``, polling until ``deadline``; OutputLockedError when it stays busy."""
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise EmbdebiasError(f"{target}: cannot lock {path} ({exc.strerror})") from None
        if time.monotonic() >= deadline:
            holder = _read_record(fd, wait=_RECORD_WAIT_S)
            raise OutputLockedError(_busy_message(target, holder), holder)
        time.sleep(0.05)


def _is_named(fd: int, path: Path) -> bool:
    """True if ``path`` still names the file open as ``fd``."""
    try:
        named = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (mine.st_dev, mine.st_ino)


def _release(fd: int, path: Path) -> None:
    """Remove the lock file (still holding the flock, see the module docstring), then unlock."""
    try:
        if _is_named(fd, path):
            os.unlink(path)
    except OSError:
        pass  # a lock file left behind is taken over by the next writer
    finally:
        os.close(fd)


def _write_record(fd: int, record: dict) -> None:
    data = (json.dumps(record) + "\n").encode("utf-8")
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)


def _read_record(fd: int, *, wait: float = 0.0) -> dict:
    """The record in the lock file open as ``fd`` ({} when empty or unreadable after ``wait`` seconds)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            data = os.pread(fd, _MAX_RECORD, 0)
            record = json.loads(data.decode("utf-8")) if data.strip() else None
        except (OSError, ValueError):
            record = None
        if isinstance(record, dict) or time.monotonic() >= deadline:
            return _clean_record(record) if isinstance(record, dict) else {}
        time.sleep(0.02)


def _clean_record(record: dict) -> dict:
    """The fields of a record that are fit to print (it comes from a file)."""
    out = {}
    if type(record.get("pid")) is int:
        out["pid"] = record["pid"]
    for field in ("host", "purpose", "started", "token"):
        value = record.get(field)
        if isinstance(value, str) and value.isprintable() and 0 < len(value) <= 200:
            out[field] = value
    return out


def describe_holder(record: dict) -> str:
    """``process PID on HOST (PURPOSE since STARTED)``, with what the record has."""
    pid = record.get("pid", "unknown")
    text = f"process {pid} on {record.get('host', 'an unknown host')}"
    details = [record[k] for k in ("purpose",) if k in record]
    if "started" in record:
        details.append(f"since {record['started']}")
    return text + (f" ({' '.join(details)})" if details else "")


def _busy_message(target: Path, record: dict) -> str:
    if not record:
        return (f"{target}: being written by another process (its lock record is unreadable); wait for it "
                f"to finish or write elsewhere")
    return (f"{target}: being written by embdebias {describe_holder(record)}; wait for it to finish or write "
            f"elsewhere (two writers would mix their results)")


def _warn_taken_over(fd: int, target: Path) -> None:
    """Warn when the lock file holds an earlier holder's record: that holder died without releasing it."""
    try:
        if os.fstat(fd).st_size == 0:
            return  # new (or released and recreated): nobody to name
    except OSError:
        return
    record = _read_record(fd)
    if not record:
        warn(f"{target}: taking over a lock file left by a process that is gone (its record is "
             f"unreadable)")
        return
    gone = ("which is no longer running" if record.get("host") == socket.gethostname()
            and not pid_alive(record.get("pid", 0)) else "which no longer holds it")
    warn(f"{target}: taking over the lock left by {describe_holder(record)}, {gone}; that process "
         f"ended without finishing")


def remove_stale_lock(path) -> dict | None:
    """Remove the lock file ``path`` if no process holds it (a killed holder's).

    Safe against a writer taking it meanwhile: the file is removed while its flock is
    held, as a releasing holder does (see the module docstring).

    Returns
    -------
    dict or None
        The record of its last holder ({} if it has none) when removed; None when it is
        held, gone, not a regular file or cannot be removed.
    """
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        if not _is_named(fd, path):
            return None
        record = _read_record(fd)
        os.unlink(path)
        return record
    except OSError:  # held (EWOULDBLOCK), or removed meanwhile
        return None
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    """True if a process with this id exists (on this machine)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    except (OverflowError, OSError):
        return False
    return True
