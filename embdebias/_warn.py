"""Warnings that point at the user's line.

A fixed ``stacklevel`` is right for one call path only: the warning that a word list lost words is
raised two frames below ``BiasSubspace.fit`` but five below ``SoftDebias().fit_transform``.
:func:`user_stacklevel` counts the frames instead, up to the first one outside this package, so
that the warning names the user's script or notebook cell, whichever public function they called.
:func:`warn` is ``warnings.warn`` with that stack level: every warning the library emits goes through it.

From the command line there is no user frame below the package but the interpreter's own
(``runpy``); the CLI prints warnings as one ``warning: ...`` line without a place, so it does not matter there.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import warnings
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parent) + "/"
#: Frames of these libraries between embdebias's are skipped too: scikit-learn wraps an estimator's
#: ``fit_transform`` (set_output) and calls it from its pipelines.
_LIBRARIES = ("sklearn",)
#: And the standard library's plumbing: the ``__enter__`` of a ``@contextmanager`` (the output
#: locks warn from one) and ``functools``' wrappers run between the user's ``with`` and embdebias.
_PLUMBING = frozenset(str(Path(m.__file__).resolve()) for m in (contextlib, functools))


def _inside(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return path.startswith(_PACKAGE) or path in _PLUMBING or any(f"/{name}/" in path for name in _LIBRARIES)


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that makes the warning point
    at the first frame outside embdebias and scikit-learn (1, the caller's own line, when there is none)."""
    frame = sys._getframe(1)  # the function that is about to warn
    level = 1
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` pointing at the user's line (:func:`user_stacklevel`).

    The library's one way to warn: a fixed ``stacklevel`` points at the user only from the call
    path it was counted for, and a warning shown at a line inside embdebias tells the user nothing
    about which of their calls raised it (nor can they filter it by their module).
    """
    # user_stacklevel counts from this function's frame, which is warnings.warn's stacklevel 1
    warnings.warn(message, category, stacklevel=user_stacklevel())
