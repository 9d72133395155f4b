r"""Relative Norm Distance, RND (Garg, Schiebinger, Jurafsky & Zou, PNAS 2018).

Two target groups with mean vectors :math:`\mu_1, \mu_2` (the means of their words'
unit vectors) and attribute words :math:`A` (occupations, adjectives):

.. math::

    \mathrm{RND} = \operatorname{mean}_{a \in A} \bigl(\lVert a - \mu_1 \rVert_2 - \lVert a - \mu_2 \rVert_2\bigr)

**Sign:** positive when the attribute words lie closer to the *second* group (WEFE's
reading too); 0 is fairer.

Choices, against the paper and the other tools:

* **mean, not sum** (``aggregate="mean"``, the default). The paper prints a sum over
  :math:`A`; Garg et al.'s code averages the per-word distances
  (``changes_over_time.py``), and WEFE 1.0.1 takes the mean, which does not grow with
  the number of attribute words and compares across lists. ``aggregate="sum"`` gives
  the printed formula.
* **unit word vectors, group means not renormalized** (``normalize=True``, the default),
  as in Garg et al.'s normalized vectors and WEFE's ``normalize=True``; WEFE's default
  (``normalize=False``) uses raw vectors, our ``normalize=False``.
* **distance** ``"euclidean"`` (Garg et al., WEFE's ``"norm"``) or ``"cosine"``, the
  cosine *distance* :math:`1 - \cos(a, \mu)`, so both have the same sign. WEFE's
  ``distance="cos"`` subtracts cosine *similarities*, which is exactly the negative
  of our ``"cosine"``.
* **two groups.** RND compares two groups; :func:`rnd` refuses other numbers of target
  sets. The registered metric reports every pair of the attribute's groups (race:
  three rows per attribute set).
* Several attribute sets are pooled into one list of words (a word in two sets counts
  once); ``by_set`` gives each set's own RND. WEFE reads the first attribute set only.

The interval is a bootstrap over the words of both groups and the attribute words.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_choice
from .base import N_SCORED, Option, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb
from ._query import (
    QueryMetric,
    QueryResult,
    attribute_word_sets,
    function_interval,
    group_sets,
    key,
    look_up,
    pair_units,
    pooled,
    query_sets,
    raw_sets,
    unit_sets,
    weights,
    query_fields,
)
from ._resample import Sample

DISTANCES = ("euclidean", "cosine")
AGGREGATES = ("mean", "sum")
#: The Sample group of the (pooled) attribute words.
ATTRIBUTE_WORDS = "attribute words"


@dataclass
class RndResult(QueryResult, MetricResult):
    """Result of :func:`rnd`.

    Attributes
    ----------
    rnd : float
        The relative norm distance (positive: the attribute words are closer to the second group).
    by_word : dict
        ``{attribute word: distance to group 1 - distance to group 2}``.
    by_set : dict
        ``{attribute set: RND over its words}`` (same aggregate).
    ci : tuple of float or None
        Bootstrap percentile interval (``None`` without ``bootstrap``).
    normalize, distance, aggregate
        The options used.
    targets, attributes, words, missing, lowercased
        As for every query metric (:class:`~embdebias.metrics.mac.MacResult`).
    """

    rnd: float
    by_word: dict
    by_set: dict
    normalize: bool
    distance: str
    aggregate: str

    value_field = "rnd"


def _distances(a: np.ndarray, mu: np.ndarray, distance: str) -> np.ndarray:
    """``(B, n_a)`` distances of attribute rows ``a`` to each of ``B`` mean vectors ``mu``."""
    dots = mu @ a.T                                                          # (B, n_a)
    mu_sq = np.einsum("bd,bd->b", mu, mu)[:, None]
    a_sq = np.einsum("ad,ad->a", a, a)[None, :]
    if distance == "euclidean":
        return np.sqrt(np.maximum(a_sq - 2.0 * dots + mu_sq, 0.0))
    return 1.0 - dots / np.sqrt(a_sq * mu_sq)


def rnd_statistic(v1: np.ndarray, v2: np.ndarray, attr: np.ndarray, keys: tuple, distance: str, aggregate: str):
    """``stat`` of RND with both groups and the attribute words resampled (``keys``: the
    Sample groups of the two target sets)."""
    def stat(idx):
        mu1 = weights(idx[keys[0]], len(v1)) @ v1
        mu2 = weights(idx[keys[1]], len(v2)) @ v2
        per_word = _distances(attr, mu1, distance) - _distances(attr, mu2, distance)
        drawn = np.take_along_axis(per_word, idx[ATTRIBUTE_WORDS], axis=1)
        return drawn.mean(axis=1) if aggregate == "mean" else drawn.sum(axis=1)
    return stat


def rnd(embedding, targets, attributes, *, normalize: bool = True, distance: str = "euclidean",
        aggregate: str = "mean", bootstrap: int = 0, ci_level: float = 0.95, random_state: int | None = 0,
        max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> RndResult:
    """Relative Norm Distance of attribute words between two target groups (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : sequence of two word lists, or dict name -> words
        The two groups (their order gives the sign).
    attributes : sequence of word lists, or dict name -> words
        The attribute words (pooled; a flat list of words is one set).
    normalize : bool, default True
        Unit-normalize every word vector first (Garg et al.).
    distance : {"euclidean", "cosine"}, default "euclidean"
    aggregate : {"mean", "sum"}, default "mean"
        Mean over the attribute words (Garg et al.'s code, WEFE) or their sum (the paper's formula).
    bootstrap, ci_level, random_state
        The bootstrap interval (0 resamples: none) and its seed.
    max_missing, lowercase
        As for every metric.

    Returns
    -------
    RndResult
        ``.value`` is RND (0 is fairer).

    Raises
    ------
    EmbdebiasError
        Not two target sets, or an unknown ``distance`` / ``aggregate``.
    MissingWordsError
        A set loses more than ``max_missing`` of its words.
    """
    t_sets, a_sets = query_sets("rnd", targets, attributes, n_targets=2)
    result, sample = rnd_parts(as_emb(embedding), t_sets, a_sets, normalize=normalize, distance=distance,
                               aggregate=aggregate, max_missing=max_missing, lowercase=lowercase)
    result.ci = function_interval(sample, bootstrap, random_state, ci_level, "rnd", "", "rnd")
    result.ci_level = float(ci_level)
    return result


def rnd_parts(emb, t_sets: dict, a_sets: dict, *, normalize: bool = True, distance: str = "euclidean",
              aggregate: str = "mean", max_missing: float = DEFAULT_MAX_MISSING,
              lowercase: bool = True) -> tuple[RndResult, Sample]:
    """``(result without interval, its Sample)`` of RND on two named target sets."""
    check_choice(distance, DISTANCES, "rnd: distance")
    check_choice(aggregate, AGGREGATES, "rnd: aggregate")
    t_look = look_up(emb, t_sets, "RND", "target", max_missing=max_missing, lowercase=lowercase)
    a_look = look_up(emb, a_sets, "RND", "attribute", max_missing=max_missing, lowercase=lowercase)
    vectors = unit_sets if normalize else raw_sets
    t_vec, a_vec = vectors(emb, t_look), vectors(emb, a_look)
    (n1, v1), (n2, v2) = t_vec.items()
    a_words, a_rows = pooled(a_look, a_vec)
    mus = np.stack([v1.mean(axis=0), v2.mean(axis=0)])
    d = _distances(a_rows, mus, distance)
    per_word = dict(zip(a_words, (d[0] - d[1]).tolist()))
    agg = np.mean if aggregate == "mean" else np.sum
    by_set = {a: float(agg([per_word[w] for w in lk.words])) for a, lk in a_look.items()}
    keys = (key("target", n1), key("target", n2))
    sample = Sample({keys[0]: list(t_look[n1].words), keys[1]: list(t_look[n2].words), ATTRIBUTE_WORDS: a_words},
                    rnd_statistic(v1, v2, a_rows, keys, distance, aggregate), fairer="zero")
    result = RndResult(rnd=float(agg(list(per_word.values()))), by_word=per_word, by_set=by_set,
                       normalize=bool(normalize), distance=distance, aggregate=aggregate,
                       **query_fields(t_look, a_look))
    return result, sample


# -- the metric as evaluate runs it -----------------------------------------------------------------


@register
class Rnd(QueryMetric):
    name, title = "rnd", "RND"
    function = "rnd"
    legend = ("RND (Garg et al. 2018): mean over the attribute words of (distance to the first group's mean "
              "vector - distance to the second's), on unit vectors; positive: the words sit closer to the "
              "second group; 0 is fairer. With more than two groups, one row per pair.")
    statistics = {"rnd": "RND", N_SCORED: "words scored"}
    headline = (("*", "rnd", "0"),)
    options = {
        "normalize": Option(True, "unit-normalize the word vectors first (Garg et al.)",
                            lambda v: check_choice(v, (True, False), "normalize")),
        "distance": Option("euclidean", "euclidean (Garg et al.) or cosine (1 - cos)",
                           lambda v: check_choice(v, DISTANCES, "distance")),
        "aggregate": Option("mean", "mean over the attribute words (Garg et al.'s code, WEFE) or sum (the paper)",
                            lambda v: check_choice(v, AGGREGATES, "aggregate")),
    }

    def units(self, ctx):
        """One unit per attribute set of the evaluation's attribute (and pair of its groups)."""
        return list(pair_units(ctx.attribute_or_default()))

    def legend_for(self, ctx):
        attr = ctx.attribute_or_default()
        return f"{self.legend} Attribute: {attr.name} (groups {', '.join(attr.groups)}, in this order)."

    def score(self, emb, unit, ctx):
        attr = ctx.attribute_or_default()
        set_name, (i, j) = pair_units(attr)[unit]
        groups = group_sets(attr)
        t_sets = {attr.groups[i]: groups[attr.groups[i]], attr.groups[j]: groups[attr.groups[j]]}
        r, sample = rnd_parts(emb, t_sets, {set_name: attribute_word_sets(attr)[set_name]},
                              **ctx.opts(self.name), **ctx.common)
        return r, {unit: {"rnd": r.rnd, N_SCORED: r.n_scored}}, {(unit, "rnd"): sample}
