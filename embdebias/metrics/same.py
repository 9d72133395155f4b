r"""SAME, the Scoring Association Means of word Embeddings (Schröder, Schulz, Kenneweg & Hammer, 2021).

Terminology: SAME's paper calls the groups' word sets "attribute sets" and the words it
scores "targets"; here, in WEFE's query order like every multi-group metric, the groups
are the **target sets** and the scored words (professions, stereotype words) the
**attribute sets**.

With :math:`\hat a_i` the mean of group ``i``'s unit vectors (``i = 1..k``), the bias
directions are the differences to the first group, made orthogonal one after the other
(Gram–Schmidt): :math:`c_1 = \hat a_2 - \hat a_1`, and :math:`c_j` = :math:`\hat
a_{j+1} - \hat a_1` minus its projections on :math:`c_1..c_{j-1}` (the other group
differences are linear combinations of these, so no bias is counted twice). A word's
bias is

.. math::

    b(w) = \lvert\cos(w, c_1)\rvert + \sum_{j \ge 2} \lvert\cos(w, c_j)\rvert\,\lVert c_j\rVert

and SAME is its mean over the scored words; 0 is fairer. For two groups,
:math:`b(w) = |\cos(w, \hat a_2 - \hat a_1)|`, the paper's binary score.

The weights follow the authors' implementation (``geometrical_bias/same.py`` of
EmbeddingBiasScores, by the paper's authors): the first direction is not weighted by its
norm, the later ones are. Our notes (``methods.md``) summarise the formula as every term
weighted by :math:`\lVert c_j\rVert`, which for two groups would not reduce to the binary
score; the authors' code is taken as the reference.

Per pair of groups :math:`(i, j)` the paper also reports, over the scored words, the
**skew** :math:`\operatorname{mean}_w \cos(w, \hat a_i - \hat a_j)` (signed: positive,
the words lean to group ``i``) and the **stereotype** :math:`\operatorname{std}_w
\cos(w, \hat a_i - \hat a_j)` (population standard deviation, ddof 0, as the authors'
``np.std``): how far the words spread to both sides even when the skew is 0.

The attribute sets are pooled (a word counted once). The interval is a bootstrap over the
words of every group and the scored words.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from .base import N_SCORED, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb
from ._query import (
    QueryMetric,
    QueryResult,
    attribute_word_sets,
    function_interval,
    group_sets,
    key,
    look_up,
    pooled,
    query_sets,
    unit_sets,
    weights,
    query_fields,
)
from ._resample import Sample

#: The Sample group of the (pooled) scored words.
ATTRIBUTE_WORDS = "attribute words"


@dataclass
class SameResult(QueryResult, MetricResult):
    """Result of :func:`same`.

    Attributes
    ----------
    same : float
        Mean bias ``b(w)`` of the scored words (0 is fairer).
    by_word : dict
        ``{scored word: b(w)}``.
    skew, stereotype : dict
        ``{"GROUP_I vs GROUP_J": value}`` for every pair of groups ``i < j``.
    ci : tuple of float or None
        Bootstrap percentile interval of SAME (``None`` without ``bootstrap``).
    targets, attributes, words, missing, lowercased
        As for every query metric (:class:`~embdebias.metrics.mac.MacResult`).
    """

    same: float
    by_word: dict
    skew: dict
    stereotype: dict

    value_field = "same"


def bias_directions(means: np.ndarray) -> np.ndarray:
    """``(..., k - 1, d)`` Gram–Schmidt directions ``c_j`` of ``(..., k, d)`` group means (see the
    module docstring; not normalized: their norms weigh the terms)."""
    diffs = means[..., 1:, :] - means[..., :1, :]
    out = np.empty_like(diffs)
    for j in range(diffs.shape[-2]):
        v = diffs[..., j, :].copy()
        for i in range(j):
            u = out[..., i, :] / np.linalg.norm(out[..., i, :], axis=-1, keepdims=True)
            v -= np.sum(v * u, axis=-1, keepdims=True) * u
        out[..., j, :] = v
    return out


def word_bias(words: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """``b(w)`` of unit rows ``words`` ``(n, d)`` for directions ``(..., k - 1, d)``: ``(..., n)``."""
    norms = np.linalg.norm(directions, axis=-1)                             # (..., k - 1)
    cos = np.abs(np.einsum("...jd,nd->...jn", directions, words)) / norms[..., None]
    scale = norms.copy()
    scale[..., 0] = 1.0                                                     # the first term is not weighted
    return np.einsum("...jn,...j->...n", cos, scale)


def pair_cosines(words: np.ndarray, means: np.ndarray, i: int, j: int) -> np.ndarray:
    """``cos(w, a_i - a_j)`` of unit rows ``words`` for group means ``(..., k, d)``: ``(..., n)``."""
    diff = means[..., i, :] - means[..., j, :]
    return np.einsum("...d,nd->...n", diff, words) / np.linalg.norm(diff, axis=-1)[..., None]


def same_statistic(groups: list, attr: np.ndarray, keys: list, statistic: str = "same", pair=(0, 1)):
    """``stat`` of SAME (or a pair's ``skew`` / ``stereotype``) with the groups' words and the
    scored words resampled."""
    def stat(idx):
        means = np.stack([weights(idx[k], len(v)) @ v for k, v in zip(keys, groups)], axis=1)   # (B, k, d)
        if statistic == "same":
            values = word_bias(attr, bias_directions(means))
        else:
            values = pair_cosines(attr, means, *pair)
        drawn = np.take_along_axis(values, idx[ATTRIBUTE_WORDS], axis=1)
        return drawn.std(axis=1) if statistic == "stereotype" else drawn.mean(axis=1)
    return stat


def pair_name(groups, i: int, j: int) -> str:
    """``"GROUP_I vs GROUP_J"``: the key of a pair in ``skew`` and ``stereotype``."""
    return f"{groups[i]} vs {groups[j]}"


def same(embedding, targets, attributes, *, bootstrap: int = 0, ci_level: float = 0.95,
         random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> SameResult:
    """SAME bias of the attribute words with respect to ``k`` target groups (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : sequence of k >= 2 word lists, or dict name -> words
        The groups' words (SAME's "attribute sets").
    attributes : sequence of word lists, or dict name -> words
        The words scored (pooled; a flat list of words is one set).
    bootstrap, ci_level, random_state
        The bootstrap interval of SAME (0 resamples: none) and its seed.
    max_missing, lowercase
        As for every metric.

    Returns
    -------
    SameResult
        ``.value`` is SAME (0 is fairer), with the pairwise ``skew`` and ``stereotype``.
    """
    t_sets, a_sets = query_sets("same", targets, attributes)
    result, samples = same_parts(as_emb(embedding), t_sets, a_sets, max_missing=max_missing, lowercase=lowercase)
    result.ci = function_interval(samples["same"], bootstrap, random_state, ci_level, "same", "", "same")
    result.ci_level = float(ci_level)
    return result


def same_parts(emb, t_sets: dict, a_sets: dict, *, max_missing: float = DEFAULT_MAX_MISSING,
               lowercase: bool = True) -> tuple[SameResult, dict]:
    """``(result without interval, {"same" or (statistic, pair name): Sample})`` on named sets."""
    t_look = look_up(emb, t_sets, "SAME", "target", max_missing=max_missing, lowercase=lowercase)
    a_look = look_up(emb, a_sets, "SAME", "attribute", max_missing=max_missing, lowercase=lowercase)
    groups = list(unit_sets(emb, t_look).values())
    a_words, attr = pooled(a_look, unit_sets(emb, a_look))
    means = np.stack([g.mean(axis=0) for g in groups])
    bias = word_bias(attr, bias_directions(means))
    names = list(t_sets)
    skew, stereotype = {}, {}
    keys = [key("target", t) for t in t_sets]
    words = {k: list(lk.words) for k, lk in zip(keys, t_look.values())}
    words[ATTRIBUTE_WORDS] = a_words
    samples = {"same": Sample(words, same_statistic(groups, attr, keys), fairer="lower")}
    for i, j in combinations(range(len(names)), 2):
        cos = pair_cosines(attr, means, i, j)
        pair = pair_name(names, i, j)
        skew[pair], stereotype[pair] = float(cos.mean()), float(cos.std())
        samples[("skew", pair)] = Sample(words, same_statistic(groups, attr, keys, "skew", (i, j)), fairer="zero")
        samples[("stereotype", pair)] = Sample(words, same_statistic(groups, attr, keys, "stereotype", (i, j)),
                                               fairer="lower")
    result = SameResult(same=float(bias.mean()), by_word=dict(zip(a_words, bias.tolist())), skew=skew,
                        stereotype=stereotype, **query_fields(t_look, a_look))
    return result, samples


# -- the metric as evaluate runs it -----------------------------------------------------------------


@register
class Same(QueryMetric):
    name, title = "same", "SAME"
    function = "same"
    legend = ("SAME (Schröder et al. 2021): mean over the attribute words of sum_j |cos(w, c_j)| (weighted as the "
              "authors' code) over the Gram-Schmidt differences c_j of the groups' mean vectors; 0 is fairer. "
              "Per pair of groups: skew, the mean cos(w, first group - second) (signed, 0 is fairer), and "
              "stereotype, its standard deviation over the words (0 is fairer).")
    statistics = {"same": "SAME", "skew": "skew", "stereotype": "stereotype", N_SCORED: "words scored"}
    headline = (("*", "same", "lower"),)
    options: dict = {}

    def units(self, ctx):
        """One unit per attribute set of the evaluation's attribute (its stereotype sets, its neutral words)."""
        return list(attribute_word_sets(ctx.attribute_or_default()))

    def score(self, emb, unit, ctx):
        """SAME on the unit's attribute set; for two groups its row also has the pair's skew and
        stereotype, for more each pair of groups has a row ``"SET: GROUP_I vs GROUP_J"`` of them."""
        attr = ctx.attribute_or_default()
        r, samples = same_parts(emb, group_sets(attr), {unit: attribute_word_sets(attr)[unit]}, **ctx.common)
        cells = {unit: {"same": r.same, N_SCORED: r.n_scored}}
        out = {(unit, "same"): samples["same"]}
        for i, j in combinations(range(attr.k), 2):
            pair = pair_name(attr.groups, i, j)
            test = unit if attr.k == 2 else f"{unit}: {pair}"
            cells.setdefault(test, {}).update(skew=r.skew[pair], stereotype=r.stereotype[pair])
            out.update({(test, s): samples[(s, pair)] for s in ("skew", "stereotype")})
        return r, cells, out
