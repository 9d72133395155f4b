"""Atomic output: write to a temporary name in the target's directory, then rename.

An interrupted or failed write leaves the target untouched (the old file, or no
file) and removes its temporary; a write never goes to the file being read, nor to
a companion file of it (gensim's ``INPUT.*.npy``).

Temporaries are named ``.NAME.PID.XXXXXXXX.tmp`` (``.old`` for a directory moved
aside, ``.work`` for a scratch directory): hidden, with the writer's process id. A
process killed with SIGKILL cannot remove its own; :func:`clean_stale_temporaries`
removes, at the next command writing to the same directory, those whose process
is gone (or whose process id now belongs to a younger process). Nothing else is
ever removed by it: only names of exactly that pattern.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from .errors import EmbdebiasError

#: Endings of embdebias temporaries: a file or directory being written, a replaced
#: directory moved aside, a scratch directory.
TEMP_KINDS = ("tmp", "old", "work")
# ".NAME.PID.RANDOM.KIND" plus, for gensim's companion arrays, more after KIND.
_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[a-z0-9_]{8}\.(?:tmp|old|work)(?:\..*)?", re.S)
# Long names are cut so that the temporary's name stays within NAME_MAX (255 bytes).
_NAME_KEPT = 120


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def check_output(target, inputs=()) -> None:
    """Refuse a target that is an input, lies inside an input directory, contains an input,
    or is a companion file of an input (gensim stores large arrays as ``INPUT.NAME.npy``)."""
    target = Path(target)
    where = target.resolve()
    for src in inputs or ():
        if src is None or not isinstance(src, (str, os.PathLike)):
            continue
        src = Path(src)
        if not src.exists():
            continue
        named = src.absolute()  # gensim finds companions by the name given (a symlink's), not its target's
        named = named.parent.resolve() / named.name
        src = src.resolve()
        if where == src or where.is_relative_to(src) or src.is_relative_to(where):
            raise EmbdebiasError(f"{target}: refusing to write over the input {src}; choose another output path")
        if _is_companion(where, src) or _is_companion(where, named):
            raise EmbdebiasError(f"{target}: refusing to write over a companion file of the input {src} "
                                 f"(it is read with it); choose another output path")


def _is_companion(where: Path, src: Path) -> bool:
    """True if ``where`` is ``src``'s companion array: ``SRC.ATTRIBUTE.npy`` next to it (gensim's
    ``SaveLoad`` naming; ``.npz`` beside a compressed ``SRC.gz``)."""
    return (where.parent == src.parent and where.name.startswith(src.name + ".")
            and where.suffix in (".npy", ".npz") and len(where.name) > len(src.name) + len(".npy") + 1)


def temp_prefix(target) -> str:
    """The start of the name of a temporary for ``target``: ``.NAME.PID.`` (see the module docstring)."""
    return f".{Path(target).name[:_NAME_KEPT]}.{os.getpid()}."


def make_temp_dir(target, kind: str = "work") -> Path:
    """A new empty directory next to ``target`` named as an embdebias temporary of ``kind``."""
    if kind not in TEMP_KINDS:
        raise ValueError(f"kind must be one of {TEMP_KINDS}, got {kind!r}")
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=temp_prefix(target), suffix=f".{kind}", dir=target.parent))
    os.chmod(tmp, 0o777 & ~_umask())
    return tmp


def _pid_alive(pid: int) -> bool:
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


def _process_start(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), where ``/proc`` tells; else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        with open("/proc/stat", "rb") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith(b"btime "))
        return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, StopIteration):
        return None


def _is_stale(entry: os.DirEntry, pid: int) -> bool:
    """A temporary is stale when its process is gone, or the process now holding its id
    started after the temporary was last written (the id was reused)."""
    if not _pid_alive(pid):
        return True
    started = _process_start(pid)
    try:
        mtime = entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return False
    # 2 s of slack: the start time has clock-tick resolution and boot time whole seconds.
    return started is not None and mtime < started - 2.0


def clean_stale_temporaries(directory, log=None) -> list[Path]:
    """Remove the embdebias temporaries in ``directory`` left by processes that are gone.

    Only entries named exactly like an embdebias temporary (``.NAME.PID.XXXXXXXX.tmp``,
    ``.old``, ``.work``, see the module docstring) whose process no longer runs are
    removed; everything else is left alone. Errors (a file removed meanwhile, no
    permission) are ignored: cleaning is best effort.

    Parameters
    ----------
    directory : path-like
    log : callable, optional
        Receives one line per removed temporary.

    Returns
    -------
    list of Path
        What was removed.
    """
    directory = Path(directory)
    removed = []
    try:
        entries = list(os.scandir(directory))
    except OSError:  # missing, not a directory, not readable: nothing to clean
        return removed
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is None or not _is_stale(entry, int(match["pid"])):
            continue
        path = Path(entry.path)
        try:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path)
            else:
                path.unlink()
        except OSError:
            continue
        removed.append(path)
        if log is not None:
            log(f"removed {path}, a temporary left by process {match['pid']} (no longer running)")
    return removed


@contextlib.contextmanager
def signals_deferred():
    """Hold SIGINT and SIGTERM back for the duration (a few renames that must happen together).

    A signal that arrives meanwhile is noted and raised again at the end, where the
    handlers in place before (Ctrl-C's KeyboardInterrupt, the CLI's SIGTERM handler)
    act on it. Handlers are swapped rather than the signals blocked: another thread
    (a BLAS pool) would receive a blocked signal. Outside the main thread this does
    nothing (only the main thread can set handlers).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending = []
    previous = {sig: signal.signal(sig, lambda signum, frame: pending.append(signum))
                for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if pending:
            signal.raise_signal(pending[0])


def _existing_output_error(target: Path, resumable) -> EmbdebiasError | None:
    """Why an existing ``target`` may not be written without ``--force`` (None: it may)."""
    if not target.exists() and not target.is_symlink():
        return None
    if resumable is not None:
        markers = (resumable,) if isinstance(resumable, str) else tuple(resumable)
        if not target.is_dir():
            return EmbdebiasError(f"{target}: exists and is not a directory")
        if any((target / m).is_file() for m in markers) or not any(target.iterdir()):
            return None  # an earlier run's output (resumed) or an empty directory
        return EmbdebiasError(f"{target}: an existing directory that is not an earlier run's output (no "
                              f"{' or '.join(markers)}); use --force to write into it anyway (files of yours "
                              f"in it are kept, except those with the names of the run's outputs)")
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
    resumable : str or tuple of str, optional
        For an output directory that a command resumes (``run``): the file(s) that mark
        an earlier output of the command. Such a directory, or an empty one, is used
        without ``force``.
    log : callable, optional
        Receives one line when a parent directory is created, and one per stale
        temporary removed from the directory the output goes to
        (:func:`clean_stale_temporaries`).

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
    clean_stale_temporaries(parent, log)
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
    tmp = None
    try:
        with signals_deferred():  # a signal between creating and naming it would leave it behind
            fd, tmp = tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
            os.close(fd)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        if tmp is not None:
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
    tmp = None
    try:
        with signals_deferred():  # a signal between creating and naming it would leave it behind
            tmp = make_temp_dir(target, "tmp")
        yield tmp
        replace_dir(tmp, target)
    except BaseException:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        raise


def replace_dir(new, target) -> None:
    """Rename the directory ``new`` to ``target``, replacing a directory there.

    The old ``target`` is moved aside (a ``.old`` temporary), the new one renamed in,
    then the old one deleted; SIGINT and SIGTERM wait until both renames are done, and
    a failed second rename puts the old directory back. A SIGKILL in between leaves
    the old one under its ``.old`` name, removed by :func:`clean_stale_temporaries`.
    """
    new, target = Path(new), Path(target)
    with signals_deferred():
        old = None
        if target.exists():
            old = make_temp_dir(target, "old")
            os.rmdir(old)
            os.rename(target, old)
        try:
            os.rename(new, target)
        except BaseException:
            if old is not None:
                os.rename(old, target)
            raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)

