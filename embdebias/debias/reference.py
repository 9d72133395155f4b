"""Plain, per-word hard debias written straight from Bolukbasi et al. (2016).

It exists to validate :class:`embdebias.debias.HardDebias` (tests compare the two)
and as the baseline of ``benchmarks/bench_hard.py``. It loops over every word in
Python and holds everything in float64 memory: use :class:`HardDebias` for real work.

* :func:`bolukbasi_hard_debias` is the whole algorithm as the authors describe and
  release it, from the word lists to the vectors: PCA over the pair-centred unit
  vectors of the definitional pairs, neutralize every word not in the
  gender-specific list (taken as given), equalize the lower-, Title- and UPPER-case
  forms of every equalize pair.
* :func:`hard_debias_per_word` is the same neutralize/equalize loop for a given basis
  and already resolved lists.

Both orient an equalize pair whose words were both neutralized by the words'
difference before neutralization (the authors' code takes the sign of rounding
noise there; see :func:`embdebias.debias.hard.equalize_rows`).
"""

from __future__ import annotations

import numpy as np

#: Gender parts smaller than this count as absent (as in ``HardDebias``).
_TOL = 1e-5


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def _equalize_pair(out, original, ia, ib, B) -> None:
    """Bolukbasi's equalize of rows ``ia``/``ib`` of ``out`` about the subspace ``B`` (k, d)."""
    mu = (out[ia] + out[ib]) / 2
    mu_b = B.T @ (B @ mu)
    nu = mu - mu_b
    scale = np.sqrt(max(1 - nu @ nu, 0.0))
    half = B @ (out[ia] - out[ib]) / 2
    if np.linalg.norm(half) <= _TOL:
        half = B @ (original[ia] - original[ib]) / 2
    if np.linalg.norm(half) <= _TOL:
        return
    step = scale * (B.T @ _unit(half))
    out[ia] = nu + step
    out[ib] = nu - step


def hard_debias_per_word(words, vectors, basis, gender_specific, equalize_pairs):
    """Debiased vectors (float64) for ``words``/``vectors`` (n, d).

    ``basis`` is the (k, d) orthonormal bias subspace; ``gender_specific`` the set of
    words kept; ``equalize_pairs`` the (a, b) pairs to equalize, applied in order.
    """
    B = np.atleast_2d(np.asarray(basis, dtype=np.float64))
    index = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    original = np.array([_unit(v) for v in np.asarray(vectors, dtype=np.float64)])
    out = original.copy()
    for i, w in enumerate(words):
        if w not in gender_specific:
            out[i] = _unit(out[i] - B.T @ (B @ out[i]))
    for a, b in equalize_pairs:
        if a in index and b in index:
            _equalize_pair(out, original, index[a], index[b], B)
    return out


def bolukbasi_hard_debias(words, vectors, definitional, gender_specific, equalize):
    """Bolukbasi et al.'s hard debias from the lists, one word at a time.

    Parameters
    ----------
    words, vectors : the vocabulary and its (n, d) vectors.
    definitional : (a, b) pairs; a word missing in its case is looked up in lower case.
    gender_specific : words kept out of neutralization, exactly as given.
    equalize : (a, b) pairs; their ``lower``/``title``/``upper`` forms are equalized.

    Returns
    -------
    (debiased vectors as float64, the gender direction)
    """
    from sklearn.decomposition import PCA

    index = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    unit = np.array([_unit(v) for v in np.asarray(vectors, dtype=np.float64)])

    def row(w):
        return index[w] if w in index else index[w.lower()]

    matrix = []
    for a, b in definitional:
        center = (unit[row(a)] + unit[row(b)]) / 2
        matrix += [unit[row(a)] - center, unit[row(b)] - center]
    g = PCA(n_components=1).fit(np.array(matrix)).components_[0]
    candidates = {form for a, b in equalize
                  for form in ((a.lower(), b.lower()), (a.title(), b.title()), (a.upper(), b.upper()))}
    pairs = sorted(p for p in candidates if p[0] in index and p[1] in index)
    return hard_debias_per_word(words, unit, g[None, :], set(gender_specific), pairs), g
