r"""Embedding Coherence Test (Dev & Phillips, 2019).

The two target sets (e.g. male and female terms) are each summarised by the mean of
their unit-normalized vectors, :math:`\mu_X` and :math:`\mu_Y`; every attribute word
``a`` (e.g. professions) gets the two similarities :math:`\cos(\mu_X, a)` and
:math:`\cos(\mu_Y, a)`, and ECT is the Spearman rank correlation of the two similarity
vectors.  1 means both groups rank the attribute words the same way (no bias in the
ordering); lower values mean more bias.  Ties get average ranks (``scipy.stats.spearmanr``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._rows import unit_rows
from ..errors import EmbdebiasError
from ..wordlists import WeatTest, WordSet
from .base import N_SCORED, Metric, Option, register, set_vectors
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, drawn_counts, rank_row_dot


@dataclass
class EctResult(MetricResult):
    """Result of :func:`ect`.

    Attributes
    ----------
    correlation : float
        Spearman's rho between the two similarity vectors (NaN if one is constant).
    p_value : float
        scipy's two-sided p-value for rho (against no correlation; informative only).
    sim_X, sim_Y : list of float
        ``cos(mean X, a)`` and ``cos(mean Y, a)`` for the attribute words in ``words``.
    words, missing : dict
        Words used / out-of-vocabulary words per set ("X", "Y", "attributes").
    """

    correlation: float
    p_value: float
    sim_X: list[float]
    sim_Y: list[float]
    words: dict[str, list[str]]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    set_names: dict[str, str] = field(default_factory=dict)

    value_field = "correlation"

    @property
    def n_scored(self) -> int:
        """Attribute words scored."""
        return len(self.words.get("attributes", ()))


def _words(obj, name):
    if obj is None:
        raise EmbdebiasError(f"ect: set {name} is required")
    if isinstance(obj, WordSet):
        return obj.name, list(obj.words)
    if isinstance(obj, str):
        raise EmbdebiasError(f"ect: set {name} must be a list of words, got the string {obj!r}")
    return name, list(obj)


def ect(embedding, X, Y=None, attributes=None, *, max_missing: float = DEFAULT_MAX_MISSING,
        lowercase: bool = True) -> EctResult:
    """Embedding Coherence Test of targets ``X``, ``Y`` over ``attributes``.

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    X, Y : list of str or WordSet
        The two target groups.  ``X`` may be a WeatTest: then ``X``/``Y`` are its target
        sets and the attributes default to the union of its ``A`` and ``B``.
    attributes : list of str or WordSet
        The words both groups are compared on (at least 3).
    max_missing, lowercase
        As for every metric (see :mod:`embdebias.metrics._common`).
    """
    from scipy.stats import spearmanr

    emb = as_emb(embedding)
    if isinstance(X, WeatTest):
        test = X
        X, Y = test.X, test.Y
        if attributes is None:
            attributes = WordSet(f"{test.A.name} + {test.B.name}",
                                 tuple(dict.fromkeys(test.A.words + test.B.words)))
    names_words = {"X": _words(X, "X"), "Y": _words(Y, "Y"), "attributes": _words(attributes, "attributes")}
    looks = {k: lookup(emb, w, name=f"ECT: set {k} ({n})" if n != k else f"ECT: set {k}",
                       lowercase=lowercase, max_missing=max_missing,
                       min_size=3 if k == "attributes" else 1)
             for k, (n, w) in names_words.items()}
    mean_x = unit_vectors(emb, looks["X"].rows).mean(axis=0)
    mean_y = unit_vectors(emb, looks["Y"].rows).mean(axis=0)
    attr = unit_vectors(emb, looks["attributes"].rows)
    sim_x = attr @ unit_rows(mean_x)
    sim_y = attr @ unit_rows(mean_y)
    if np.ptp(sim_x) == 0 or np.ptp(sim_y) == 0:
        rho, p = float("nan"), float("nan")
    else:
        res = spearmanr(sim_x, sim_y)
        rho, p = float(res.statistic), float(res.pvalue)
    return EctResult(
        correlation=rho, p_value=p, sim_X=sim_x.tolist(), sim_Y=sim_y.tolist(),
        words={k: list(lk.words) for k, lk in looks.items()},
        missing={k: list(lk.missing) for k, lk in looks.items()},
        lowercased={k: dict(lk.lowercased) for k, lk in looks.items() if lk.lowercased},
        set_names={k: n for k, (n, _) in names_words.items()})


# -- ECT on resamples, and the metric as evaluate runs it -------------------------------------------


def ect_correlations(unit_x: np.ndarray, unit_y: np.ndarray, attr: np.ndarray):
    """``stat`` of ECT's Spearman rho with X, Y and the attributes resampled.

    An attribute's similarity to the (normalized) mean of the resampled X vectors is,
    up to a positive factor per resample that leaves the ranks unchanged, its summed
    dot product with them: the attribute-by-X dot products weighted by how often each
    X word was drawn. So no resample gathers vectors, only numbers.

    The ranks are not those of the ``(B, n)`` drawn similarities but of the ``(B, attributes)``
    similarities, each attribute weighted by how often it was drawn (:func:`drawn_ranks`): a
    drawn copy's rank is its attribute's, and rho's sums over the drawn copies are the
    attributes' sums weighted by their draws. Ranks are whole numbers and halves, their mean is
    ``(n + 1) / 2``, and every product and sum of the centred ranks is a multiple of 1/4 far
    below 2**53, exact in float64 in any order (so summed by
    :func:`~embdebias.metrics._resample.rank_row_dot`): rho is the number ``scipy.stats.rankdata``
    on the drawn similarities gives, bit for bit (``tests/test_metrics_rnsb_ect.py``).
    """
    dots_x, dots_y = attr @ unit_x.T, attr @ unit_y.T        # (attributes, X), (attributes, Y)

    def stat(idx):
        sim_x = drawn_counts(idx["X"], dots_x.shape[1]) @ dots_x.T    # (B, attributes)
        sim_y = drawn_counts(idx["Y"], dots_y.shape[1]) @ dots_y.T
        a = idx["attributes"]
        drawn = drawn_counts(a, attr.shape[0])                         # (B, attributes) copies drawn
        centre = (a.shape[1] + 1) / 2.0
        rx, ry = drawn_ranks(sim_x, drawn) - centre, drawn_ranks(sim_y, drawn) - centre
        wx, wy = drawn * rx, drawn * ry
        return rank_row_dot(wx, ry) / np.sqrt(rank_row_dot(wx, rx) * rank_row_dot(wy, ry))
    return stat


def drawn_ranks(values: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """``(B, m)``: per row, the rank (ties averaged) each of ``m`` items' value has among the
    values drawn, item ``i`` drawn ``drawn[b, i]`` times: the rank
    :func:`scipy.stats.rankdata` gives each of its copies in the row of drawn values.

    One sort of the ``(B, m)`` values (not of the drawn ones: no gather; :func:`_value_order`);
    items of equal value (one tie group) share the rank ``(drawn below the group) + (drawn in
    it + 1) / 2``, sums of whole counts, exact. A row that drew a NaN is all NaN, as rankdata's.
    """
    b, m = values.shape
    if not m:
        return np.zeros((b, 0))
    flat, ordered = _value_order(values)
    weight = np.ascontiguousarray(drawn, dtype=np.float64).ravel()[flat]
    starts = np.ones((b, m), dtype=bool)                  # a tie group starts here (and every row)
    np.not_equal(ordered.reshape(b, m)[:, 1:], ordered.reshape(b, m)[:, :-1], out=starts[:, 1:])
    before = np.cumsum(weight.reshape(b, m), axis=1).ravel() - weight   # drawn before each place in its row
    ranks = np.empty(b * m)
    if starts.all():        # no two items of a row share a value (the usual case): no tie groups
        ranks[flat] = before + (weight + 1.0) / 2.0
    else:
        first = np.flatnonzero(starts)                    # each tie group's first place (flat)
        rank = before[first] + (np.add.reduceat(weight, first) + 1.0) / 2.0
        ranks[flat] = np.repeat(rank, np.diff(first, append=b * m))
    ranks = ranks.reshape(b, m)
    nan = np.isnan(values)
    if nan.any():
        ranks[(nan & (drawn > 0)).any(axis=1)] = np.nan
    return ranks


_SIGN = np.uint64(1 << 63)


def _value_order(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(flat places of the (B, m) values in each row's ascending order, the values so ordered)``.

    Any order that sorts each row will do (:func:`drawn_ranks` ranks a tie group as one,
    whatever its members' order), so not an ``argsort`` but a plain sort of whole-number keys,
    twice as fast: each value's bits mapped to an unsigned integer of the same order (negative
    numbers' bits flipped, the sign bit set on the others), the lowest bits replaced by the
    item's column. Two values differing only in those bits could come out in the wrong order:
    the values so ordered are checked to ascend in every row, and where they do not (or a
    value is NaN, whose order the keys do not give as argsort does) it is argsort's order."""
    b, m = values.shape
    values = np.ascontiguousarray(values, dtype=np.float64)
    offsets = (np.arange(b) * m)[:, None]
    if not np.isnan(values).any():
        low = np.uint64((1 << max(1, (m - 1).bit_length())) - 1)
        bits = values.view(np.uint64)
        key = bits >> np.uint64(63)                        # 1 for a negative number ...
        np.negative(key, out=key)                          # ... all ones: its bits flipped
        key |= _SIGN
        key ^= bits
        key &= ~low
        key |= np.arange(m, dtype=np.uint64)
        key.sort(axis=1)
        key &= low
        flat = (key.view(np.int64) + offsets).ravel()
        ordered = values.ravel()[flat]
        rows = ordered.reshape(b, m)
        if not np.less(rows[:, 1:], rows[:, :-1]).any():
            return flat, ordered
    flat = (np.argsort(values, axis=1) + offsets).ravel()
    return flat, values.ravel()[flat]


@register
class Ect(Metric):
    name, title = "ect", "ECT"
    headline = (("professions", "spearman", "higher (1)"),)
    function = "ect"
    legend = ("ECT (Dev & Phillips 2019): Spearman correlation between the attribute words' "
              "similarities to the mean male-term vector and to the mean female-term vector; "
              "1 is fairer.")
    statistics = {"spearman": "Spearman rho", N_SCORED: "attribute words scored"}
    options = {"neutral_words": Option(None, "words of the last row (a list, list name or file; "
                                             "default: the professions of lists)")}

    def params(self, opts):
        return {"neutral_words": None if opts["neutral_words"] is None else str(opts["neutral_words"])}

    def units(self, ctx):
        tests = ctx.gender_tests()
        return [t.id for t in tests] + ([ctx.neutral_name(ctx.opts(self.name)["neutral_words"])] if tests else [])

    def data(self, ctx):
        neutral = ctx.opts(self.name)["neutral_words"]
        ctx.neutral(neutral)  # a bad list fails before any scoring
        return (f"the gender WEAT tests' target and attribute sets (curated); "
                f"{ctx.list_text(neutral, 'professions', 'words')}")

    def score(self, emb, unit, ctx):
        tests = ctx.gender_tests()
        by_id = {t.id: t for t in tests}
        if unit in by_id:
            t = by_id[unit]
            r = ect(emb, t, **ctx.common)
            attributes = list(t.A.words) + list(t.B.words)
        else:
            t, attributes = tests[0], ctx.neutral(ctx.opts(self.name)["neutral_words"])
            r = ect(emb, t.X, t.Y, attributes, **ctx.common)
        words, vec = set_vectors(emb, {"X": t.X.words, "Y": t.Y.words, "attributes": attributes}, ctx)
        sample = Sample(words, ect_correlations(vec["X"], vec["Y"], vec["attributes"]), fairer="higher")
        return r, {unit: {"spearman": r.correlation, N_SCORED: r.n_scored}}, {(unit, "spearman"): sample}
