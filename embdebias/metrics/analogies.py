"""Bolukbasi et al.'s (2016) generated ``she : he :: x : y`` analogies, by blocked matrix products.

Bolukbasi, T., Chang, K.-W., Zou, J., Saligrama, V. & Kalai, A. (2016). Man is to
computer programmer as woman is to homemaker? Debiasing word embeddings. NeurIPS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._rows import row_norms, unit_rows
from ..errors import EmbdebiasError
from .base import N_SCORED, Metric, register
from ._blocks import block_rows_for
from ._common import as_emb, lookup, unit_vectors

# -- generated analogies ------------------------------------------------------------------------


#: Squared distances below this (64 float32 epsilons) are duplicates at float32 precision.
_DUPLICATE_D2 = 64 * float(np.finfo(np.float32).eps)


def _merge_best(best_s, best_y, keys, scores, partners) -> None:
    """Fold ``(key, score, partner)`` candidates into the running best of every key, in place.

    A key keeps the highest score; among equal scores, the lowest partner index. The
    result does not depend on the order in which candidates arrive.
    """
    if keys.size == 0:
        return
    top = np.full(best_s.size, -np.inf, dtype=best_s.dtype)
    np.maximum.at(top, keys, scores)
    hit = scores == top[keys]
    partner = np.full(best_y.size, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(partner, keys[hit], partners[hit])
    better = (top > best_s) | ((top == best_s) & (partner < best_y))
    best_s[better] = top[better]
    best_y[better] = partner[better]


def _pairs_in_block(sims, mask, start, p, min_cos):
    """Pairs ``(x, y)``, ``x < y``, of a block of rows ``start:`` against columns ``start:``
    within ``delta`` (``cos >= min_cos``) and not duplicates: ``(x, y, score of x -> y)``."""
    np.greater_equal(sims, min_cos, out=mask)
    flat = np.flatnonzero(mask)                      # faster than a 2-d nonzero
    r, c = np.divmod(flat, sims.shape[1])
    d2 = 2.0 - 2.0 * sims.ravel()[flat]
    ok = (c > r) & (d2 > _DUPLICATE_D2)              # upper triangle: each pair once
    x, y = r[ok] + start, c[ok] + start
    return x, y, (p[x] - p[y]) / np.sqrt(d2[ok])


def gender_analogies(embedding, *, seed_pair=("she", "he"), delta: float = 1.0, n: int = 50,
                     n_candidates: int = 50_000, lowercase: bool = True,
                     block_rows: int | None = None) -> list[tuple[str, str, float]]:
    r"""Bolukbasi et al.'s (2016, Section 4 and Appendix) generated analogies ``a : b :: x : y``.

    With the seed pair ``(a, b)`` (default ``("she", "he")``) and the unit direction
    :math:`d = (a - b) / \|a - b\|` of the unit-normalized seed vectors, a pair of
    candidate words ``(x, y)`` with :math:`\|x - y\| \le \delta` (on unit vectors) is
    scored :math:`\cos(d, x - y)`.  Every candidate ``x`` is paired with its best
    ``y`` (the ``y`` within :math:`\delta` with the highest score), and the ``n``
    best-scoring pairs are returned, best first.

    Candidates are the first ``n_candidates`` words in file order (the most frequent
    for the usual files) without the two seed words (``she : he :: she : he`` is no
    finding) and without zero vectors.  ``y`` may repeat across pairs (``x`` does not).

    Computed by blocked matrix products: a block of candidate rows against all
    candidates at a time (memory bounded by the block), the pairs within
    :math:`\delta` picked out of each block of cosines and the best ``y`` of each row
    found by a grouped maximum; since :math:`\cos(d, y - x) = -\cos(d, x - y)`, only
    the upper triangle of the cosine matrix is computed.  Ties go to the ``y`` that
    comes first in the file, whatever the block size.  Cosines are float32; pairs closer than float32
    rounding can resolve (squared distance below 64 float32 epsilons, about
    :math:`\|x - y\| < 0.003`) are treated as duplicates and skipped, and the
    returned scores are recomputed in float64.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    seed_pair : (str, str), default ("she", "he")
    delta : float, default 1.0
        Largest distance ``|x - y|`` of unit vectors (1.0 means cosine >= 0.5).
    n : int, default 50
        Pairs returned.
    n_candidates : int, default 50,000
    lowercase : bool, default True
        Lower-case fallback for the seed words.
    block_rows : int, optional
        Candidate rows per block (default: 64 MiB blocks of cosines).

    Returns
    -------
    list of (str, str, float)
        ``(x, y, cos(d, x - y))``, best first.
    """
    emb = as_emb(embedding)
    if not 0 < delta:
        raise EmbdebiasError(f"gender analogies: delta must be > 0, got {delta}")
    n, n_candidates = int(n), int(n_candidates)
    if n < 1 or n_candidates < 2:
        raise EmbdebiasError(f"gender analogies: need n >= 1 and n_candidates >= 2, got {n} and {n_candidates}")
    lk = lookup(emb, list(seed_pair), name="gender analogies: seed pair", lowercase=lowercase,
                max_missing=0.0, min_size=2)
    a, b = unit_vectors(emb, lk.rows)
    d = unit_rows(a - b)
    limit = min(n_candidates, len(emb))
    vectors = unit_rows(emb.take(slice(0, limit)))
    keep = row_norms(vectors) > 0
    keep[lk.rows[lk.rows < limit]] = False
    rows = np.flatnonzero(keep)
    vectors = np.ascontiguousarray(vectors[rows])
    p = vectors @ d.astype(np.float32)
    min_cos = 1.0 - delta * delta / 2.0
    m = rows.size
    best_s = np.full(m, -np.inf, dtype=np.float32)
    best_y = np.full(m, np.iinfo(np.int64).max, dtype=np.int64)
    first = block_rows_for(m, block_rows)
    buf = np.empty(first * m, dtype=np.float32)
    mask = np.empty(first * m, dtype=bool)
    start = 0
    while start < m:
        # Rows start:stop against columns start: (the upper triangle; score(y, x) = -score(x, y)).
        width = m - start
        stop = min(m, start + min(block_rows_for(width, block_rows), buf.size // width))
        shape = (stop - start, width)
        sims = buf[:shape[0] * width].reshape(shape)
        np.dot(vectors[start:stop], vectors[start:].T, out=sims)
        x, y, score = _pairs_in_block(sims, mask[:sims.size].reshape(shape), start, p, min_cos)
        _merge_best(best_s, best_y, x, score, y)
        _merge_best(best_s, best_y, y, -score, x)
        start = stop
    return _top_pairs(emb, rows, best_y, best_s, d, n)


def _top_pairs(emb, rows, best_y, best_s, d, n):
    """The ``n`` best ``(x, y, score)``, scores recomputed in float64 and re-sorted."""
    order = np.argsort(-best_s, kind="stable")[:n]
    order = order[np.isfinite(best_s[order])]   # an x without any y within delta
    x_rows, y_rows = rows[order], rows[best_y[order]]
    diff = unit_vectors(emb, x_rows) - unit_vectors(emb, y_rows)
    scores = (diff @ d) / row_norms(diff)
    words = emb.words
    out = [(words[int(x)], words[int(y)], float(s)) for x, y, s in zip(x_rows, y_rows, scores)]
    return sorted(out, key=lambda t: -t[2])


@dataclass
class AnalogyListResult:
    """The pairs of :func:`gender_analogies` as a metric result."""

    pairs: list
    missing: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        return float(np.mean([p[2] for p in self.pairs])) if self.pairs else float("nan")

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "missing": {}, "value": self.value, "n_scored": len(self.pairs),
                "listing": ", ".join(f"{x}:{y} ({score:.2f})" for x, y, score in self.pairs[:20])}


@register
class Analogies(Metric):
    name, title = "analogies", "Generated gender analogies"
    function = "gender_analogies"
    legend = ("Bolukbasi et al.'s (2016) generated analogies she : he :: x : y: for each x among the "
              "50,000 most frequent words, the y within distance 1 whose difference x - y best "
              "aligns with she - he; the top pairs are listed per column. Mean score: mean "
              "cos(she - he, x - y) of the top 50 (lower after debiasing means fewer gendered analogies).")
    statistics = {"mean_score": "mean score of the top 50", N_SCORED: "pairs listed"}

    def units(self, ctx):
        return ["she:he"]

    def data(self, ctx):
        return "the column's own 50,000 most frequent words"

    def score(self, emb, unit, ctx):
        pairs = gender_analogies(emb, n=50, lowercase=ctx.lowercase)
        result = AnalogyListResult([list(p) for p in pairs])
        return result, {unit: {"mean_score": result.value, N_SCORED: len(pairs)}}, {}
