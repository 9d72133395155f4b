r"""Relational Inner Product Association, RIPA (Ethayarajh, Duvenaud & Hirst, ACL 2019).

A relation vector :math:`b` is drawn from word pairs :math:`(x_i, y_i)` (she/he, ...);
a word's association with the relation is its inner product with it, the word vector
**not** normalized (its length, which grows with frequency, is part of the association
in the paper's derivation):

.. math::

    \mathrm{RIPA}(w; b) = w \cdot b

The two target sets are the pairs, by position: ``targets[0][i]`` with ``targets[1][i]``.
Two ways to get :math:`b` (``relation``):

* ``"pairs"`` (default; WEFE 1.0.1): one :math:`b_i = (x_i - y_i)/\lVert x_i - y_i\rVert`
  per pair; a word's score is its mean over the pairs, :math:`w \cdot \bar b`, and the
  result also gives its standard deviation over the pairs (``by_word_std``, ddof 0 as WEFE);
* ``"pca"`` (the paper, for several pairs): :math:`b` is the first principal direction of
  the pair differences :math:`x_i - y_i` (uncentered: the unit vector maximizing
  :math:`\sum_i ((x_i - y_i)\cdot b)^2`, so a set of parallel differences gives their
  direction), oriented so that the differences project positively on it.

RIPA is the mean of the words' scores over the attribute words (WEFE's aggregation; the
sets are pooled, a word counted once); **positive: the words lean to the first target
set's side**; 0 is fairer.

Differences from WEFE: WEFE looks the two target sets up independently, so a missing
word shifts every later pair (its ``x_i`` meets another ``y_i``); here a pair is dropped
whole when one of its words is missing, and ``missing`` names it. With every word present,
the values are WEFE's (``benchmarks/results/attributes.md``). EmbeddingBiasScores' RIPA
(``|Σ_b |w·b||^c`` over a bias space) is a different aggregate, not offered.

The interval is a bootstrap over the pairs and the attribute words (for ``"pca"`` the
direction is refitted on every resample of the pairs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_choice
from ..errors import EmbdebiasError
from .base import N_SCORED, Option, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup
from ._query import (
    QueryMetric,
    QueryResult,
    attribute_text,
    attribute_word_sets,
    function_interval,
    key,
    look_up,
    pair_units,
    pooled,
    query_sets,
    raw_sets,
    weights,
)
from ._resample import Sample

RELATIONS = ("pairs", "pca")
#: The Sample groups of the pairs and of the (pooled) attribute words.
PAIRS, ATTRIBUTE_WORDS = "pairs", "attribute words"


@dataclass
class RipaResult(QueryResult, MetricResult):
    """Result of :func:`ripa`.

    Attributes
    ----------
    ripa : float
        Mean RIPA of the attribute words (positive: they lean to the first target set).
    by_word : dict
        ``{attribute word: RIPA}``.
    by_word_std : dict
        ``{attribute word: standard deviation over the pairs}`` (``relation="pairs"``; empty for "pca").
    pairs : list of [str, str]
        The pairs used (both words in the vocabulary).
    relation : str
        ``"pairs"`` or ``"pca"``.
    ci : tuple of float or None
        Bootstrap percentile interval (``None`` without ``bootstrap``).
    targets, attributes, words, missing, lowercased
        As for every query metric; ``words`` of the target sets are the pairs' words (a pair
        with a missing word is dropped whole, its missing word listed in ``missing``).
    """

    ripa: float
    by_word: dict
    by_word_std: dict
    pairs: list
    relation: str

    value_field = "ripa"


def first_direction(diffs: np.ndarray, counts: np.ndarray | None = None) -> np.ndarray:
    """The first (uncentered) principal direction of the rows of ``diffs``, oriented so that they
    project positively on it; ``counts`` ``(B, n)``: the same for ``B`` weighted resamples at once
    (through the small ``n x n`` Gram matrix), giving ``(B, d)``."""
    single = counts is None
    c = np.ones((1, len(diffs))) if single else counts
    root = np.sqrt(c)
    gram = diffs @ diffs.T                                              # (n, n)
    _, vecs = np.linalg.eigh(root[:, :, None] * gram[None] * root[:, None, :])
    top = vecs[:, :, -1] * root                                         # (B, n) coefficients of the rows
    b = top @ diffs                                                     # (B, d)
    sign = np.sign(np.einsum("bn,nd,bd->b", c, diffs, b))
    b *= np.where(sign == 0, 1.0, sign)[:, None]
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return b[0] if single else b


def ripa_statistic(diffs: np.ndarray, attr: np.ndarray, relation: str):
    """``stat`` of RIPA with the pairs and the attribute words resampled."""
    if relation == "pairs":
        scores = attr @ (diffs / np.linalg.norm(diffs, axis=1, keepdims=True)).T    # (n_a, n_p)

        def stat(idx):
            wa, wp = weights(idx[ATTRIBUTE_WORDS], len(attr)), weights(idx[PAIRS], len(diffs))
            return np.einsum("ba,ap,bp->b", wa, scores, wp)
        return stat

    def stat_pca(idx):
        from ._resample import counts

        b = first_direction(diffs, counts(idx[PAIRS], len(diffs)))                 # (B, d)
        wa = weights(idx[ATTRIBUTE_WORDS], len(attr))
        return np.einsum("ba,ad,bd->b", wa, attr, b)
    return stat_pca


def _pairs(emb, t_sets: dict, *, max_missing: float, lowercase: bool):
    """``(pairs found, their two rows, missing per target set)``: pairs by position, a pair
    dropped whole when a word of it is missing."""
    (n1, w1), (n2, w2) = t_sets.items()
    if len(w1) != len(w2):
        raise EmbdebiasError(f"ripa: the two target sets are pairs by position and need the same size; "
                             f"{n1!r} has {len(w1)} words, {n2!r} {len(w2)}")
    looks = [lookup(emb, w, name=f"RIPA: target set {n!r}", max_missing=1.0, min_size=0, lowercase=lowercase)
             for n, w in ((n1, w1), (n2, w2))]
    found = [dict(zip(lk.words, lk.rows)) for lk in looks]
    pairs = [(x, y) for x, y in zip(w1, w2) if x in found[0] and y in found[1]]
    lost = len(w1) - len(pairs)
    if not pairs or lost / len(w1) > max_missing:
        raise EmbdebiasError(f"RIPA: {lost} of {len(w1)} pairs have a word out of the vocabulary of {emb.name} "
                             f"(more than the allowed {max_missing:.0%}): "
                             + ", ".join(f"{x}/{y}" for x, y in zip(w1, w2) if (x, y) not in pairs))
    rows = np.array([[found[0][x], found[1][y]] for x, y in pairs], dtype=np.int64)
    missing = {key("target", n): list(lk.missing) for n, lk in zip((n1, n2), looks)}
    lowered = {key("target", n): dict(lk.lowercased) for n, lk in zip((n1, n2), looks) if lk.lowercased}
    return pairs, rows, missing, lowered


def ripa(embedding, targets, attributes, *, relation: str = "pairs", bootstrap: int = 0, ci_level: float = 0.95,
         random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> RipaResult:
    """RIPA of attribute words on the relation of word pairs (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : sequence of two word lists of the same size, or dict name -> words
        The pairs by position: ``(targets[0][i], targets[1][i])``; the relation points from
        the second word to the first.
    attributes : sequence of word lists, or dict name -> words
        The words scored (pooled; a flat list of words is one set).
    relation : {"pairs", "pca"}, default "pairs"
        Mean of the per-pair unit differences (WEFE) or their first principal direction (the paper).
    bootstrap, ci_level, random_state
        The bootstrap interval (0 resamples: none) and its seed.
    max_missing, lowercase
        As for every metric (for the targets: the fraction of pairs dropped).

    Returns
    -------
    RipaResult
        ``.value`` is the mean RIPA (0 is fairer).

    Raises
    ------
    EmbdebiasError
        Not two target sets of the same size, too many pairs lost, or an unknown ``relation``.
    """
    t_sets, a_sets = query_sets("ripa", targets, attributes, n_targets=2)
    result, sample = ripa_parts(as_emb(embedding), t_sets, a_sets, relation=relation, max_missing=max_missing,
                                lowercase=lowercase)
    result.ci = function_interval(sample, bootstrap, random_state, ci_level, "ripa", "", "ripa")
    result.ci_level = float(ci_level)
    return result


def ripa_parts(emb, t_sets: dict, a_sets: dict, *, relation: str = "pairs", max_missing: float = DEFAULT_MAX_MISSING,
               lowercase: bool = True) -> tuple[RipaResult, Sample]:
    """``(result without interval, its Sample)`` of RIPA on two named target sets (the pairs)."""
    check_choice(relation, RELATIONS, "ripa: relation")
    pairs, rows, t_missing, t_lowered = _pairs(emb, t_sets, max_missing=max_missing, lowercase=lowercase)
    a_look = look_up(emb, a_sets, "RIPA", "attribute", max_missing=max_missing, lowercase=lowercase)
    a_words, attr = pooled(a_look, raw_sets(emb, a_look))
    diffs = emb.take(rows[:, 0], np.float64) - emb.take(rows[:, 1], np.float64)
    if relation == "pairs":
        per_pair = attr @ (diffs / np.linalg.norm(diffs, axis=1, keepdims=True)).T
        scores, spread = per_pair.mean(axis=1), dict(zip(a_words, per_pair.std(axis=1).tolist()))
    else:
        scores, spread = attr @ first_direction(diffs), {}
    (n1, _), (n2, _) = t_sets.items()
    words = {key("target", n1): [x for x, _ in pairs], key("target", n2): [y for _, y in pairs]}
    words.update({key("attribute", a): list(lk.words) for a, lk in a_look.items()})
    missing = dict(t_missing, **{key("attribute", a): list(lk.missing) for a, lk in a_look.items()})
    lowered = dict(t_lowered, **{key("attribute", a): dict(lk.lowercased) for a, lk in a_look.items()
                                 if lk.lowercased})
    sample = Sample({PAIRS: [f"{x}/{y}" for x, y in pairs], ATTRIBUTE_WORDS: a_words},
                    ripa_statistic(diffs, attr, relation), fairer="zero")
    result = RipaResult(ripa=float(scores.mean()), by_word=dict(zip(a_words, scores.tolist())), by_word_std=spread,
                        pairs=[list(p) for p in pairs], relation=relation, ci=None, targets=list(t_sets),
                        attributes=list(a_sets), words=words, missing=missing, lowercased=lowered)
    return result, sample


# -- the metric as evaluate runs it -----------------------------------------------------------------


@register
class Ripa(QueryMetric):
    name, title = "ripa", "RIPA"
    function = "ripa"
    legend = ("RIPA (Ethayarajh et al. 2019): mean inner product of the (unnormalized) attribute words with the "
              "unit difference of each defining pair (first group minus second), averaged over the pairs; "
              "positive: the words lean to the first group; 0 is fairer. With more than two groups, one row "
              "per pair of groups.")
    statistics = {"ripa": "RIPA", N_SCORED: "words scored"}
    headline = (("*", "ripa", "0"),)
    options = {"relation": Option("pairs", "pairs: mean of the per-pair unit differences (WEFE); pca: their first "
                                           "principal direction (the paper)",
                                  lambda v: check_choice(v, RELATIONS, "relation"))}

    def units(self, ctx):
        """One unit per attribute set of the evaluation's attribute (and pair of its groups)."""
        return list(pair_units(ctx.attribute_or_default()))

    def legend_for(self, ctx):
        attr = ctx.attribute_or_default()
        return f"{self.legend} Attribute: {attr.name}; pairs: its defining sets (groups {', '.join(attr.groups)})."

    def data(self, ctx):
        attr = ctx.attribute_or_default()
        return f"{attribute_text(attr)}; relation pairs: its {len(attr.defining_sets)} defining sets"

    def score(self, emb, unit, ctx):
        attr = ctx.attribute_or_default()
        set_name, (i, j) = pair_units(attr)[unit]
        t_sets = {attr.groups[i]: [s[i] for s in attr.defining_sets],
                  attr.groups[j]: [s[j] for s in attr.defining_sets]}
        r, sample = ripa_parts(emb, t_sets, {set_name: attribute_word_sets(attr)[set_name]},
                               **ctx.opts(self.name), **ctx.common)
        return r, {unit: {"ripa": r.ripa, N_SCORED: r.n_scored}}, {(unit, "ripa"): sample}
