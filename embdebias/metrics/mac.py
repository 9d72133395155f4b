r"""Mean Average Cosine distance, MAC (Manzini, Chong, Black & Tsvetkov, NAACL 2019).

For target sets :math:`T_1, \dots, T_k` (the groups' words) and attribute sets
:math:`A_1, \dots, A_m` (stereotype words):

.. math::

    \mathrm{MAC}(T, A) = \frac{1}{|T|\,m} \sum_{i} \sum_{t \in T_i} \sum_{j=1}^{m}
        \operatorname{mean}_{a \in A_j} \bigl(1 - \cos(t, a)\bigr)

where :math:`|T|` is the number of target words of all groups together: every (target word,
attribute set) pair counts once, so a group with more words weighs more, as in Manzini et
al.'s ``evalBias.py`` (``multiclass_evaluation``) and WEFE's ``MAC``. The value lies in
[0, 2]; **higher is read as less biased** (the targets are, on average, farther from the
stereotype sets), following the paper.

Conventions, against the other tools:

* Manzini et al. call it a mean average *cosine similarity* but compute scipy's cosine
  *distance* ``1 - cos``; WEFE 1.0.1 does the same under the same name and says "the
  closer the value is to 1, the less biased". embdebias names it for what it computes
  (a distance); the value is theirs (``benchmarks/results/attributes.md`` measures it).
* Cosines do not depend on vector length, so normalizing first (WEFE's ``normalize``)
  changes nothing.
* Manzini et al. test a change with a paired t-test over the (target, attribute set)
  distances before and after debiasing; here, as for every metric, the interval is a
  bootstrap over the words (every target and attribute set resampled within itself) and
  a change is the paired bootstrap of :func:`~embdebias.metrics._resample.paired_change`.
  Dobrzeniecka & Urbaniak (2024) show why treating the pre-averaged distances as
  independent points overstates certainty.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    query_sets,
    unit_sets,
    weights,
    query_fields,
)
from ._resample import Sample


@dataclass
class MacResult(QueryResult, MetricResult):
    """Result of :func:`mac`.

    Attributes
    ----------
    mac : float
        The mean cosine distance of every target word to every attribute set (higher: less biased).
    by_target : dict
        ``{target set: {attribute set: mean distance}}``: MAC restricted to one group and one set.
    distances : dict
        ``{target set: {target word: {attribute set: mean distance}}}`` (WEFE's ``targets_eval``).
    ci : tuple of float or None
        Bootstrap percentile interval (``None`` without ``bootstrap``).
    targets, attributes : list of str
        The set names, in order.
    words, missing, lowercased : dict
        Words used, out-of-vocabulary words and lowercase fallbacks per set
        (keys ``"target NAME"``, ``"attribute NAME"``).
    """

    mac: float
    by_target: dict
    distances: dict

    value_field = "mac"


def mac_statistic(cos: dict, t_keys: list, a_keys: list):
    """``stat`` of MAC with every target and attribute set resampled within itself.

    ``cos[(t, a)]`` is the cosine matrix of target set ``t`` with attribute set ``a``
    (Sample keys). A target's mean distance to a resampled set is its distances weighted by
    how often each attribute word was drawn, for every resample at once.
    """
    def stat(idx):
        total, n_targets = 0.0, 0
        for t in t_keys:
            wt = weights(idx[t], cos[(t, a_keys[0])].shape[0]) * idx[t].shape[1]   # (B, n_t) counts
            n_targets += idx[t].shape[1]
            for a in a_keys:
                wa = weights(idx[a], cos[(t, a)].shape[1])                           # (B, n_a)
                total = total + np.einsum("bt,ta,ba->b", wt, 1.0 - cos[(t, a)], wa)
        return total / (n_targets * len(a_keys))
    return stat


def mac_sample(t_vec: dict, a_vec: dict, t_words: dict, a_words: dict) -> Sample:
    """The :class:`~embdebias.metrics._resample.Sample` of MAC (unit vectors and words per set)."""
    t_keys = [key("target", t) for t in t_vec]
    a_keys = [key("attribute", a) for a in a_vec]
    cos = {(key("target", t), key("attribute", a)): t_vec[t] @ a_vec[a].T for t in t_vec for a in a_vec}
    groups = {key("target", t): list(w) for t, w in t_words.items()}
    groups.update({key("attribute", a): list(w) for a, w in a_words.items()})
    return Sample(groups, mac_statistic(cos, t_keys, a_keys), fairer="higher")


def mac(embedding, targets, attributes, *, bootstrap: int = 0, ci_level: float = 0.95,
        random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> MacResult:
    """Mean Average Cosine distance of target sets to attribute sets (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : sequence of word lists, or dict name -> words
        The groups' words (one set or more; Manzini et al. use one per group).
    attributes : sequence of word lists, or dict name -> words
        The attribute (stereotype) sets; a flat list of words is one set.
    bootstrap : int, default 0
        Resamples of the bootstrap interval (0: none).
    ci_level : float, default 0.95
    random_state : int or None, default 0
        Seed of the bootstrap.
    max_missing, lowercase
        As for every metric (see :mod:`embdebias.metrics._common`).

    Returns
    -------
    MacResult
        ``.value`` is MAC (higher: less biased).

    Raises
    ------
    MissingWordsError
        A set loses more than ``max_missing`` of its words.
    """
    t_sets, a_sets = query_sets("mac", targets, attributes, min_targets=1)
    result, sample = mac_parts(as_emb(embedding), t_sets, a_sets, max_missing=max_missing, lowercase=lowercase)
    result.ci = function_interval(sample, bootstrap, random_state, ci_level, "mac", "", "mac")
    result.ci_level = float(ci_level)
    return result


def mac_parts(emb, t_sets: dict, a_sets: dict, *, max_missing: float, lowercase: bool) -> tuple[MacResult, Sample]:
    """``(result without interval, its Sample)`` of MAC on named sets (what :func:`mac` and the
    registered metric share)."""
    t_look = look_up(emb, t_sets, "MAC", "target", max_missing=max_missing, lowercase=lowercase)
    a_look = look_up(emb, a_sets, "MAC", "attribute", max_missing=max_missing, lowercase=lowercase)
    t_vec, a_vec = unit_sets(emb, t_look), unit_sets(emb, a_look)
    distances, by_target, every = {}, {}, []
    for t, vec in t_vec.items():
        per_set = {a: 1.0 - (vec @ av.T).mean(axis=1) for a, av in a_vec.items()}   # a: (n_t,)
        by_target[t] = {a: float(d.mean()) for a, d in per_set.items()}
        distances[t] = {w: {a: float(d[i]) for a, d in per_set.items()} for i, w in enumerate(t_look[t].words)}
        every.append(np.stack(list(per_set.values()), axis=1))                        # (n_t, m)
    sample = mac_sample(t_vec, a_vec, {t: lk.words for t, lk in t_look.items()},
                        {a: lk.words for a, lk in a_look.items()})
    result = MacResult(mac=float(np.concatenate(every).mean()), by_target=by_target, distances=distances,
                       **query_fields(t_look, a_look))
    return result, sample


# -- the metric as evaluate runs it -----------------------------------------------------------------


@register
class Mac(QueryMetric):
    name, title = "mac", "MAC"
    function = "mac"
    legend = ("MAC (Manzini et al. 2019): the mean cosine distance (1 - cos) of every group word to the words "
              "of every attribute (stereotype) set; higher is fairer (read as less biased; 2 is the "
              "largest). WEFE and Manzini et al. call it a mean average cosine similarity; the number is "
              "the same.")
    statistics = {"mac": "MAC (mean cosine distance)", N_SCORED: "words scored"}
    headline = (("*", "mac", "higher"),)
    options: dict = {}

    def units(self, ctx):
        """One unit: every attribute set of the evaluation's attribute (its stereotype sets and
        its neutral words) at once, as Manzini et al. average over all of them; none without sets."""
        return ["attribute sets"] if attribute_word_sets(ctx.attribute_or_default()) else []

    def score(self, emb, unit, ctx):
        attr = ctx.attribute_or_default()
        r, sample = mac_parts(emb, group_sets(attr), attribute_word_sets(attr), **ctx.common)
        return r, {unit: {"mac": r.mac, N_SCORED: r.n_scored}}, {(unit, "mac"): sample}
