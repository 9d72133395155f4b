"""Warnings that point at the user's line.

A fixed ``stacklevel`` is right for one call path only: the warning that a word list lost words is
raised two frames below ``BiasSubspace.fit`` but five below ``SoftDebias().fit_transform``.
:func:`user_stacklevel` counts the frames instead, up to the first one outside this package, so
that the warning names the user's script or notebook cell, whichever public function they called.
"""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parent) + "/"
#: Frames of these libraries between embdebias's are skipped too: scikit-learn wraps an estimator's
#: ``fit_transform`` (set_output) and calls it from its pipelines.
_LIBRARIES = ("sklearn",)


def _inside(filename: str) -> bool:
    path = str(Path(filename).resolve())
    return path.startswith(_PACKAGE) or any(f"/{name}/" in path for name in _LIBRARIES)


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that makes the warning point
    at the first frame outside embdebias and scikit-learn (1, the caller's own line, when there is none)."""
    frame = sys._getframe(1)  # the function that is about to warn
    level = 1
    while frame is not None and _inside(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level if frame is not None else 1
