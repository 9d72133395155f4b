"""Row-wise vector arithmetic shared by every module (one implementation of each)."""

from __future__ import annotations

import numpy as np


def row_norms(x: np.ndarray) -> np.ndarray:
    """Euclidean norm of every row of a 2-d array (no ``(n, d)`` temporary)."""
    return np.sqrt(np.einsum("ij,ij->i", x, x))


def unit_rows(x, *, copy: bool = False, out: np.ndarray | None = None) -> np.ndarray:
    """Rows of ``x`` scaled to unit length; zero rows stay zero.

    ``copy=False`` (the debiasers' hot path) scales a float array in place and returns
    it; ``copy=True`` leaves ``x`` alone and returns a new float64 array; ``out``, an
    array of the same shape, receives the unit rows instead of ``x`` (and is returned).
    A 1-d ``x`` is one vector.
    """
    if copy:
        x = np.array(x, dtype=np.float64)
    if x.ndim == 1:
        return unit_rows(x[None, :], out=None if out is None else out[None, :])[0]
    norms = row_norms(x)
    # Dividing a zero (or NaN) row by 1 leaves it as it is, like ``where=norms > 0``
    # would, at half the cost of a masked division.
    norms[~(norms > 0)] = 1
    return np.divide(x, norms[:, None], out=x if out is None else out)
