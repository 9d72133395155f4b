"""Atomic output: write to a temporary name in the target's directory, then rename.

An interrupted or failed write leaves the target untouched (the old file, or no
file) and removes its temporary; a write never goes to the file being read, nor to
a companion file of it (gensim's ``INPUT.*.npy``).

Temporaries are named ``.NAME.PID.XXXXXXXX.tmp`` (``.old`` for a directory moved
aside, ``.work`` for a scratch directory, ``.swap`` for the journal of a directory
being replaced): hidden, with the writer's process id. A process killed with SIGKILL
cannot remove its own; :func:`clean_stale_temporaries` removes, at the next command
writing to the same directory, those whose process is gone (or whose process id now
belongs to a younger process). Nothing else is ever removed by it: only names of
exactly that pattern. A directory replacement killed between its two renames
(:func:`replace_dir`) is first finished from its journal, so that cleaning never
deletes both the old and the new output.

A write that fails because the disk is full (or the quota or file size limit is
reached) raises the ``OSError`` with the output's name as its ``filename``: the
error of a ``write`` names no file, and the temporary's name means nothing to a user.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import tempfile
import threading
from pathlib import Path

from ._lock import LOCK_SUFFIX, describe_holder, remove_stale_lock
from ._lock import pid_alive as _pid_alive
from .errors import EmbdebiasError

#: Endings of embdebias temporaries: a file or directory being written, a replaced
#: directory moved aside, a scratch directory.
TEMP_KINDS = ("tmp", "old", "work")
# ".NAME.PID.RANDOM.KIND" plus, for gensim's companion arrays, more after KIND.
_TEMP_NAME = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]{1,10})\.[a-z0-9_]{8}\.(?P<kind>tmp|old|work|swap)(?:\..*)?",
                        re.S)
#: The ending of the journal :func:`replace_dir` keeps while it swaps two directories.
JOURNAL_KIND = "swap"
# Errors of a full disk, a full quota, a file size limit: the output's name is added to them.
_FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
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
    removed, and lock files that no process holds (a killed writer's,
    :mod:`embdebias._lock`); everything else is left alone. A directory replacement such
    a process left half-done is finished first (:func:`recover_replacements`). Errors (a file
    removed meanwhile, no permission) are ignored: cleaning is best effort.

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
    keep = recover_replacements(directory, log)
    removed = []
    for entry, match in _stale_entries(directory):
        if entry.name in keep or match["kind"] == JOURNAL_KIND:
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
    return removed + _remove_stale_locks(directory, log)


def _remove_stale_locks(directory: Path, log) -> list[Path]:
    """Remove the lock files in ``directory`` that no process holds (:func:`embdebias._lock.remove_stale_lock`)."""
    removed = []
    try:
        names = [e.name for e in os.scandir(directory) if e.name.startswith(".") and e.name.endswith(LOCK_SUFFIX)]
    except OSError:
        return removed
    for name in names:
        record = remove_stale_lock(directory / name)
        if record is None:
            continue
        removed.append(directory / name)
        if log is not None:
            left = f"the lock left by {describe_holder(record)}" if record else "a lock file nobody held"
            log(f"removed {directory / name}, {left} (no longer held)")
    return removed


def _stale_entries(directory: Path) -> list:
    """``(entry, name match)`` of every embdebias temporary in ``directory`` whose process is gone."""
    try:
        entries = list(os.scandir(directory))
    except OSError:  # missing, not a directory, not readable: nothing to clean
        return []
    found = []
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is not None and _is_stale(entry, int(match["pid"])):
            found.append((entry, match))
    return found


def recover_replacements(directory, log=None) -> set[str]:
    """Finish the directory replacements in ``directory`` that a process killed between its two
    renames left half-done (:func:`replace_dir`), from their journals.

    When the output is missing, the new directory is moved in if it is there (it was
    complete: the journal is written only then), else the old one is moved back. The
    output left at its name, the journal is removed; what is left of the other
    directory is then an ordinary stale temporary.

    Returns
    -------
    set of str
        Names in ``directory`` that must not be cleaned: those of a replacement that
        could not be finished (an error), so that a later attempt still can.
    """
    directory = Path(directory)
    keep = set()
    for entry, match in _stale_entries(directory):
        if match["kind"] != JOURNAL_KIND:
            continue
        journal = Path(entry.path)
        plan = _read_journal(journal)
        try:
            if plan is not None:
                _finish_replacement(directory, plan, match["pid"], log)
            journal.unlink()
        except OSError:
            keep.update([journal.name] + ([plan["old"], Path(plan["new"]).parts[0]] if plan else []))
    return keep


def _finish_replacement(directory: Path, plan: dict, pid: str, log) -> None:
    """Put the new directory (or else the old one) at the journal's target, if it is missing."""
    target, old, new = directory / plan["target"], directory / plan["old"], directory / plan["new"]
    if os.path.lexists(target):
        return  # the renames were both done, or neither: the target is the one to keep
    if new.is_dir() and not new.is_symlink():
        os.rename(new, target)
        done = "finished it: the new output is in place"
    elif os.path.lexists(old):
        os.rename(old, target)
        done = "restored the old output (the new one is gone)"
    else:
        return
    if log is not None:
        log(f"{target}: process {pid} was killed while replacing it; {done}")


def _write_journal(target: Path, old: Path, new: Path) -> Path:
    """Record a replacement about to happen: ``target`` moves to ``old``, then ``new`` to ``target``."""
    parent = target.parent
    plan = {"target": target.name, "old": old.name,
            "new": os.path.relpath(os.path.abspath(new), os.path.abspath(parent))}
    fd, journal = tempfile.mkstemp(prefix=temp_prefix(target), suffix=f".{JOURNAL_KIND}", dir=parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(plan))
    return Path(journal)


def _read_journal(journal: Path) -> dict | None:
    """The plan of a journal, if it is one :func:`_write_journal` wrote (it comes from a file: every
    name must stay in the journal's directory); else None."""
    try:
        with open(journal, "rb") as fh:
            plan = json.loads(fh.read(1 << 16).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(plan, dict) or not all(isinstance(plan.get(k), str) and "\0" not in plan[k]
                                             for k in ("target", "old", "new")):
        return None
    return plan if _journal_names_ok(plan["target"], plan["old"], Path(plan["new"])) else None


def _journal_names_ok(target: str, old: str, new: Path) -> bool:
    """A plain target name, an ``.old`` temporary's name, and a relative path going nowhere up."""
    old_name = _TEMP_NAME.fullmatch(old) if "/" not in old else None
    return (target not in ("", ".", "..") and "/" not in target and old_name is not None
            and old_name["kind"] == "old" and bool(new.parts) and not new.is_absolute() and ".." not in new.parts)


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
    if target.parent.is_dir():  # a replacement killed half-way is finished before the target is judged
        recover_replacements(target.parent, log)
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
    except BaseException as exc:
        if tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _name_output(exc, target, tmp)
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
    except BaseException as exc:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        _name_output(exc, target, tmp)
        raise


def replace_dir(new, target) -> None:
    """Rename the directory ``new`` to ``target``, replacing what is there.

    The old ``target`` (a directory, or a symlink to one) is moved aside (a ``.old``
    temporary), the new one renamed in, then the old one deleted (a symlink is removed,
    never what it points to); SIGINT and SIGTERM wait until both renames are done, and a
    failed second rename puts the old one back. A journal (a ``.swap`` temporary naming
    the three) exists during the renames: a SIGKILL between them leaves it, and the next
    command writing to the directory finishes the replacement from it
    (:func:`recover_replacements`) before removing any temporary.
    """
    new, target = Path(new), Path(target)
    with signals_deferred():
        old = journal = None
        if os.path.lexists(target):
            old = make_temp_dir(target, "old")
            os.rmdir(old)
            journal = _write_journal(target, old, new)
            os.rename(target, old)
        try:
            os.rename(new, target)
        except BaseException:
            if old is not None:
                os.rename(old, target)  # should this fail, the journal stays for the next command
            _remove_journal(journal)
            raise
        _remove_journal(journal)
    if old is not None:
        _remove_tree(old)


def _remove_journal(journal: Path | None) -> None:
    if journal is not None:
        with contextlib.suppress(FileNotFoundError):
            journal.unlink()


def _remove_tree(path: Path) -> None:
    """Delete a directory tree, or only the link when ``path`` is a symlink (best effort)."""
    if path.is_symlink() or not path.is_dir():
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        shutil.rmtree(path, ignore_errors=True)


def _name_output(exc: BaseException, target: Path, tmp) -> None:
    """Give a full-disk error the output's name (see the module docstring)."""
    if not isinstance(exc, OSError) or exc.errno not in _FULL_DISK:
        return
    if exc.filename is None or (tmp is not None and os.fspath(exc.filename).startswith(os.fspath(tmp))):
        exc.filename = os.fspath(target)
        exc.filename2 = None
        exc.strerror = f"{exc.strerror or os.strerror(exc.errno)} while writing it (nothing was replaced)"
