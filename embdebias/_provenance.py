"""Which run wrote an output, and is it unchanged since: stamps for a run's files.

A run that writes an output records a *stamp*: its identity token (the token of the
lock it holds, :func:`embdebias._lock.output_lock`) and, for each file, its size,
``mtime_ns`` and a fast content fingerprint (a BLAKE2b digest of the whole file up to
1 MiB, of 64 evenly spaced 4 KiB blocks, the first and the last among them, beyond).
A directory output (the native format) is stamped file by file. Before it promotes,
reports or reuses a file, a run checks the stamp (:func:`check_stamp`): a file another
run wrote, or changed since it was written, is then never taken for the run's own.

A rename keeps size, ``mtime_ns`` and content, so a stamp taken in the staging
directory still holds once the file is moved into the output directory, and in a copy
made with ``cp -p``. The fingerprint reads at most 256 KiB, whatever the size (a few
milliseconds for a 3.6 GB matrix); it catches a rewrite with the same size and mtime, not
a forger.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from .errors import OutputChangedError

# Files up to this size are hashed whole.
_WHOLE_BYTES = 1 << 20
_BLOCK = 4096
_BLOCKS = 64


def fingerprint(path) -> dict:
    """``{"size", "mtime_ns", "blake2b"}`` of a regular file; ``{"files": {name: ...}}`` of a
    directory (its regular files, not recursive).

    Raises
    ------
    OSError
        ``path`` is missing or unreadable.
    """
    path = Path(path)
    if path.is_dir():
        return {"files": {entry.name: _file_fingerprint(Path(entry.path))
                          for entry in sorted(os.scandir(path), key=lambda e: e.name)
                          if entry.is_file(follow_symlinks=False)}}
    return _file_fingerprint(path)


def _file_fingerprint(path: Path) -> dict:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)  # a FIFO is not waited on
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(0, "not a regular file", os.fspath(path))
        digest = hashlib.blake2b(digest_size=16)
        size = st.st_size
        if size <= _WHOLE_BYTES:
            digest.update(os.pread(fd, size, 0))
        else:
            last = size - _BLOCK
            for i in range(_BLOCKS):
                digest.update(os.pread(fd, _BLOCK, last * i // (_BLOCKS - 1)))
        return {"size": size, "mtime_ns": st.st_mtime_ns, "blake2b": digest.hexdigest()}
    finally:
        os.close(fd)


def stamp(root, names, token: str) -> dict:
    """The stamp of the outputs ``names`` (files or directories in ``root``) written by ``token``.

    A JSON-ready ``{"token": token, "files": {name: fingerprint}}``, to be kept with the
    step's record (``run_state.json``).
    """
    root = Path(root)
    return {"token": token, "files": {name: fingerprint(root / name) for name in names}}


def stamp_problem(record, root, *, token: str | None = None) -> str | None:
    """Why the outputs of stamp ``record`` in ``root`` are not the ones it describes (None: they are).

    Parameters
    ----------
    record : dict
        A :func:`stamp` (read back from JSON: anything else is reported as a problem).
    root : path-like
        Where the outputs are now (the staging or the output directory).
    token : str, optional
        Also require that this token wrote them (the current run's own outputs).
    """
    if not _is_stamp(record):
        return "no record of which run wrote it"
    if token is not None and record["token"] != token:
        return f"written by another run (token {record['token']}, this run's is {token})"
    root = Path(root)
    for name, expected in record["files"].items():
        try:
            found = fingerprint(root / name)
        except OSError as exc:
            return f"{name}: {exc.strerror or 'unreadable'}"
        if found != expected:
            return f"{name}: {_difference(expected, found)} since it was written"
    return None


def check_stamp(record, root, *, token: str | None = None, what: str = "output") -> None:
    """Raise :class:`~embdebias.errors.OutputChangedError` when :func:`stamp_problem` finds one."""
    problem = stamp_problem(record, root, token=token)
    if problem is not None:
        raise OutputChangedError(f"{Path(root)}: the {what} is not the one this run wrote ({problem}); another "
                                 f"process wrote there meanwhile; nothing of it is used")


def _is_stamp(record) -> bool:
    return (isinstance(record, dict) and isinstance(record.get("token"), str)
            and isinstance(record.get("files"), dict) and bool(record["files"])
            and all(isinstance(k, str) and "/" not in k and k not in ("", ".", "..") for k in record["files"]))


def _difference(expected, found) -> str:
    """What changed between two fingerprints, in words."""
    was_dir = isinstance(expected, dict) and isinstance(expected.get("files"), dict)
    if not isinstance(expected, dict) or was_dir != ("files" in found):
        return "replaced (a file where a directory was, or the reverse)"
    if was_dir:
        if expected["files"].keys() != found["files"].keys():
            return "its files were added or removed"
        name = next(n for n in expected["files"] if expected["files"][n] != found["files"][n])
        return f"{name} {_difference(expected['files'][name], found['files'][name])}"
    for field, words in (("size", "changed size"), ("mtime_ns", "was modified"), ("blake2b", "changed content")):
        if expected.get(field) != found.get(field):
            return words
    return "changed"
