"""The extrinsic statistics on bootstrap resamples of the (template x term) score grid.

A resample draws counterfactual templates and, per group, identity terms with
replacement; as a data set of its own (:meth:`FamilyScores.take`) it would be scored by
:mod:`embdebias.fairness` one resample at a time. Here every statistic is written as
weighted sums over the grid, the weights being each template's and each term's number of
draws, so ``B`` resamples are a few matrix products. ``tests/test_extrinsic.py`` checks
every statistic against the library, on the full sample and on resamples.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from .._resample import drawn_counts

#: Statistics computed here (the others are exact functions of these; see extrinsic.py).
TERM_KEYS = ("cf_bcm", "cf_mcm", "cf_mcm_std")
LABEL_KEYS = ("fped", "fned", "tpr_gap")
_CHUNK = 64
#: Resamples per block of :func:`_mean_abs_deviation` (16 x 320 templates x 48 terms: 2 MB).
_MAD_CHUNK = 16


def _over_templates(r: np.ndarray, x: np.ndarray) -> np.ndarray:
    return (r * x).sum(axis=1) / r.sum(axis=1)


def _group_means(matrices: list, r: np.ndarray, cs: list) -> tuple[list, list]:
    """Per group, the weighted numerator and denominator of its mean score over the grid."""
    nums = [((r @ m) * c).sum(axis=1) for m, c in zip(matrices, cs)]
    dens = [r.sum(axis=1) * c.sum(axis=1) for c in cs]
    return nums, dens


def _paired_pcm(fs, r: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Mean |first - second| over the drawn templates and counterpart pairs."""
    cols = fs.pair_columns()
    diff = np.abs(fs.scores[:, cols[:, 0]] - fs.scores[:, cols[:, 1]])  # (units, pairs)
    return ((r @ diff) * p).sum(axis=1) / (r.sum(axis=1) * p.sum(axis=1))


def _chunked(per_chunk, like: np.ndarray, chunk: int = _CHUNK) -> np.ndarray:
    """``per_chunk(slice)`` over the resamples, ``chunk`` at a time ((chunk, units, terms) arrays stay small)."""
    out = np.empty_like(like)
    for s in range(0, like.shape[0], chunk):
        sl = slice(s, s + chunk)
        out[sl] = per_chunk(sl)
    return out


def _mean_abs_deviation(scores: np.ndarray, c: np.ndarray, mean: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``(B, units)``: each template's mean |score - its mean| over the drawn terms (weights ``c``).

    The numbers of the plain ``(|scores - mean| * c).sum(axis=2) / total`` on ``(chunk, units,
    terms)`` blocks in fresh arrays, computed with one buffer per call and blocks of
    :data:`_MAD_CHUNK` resamples that stay in cache (3-4x faster alone, 1.3x in an evaluation). Why the buffer's layout
    follows ``scores``: numpy lays out the plain form's temporaries in the order of its
    operands' strides, and the order of the sum over terms follows it -- pairwise along
    contiguous terms when ``scores`` is C-ordered, term after term (each template's running
    sum) when it is F-ordered (the grid's usual case). The buffer is laid out the same way,
    each element is the same operation on the same numbers, so every sum is the same float
    (``tests/test_extrinsic.py`` compares both layouts with the plain form; the golden runs,
    ``tests/test_golden.py``, hold every interval bit for bit). A matrix-vector product
    for the sum was also faster but summed in another order and moved the last bit."""
    out = np.empty_like(mean)
    n_units, n_terms = scores.shape
    by_term = scores.strides[0] < scores.strides[1]      # F-ordered: templates are contiguous
    shape = (n_terms, n_units) if by_term else (n_units, n_terms)
    block = np.empty((min(_MAD_CHUNK, mean.shape[0]),) + shape)
    grid = scores.T[None] if by_term else scores[None]
    for s in range(0, mean.shape[0], _MAD_CHUNK):
        sl = slice(s, s + _MAD_CHUNK)
        part = block[:mean[sl].shape[0]]
        np.subtract(grid, mean[sl, None, :] if by_term else mean[sl, :, None], out=part)
        np.abs(part, out=part)
        np.multiply(part, c[sl, :, None] if by_term else c[sl, None, :], out=part)
        np.divide(part.sum(axis=1 if by_term else 2), total[sl], out=out[sl])
    return out


def _drawn_range(scores: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``(B, units)``: each template's highest minus lowest score over the terms drawn (``c > 0``).

    Each template's terms are ranked by score once; a resample's highest drawn score is that
    of the best rank among its drawn terms, a minimum over small integers (the undrawn terms
    masked to the largest rank) instead of a max over float scores with -inf written in.
    The scores picked are the same, so the range is the same number. The minimum runs over
    the first axis of (terms, resamples, units) arrays: elementwise minima of whole blocks,
    not a reduction of every short row of terms (7x faster)."""
    n_terms = scores.shape[1]
    kind = np.uint8 if n_terms < 255 else np.int32
    order = np.argsort(-scores, axis=1, kind="stable")              # descending, per template
    rank = np.empty(scores.shape, dtype=kind)
    np.put_along_axis(rank, order, np.arange(n_terms, dtype=kind)[None, :], axis=1)
    high, low = np.take_along_axis(scores, order, axis=1), np.take_along_axis(scores, order[:, ::-1], axis=1)
    rank_high = np.ascontiguousarray(rank.T)[:, None, :]                              # (terms, 1, units)
    rank_low = np.ascontiguousarray((n_terms - 1 - rank).T.astype(kind))[:, None, :]  # rank in ascending order
    undrawn = np.ascontiguousarray(np.where(c > 0, 0, np.iinfo(kind).max).astype(kind).T)  # (terms, B)
    at = np.arange(scores.shape[0]) * n_terms        # where each template's row starts in high, low (flat)
    high, low = high.ravel(), low.ravel()

    def per_chunk(sl):
        masked = undrawn[:, sl, None]      # OR-ed in: an undrawn term ranks last
        return np.take(high, at + (rank_high | masked).min(axis=0)) - np.take(low, at + (rank_low | masked).min(axis=0))
    return _chunked(per_chunk, np.empty((c.shape[0], scores.shape[0])), 4 * _CHUNK)


def _term_statistics(scores: np.ndarray, r: np.ndarray, c: np.ndarray, keys: set) -> dict:
    """Perturbation statistics over the drawn terms (every term its own group), per template."""
    out = {}
    if "cf_mcm" in keys:
        out["cf_mcm"] = _over_templates(r, _drawn_range(scores, c))
    if not keys & {"cf_mcm_std", "cf_bcm"}:   # the range needs no mean
        return out
    total = c.sum(axis=1)[:, None]
    mean = (c @ scores.T) / total  # (B, units)
    if "cf_mcm_std" in keys:
        var = (c @ (scores ** 2).T) / total - mean ** 2
        out["cf_mcm_std"] = _over_templates(r, np.sqrt(np.maximum(var, 0.0)))
    if "cf_bcm" in keys:
        out["cf_bcm"] = _over_templates(r, _mean_abs_deviation(scores, c, mean, total))
    return out


def _labelled(matrices: list, r: np.ndarray, cs: list, labels: np.ndarray, threshold: float) -> dict:
    predicted = [(m >= threshold).astype(np.float64) for m in matrices]
    tp, p = _group_means(predicted, r * labels, cs)
    fp, n = _group_means(predicted, r * (1 - labels), cs)
    fpr, tpr = [a / b for a, b in zip(fp, n)], [a / b for a, b in zip(tp, p)]
    all_fpr, all_tpr = sum(fp) / sum(n), sum(tp) / sum(p)
    return {"fped": np.mean([np.abs(all_fpr - f) for f in fpr], axis=0),
            "fned": np.mean([np.abs(all_tpr - t) for t in tpr], axis=0),  # |FNR_all - FNR_g| = |TPR_all - TPR_g|
            "tpr_gap": np.mean([np.abs(tpr[i] - tpr[k]) for i, k in combinations(range(len(tpr)), 2)], axis=0)}


def grid_statistics(fs, idx: dict, threshold: float, keys) -> dict:
    """Statistics ``keys`` of the family scores ``fs`` on ``B`` resamples: ``{key: (B,) array}``.

    ``idx`` holds ``(B, n)`` index arrays: ``"templates"`` into the rows and, per group,
    into that group's terms (the :class:`~embdebias.metrics._resample.Sample` format).
    """
    keys = set(keys)
    cols = fs.column_groups
    matrices = [fs.scores[:, cols == i] for i in range(len(fs.terms))]
    r = drawn_counts(idx["templates"], fs.scores.shape[0])
    out = {}
    if "cf_pcm" in keys:  # drawn by counterpart pairs, not by terms
        out["cf_pcm"] = _paired_pcm(fs, r, drawn_counts(idx["pairs"], len(fs.pairs)))
        if keys == {"cf_pcm"}:
            return out
    cs = [drawn_counts(idx[g], m.shape[1]) for g, m in zip(fs.group_names, matrices)]
    if "score_gap" in keys:
        nums, dens = _group_means(matrices[:2], r, cs[:2])
        out["score_gap"] = nums[0] / dens[0] - nums[1] / dens[1]
    if keys & set(TERM_KEYS):
        out.update(_term_statistics(np.hstack(matrices), r, np.hstack(cs), keys))
    if keys & set(LABEL_KEYS) and fs.labels is not None:
        out.update(_labelled(matrices, r, cs, fs.labels.astype(np.float64)[None, :], threshold))
    return {k: v for k, v in out.items() if k in keys}
