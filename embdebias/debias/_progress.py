"""Progress bars of the fits that take seconds to minutes (RAN, INLP, RLACE), off unless asked for.

A fit has no ``progress`` parameter (its parameters are what it learns from, and they are
stored and compared verbatim); whoever runs it asks for bars around the call instead, as
``embdebias run`` does unless ``--quiet``::

    with fit_progress(True):
        debiaser.fit(emb)
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

_SHOW = ContextVar("embdebias_fit_progress", default=False)


@contextmanager
def fit_progress(show: bool = True):
    """Show (``show=True``) or hide the fits' bars within the ``with`` block."""
    token = _SHOW.set(bool(show))
    try:
        yield
    finally:
        _SHOW.reset(token)


def fit_bar(total: int, desc: str, unit: str):
    """A tqdm bar (on stderr, removed when done) that is disabled outside :func:`fit_progress`."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, leave=False, disable=not _SHOW.get())
