"""Paths inside an output directory: the one rule for a name that becomes a path component, and
the directories embdebias enters there, never through a link it did not make.

**Names.** A name that becomes a path component of an output (an attribute's
subdirectory in a run of several attributes, a debiaser's output stem, a stored sweep
point, the Parquet file a report's JSON names) must pass :func:`check_name`: 1 to
:data:`MAX_NAME` characters, each a letter or digit of any script (``str.isalnum``) or one
of ``_ - .``, the first not ``.``. So no separator (``/``, ``\\``, and no look-alike: the
division slash or the fullwidth solidus are neither letters nor digits), no NUL, no
control character, neither ``.`` nor ``..``, no hidden name, nothing empty or long. A name
outside the rule is refused with one line naming where it came from, never mapped to a
slug: two names mapped to one slug would share a directory, and a report names each
directory by what the user wrote. Names that differ only in case are refused together
by the callers that make sibling directories (:func:`check_distinct`), since they are
one directory on a case-insensitive file system.

**Links.** The output directory itself may be a link the user made (``--out-dir results``
pointing to a larger disk): it is followed. Below it, :func:`inside` and :func:`make_dirs`
look at every component with ``lstat``: a symbolic link where embdebias would enter,
write or delete (a pre-planted ``embdebias-partial``, a sweep's ``points/``, a
``run_state.json``) is refused, as is a file where a directory goes. The checks run when
the output plan is checked and again where the directory is entered; a process that
swaps a component for a link between the two, with write access to the output directory
itself, is outside what they guard against (the output lock keeps other embdebias
processes out).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import EmbdebiasError, quote

#: The longest name (characters) of a path component that comes from data.
MAX_NAME = 64
_PUNCTUATION = frozenset("_-.")
_SEPARATORS = frozenset(filter(None, ("/", "\\", os.sep, os.altsep, "\0")))
RULE = f"1 to {MAX_NAME} letters, digits, '_', '-' or '.', not starting with '.'"


def name_problem(name) -> str | None:
    """Why ``name`` cannot be a path component under the rule of the module docstring (None: it can)."""
    if not isinstance(name, str):
        return f"expected a string, got {type(name).__name__}"
    if not name:
        return "empty"
    if len(name) > MAX_NAME:
        return f"{len(name):,} characters"
    if name[0] == ".":
        return "starts with '.'"
    bad = next((ch for ch in name if not (ch.isalnum() or ch in _PUNCTUATION)), None)
    if bad is not None:
        return f"holds {bad!r} (U+{ord(bad):04X})"
    return None


def check_name(name, where: str) -> str:
    """``name`` if it can be a path component; else an :class:`EmbdebiasError` ``"WHERE: NAME ..."``.

    ``where`` says where the name comes from (``"attrs.json: name"``, ``"debiaser 'x': output_stem"``).
    """
    problem = name_problem(name)
    if problem is not None:
        raise EmbdebiasError(f"{where}: {quote(name)} cannot name a file or directory ({problem}); "
                             f"expected {RULE}")
    return name


def check_distinct(names, where: str) -> None:
    """Refuse names of sibling outputs that are equal once case is ignored (one directory on a
    case-insensitive file system)."""
    seen: dict = {}
    for name in names:
        key = name.casefold()
        if key in seen:
            raise EmbdebiasError(f"{where}: {quote(seen[key])} and {quote(name)} would be one directory (names "
                                 f"that differ only in case are one on some file systems); rename one")
        seen[key] = name


def _link_problem(path: Path, directory: bool) -> str | None:
    """Why ``path`` cannot be entered or written by embdebias (None: it is missing or fine)."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # missing (the OSError of making it names it)
        return None
    if stat.S_ISLNK(mode):
        return ("is a symbolic link; embdebias does not follow links inside its output directory that it did "
                "not make (remove it, or choose another output directory)")
    if directory and not stat.S_ISDIR(mode):
        return "exists and is not a directory"
    return None


def inside(root, *parts, directory: bool = False) -> Path:
    """``root / parts...``, checked: each part one path component (not empty, ``.`` or ``..``, without
    a separator or NUL: a name from data has passed :func:`check_name` before), and no existing
    component below ``root`` a symbolic link (the last one, with ``directory``, a directory if it
    exists).

    Raises
    ------
    EmbdebiasError
        A part is not one component, or a component is a link or (where a directory goes) a file.
    """
    path = Path(root)
    for i, part in enumerate(parts):
        if not isinstance(part, str) or part in ("", ".", "..") or any(c in part for c in _SEPARATORS):
            raise EmbdebiasError(f"{path}: {quote(part)} is not one file name inside it")
        path = path / part
        problem = _link_problem(path, directory or i < len(parts) - 1)
        if problem is not None:
            raise EmbdebiasError(f"{path}: {problem}")
    return path


def make_dirs(root, *parts) -> Path:
    """:func:`inside` ``root / parts...`` as directories, creating the missing ones (``root`` too):
    each checked with ``lstat`` before and after its ``mkdir``, so never a link."""
    Path(root).mkdir(parents=True, exist_ok=True)
    for i in range(1, len(parts) + 1):
        try:
            os.mkdir(inside(root, *parts[:i], directory=True))
        except FileExistsError:
            pass
    return inside(root, *parts, directory=True)  # made by someone else meanwhile: still not a link


def is_own_file(path) -> bool:
    """Whether ``path`` is a regular file and not a symbolic link (an embdebias marker or state)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
