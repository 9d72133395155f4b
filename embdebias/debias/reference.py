"""A plain, per-word hard debias written straight from Bolukbasi et al. (2016).

It exists to validate :class:`embdebias.debias.HardDebias` (tests compare the two)
and as the baseline of ``benchmarks/bench_hard.py``. It loops over every word in
Python and holds everything in memory: use :class:`HardDebias` for real work.
"""

from __future__ import annotations

import numpy as np


def hard_debias_per_word(words, vectors, basis, gender_specific, equalize_pairs):
    """Return debiased vectors (float64) for ``words``/``vectors`` (n, d).

    ``basis`` is the (k, d) orthonormal bias subspace; ``gender_specific`` the set of
    words kept; ``equalize_pairs`` the (a, b) pairs to equalize, applied in order.
    """
    B = np.asarray(basis, dtype=np.float64)
    index = {w: i for i, w in enumerate(words)}
    out = np.array(vectors, dtype=np.float64)
    for i, w in enumerate(words):
        v = out[i] / np.linalg.norm(out[i])
        if w not in gender_specific:
            v = v - B.T @ (B @ v)
            v = v / np.linalg.norm(v)
        out[i] = v
    for a, b in equalize_pairs:
        if a not in index or b not in index:
            continue
        ia, ib = index[a], index[b]
        mu = (out[ia] + out[ib]) / 2
        mu_b = B.T @ (B @ mu)
        nu = mu - mu_b
        scale = np.sqrt(1 - nu @ nu)
        for i in (ia, ib):
            w_b = B.T @ (B @ out[i])
            diff = w_b - mu_b
            out[i] = nu + scale * diff / np.linalg.norm(diff)
    return out
