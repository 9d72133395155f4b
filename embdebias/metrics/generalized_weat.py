r"""Generalized WEAT for ``k`` groups (Swinger, De-Arteaga, Heffernan, Leiserson & Kalai, AIES 2019).

``k`` target sets :math:`X_1..X_k` (the groups' words) and ``k`` attribute sets
:math:`A_1..A_k`, the ``i``-th being the stereotype set of group ``i``; with
:math:`\mu(S)` the mean of a set's unit vectors and :math:`\bar\mu_X, \bar\mu_A` the means
of the ``k`` set means:

.. math::

    \mathrm{gWEAT} = \sum_{i=1}^{k} \bigl(\mu(X_i) - \bar\mu_X\bigr) \cdot \bigl(\mu(A_i) - \bar\mu_A\bigr)

Positive: each group sits closer to its own stereotype set than the groups do on average
(stereotype-consistent); 0 is fairer; negative: anti-stereotypical. With ``k = 2`` it is
half of WEAT's difference of mean associations, :math:`\tfrac12(\operatorname{mean}_{X_1}
s - \operatorname{mean}_{X_2} s)` with :math:`s(w) = \operatorname{mean}_{A_1}\cos -
\operatorname{mean}_{A_2}\cos`, unstandardized (the tests check it).

**p-value** (one-sided, as WEAT's): the share of reassignments of the pooled target words
to the groups (sizes kept) whose statistic is at least the observed one. Because
:math:`\sum_i (\mu(A_i) - \bar\mu_A) = 0`, the statistic is
:math:`\sum_i \operatorname{mean}_{w \in X_i} w \cdot c_i` with :math:`c_i = \mu(A_i) -
\bar\mu_A` and the attribute vectors fixed, so a reassignment costs one gather. For two
groups it is WEAT's test on the per-word scores (exact up to ``exact_limit`` partitions,
:func:`~embdebias.metrics.weat.permutation_p_value`); for more, Monte-Carlo with
``n_permutations`` seeded reassignments, :math:`(b + 1)/(m + 1)`, with its standard error.
The paper gives no test; this one is ours.

The attribute sets are matched to the groups by position (the registered metric matches
an attribute's ``attribute_sets`` by group name when they are named after the groups).
EmbeddingBiasScores' ``GeneralizedWEAT.group_bias`` computes the same statistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import EmbdebiasError
from .base import N_SCORED, Option, get_metric, p_value_evidence, positive_int, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb
from ._query import (
    QueryMetric,
    QueryResult,
    attribute_text,
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

#: Random reassignments held at once by the Monte-Carlo test (rows of a block).
_BLOCK = 10_000


@dataclass
class GeneralizedWeatResult(QueryResult, MetricResult):
    """Result of :func:`generalized_weat`.

    Attributes
    ----------
    statistic : float
        The generalized WEAT statistic (0 is fairer; positive: stereotype-consistent).
    by_group : dict
        ``{target set: its term of the sum}``.
    p_value, p_value_se : float
        One-sided permutation p-value and its Monte-Carlo standard error (0 when exact).
    exact : bool
        Whether every partition was counted (two groups, few enough partitions).
    n_permutations : int
        Partitions counted (all when exact, else the number sampled).
    ci : tuple of float or None
        Bootstrap percentile interval of the statistic (``None`` without ``bootstrap``).
    targets, attributes, words, missing, lowercased
        As for every query metric (:class:`~embdebias.metrics.mac.MacResult`).
    """

    statistic: float
    by_group: dict
    p_value: float
    p_value_se: float
    exact: bool
    n_permutations: int
    random_state: int | None = 0

    value_field = "statistic"


def gweat_statistic(x_vec: list, a_vec: list, x_keys: list, a_keys: list):
    """``stat`` of the generalized WEAT with every target and attribute set resampled."""
    def stat(idx):
        mx = np.stack([weights(idx[k], len(v)) @ v for k, v in zip(x_keys, x_vec)], axis=1)   # (B, k, d)
        ma = np.stack([weights(idx[k], len(v)) @ v for k, v in zip(a_keys, a_vec)], axis=1)
        mx -= mx.mean(axis=1, keepdims=True)
        ma -= ma.mean(axis=1, keepdims=True)
        return np.einsum("bkd,bkd->b", mx, ma)
    return stat


def _monte_carlo(scores: np.ndarray, sizes: list, observed: float, n_permutations: int,
                 rng: np.random.Generator) -> int:
    """How many of ``n_permutations`` random reassignments of the pooled words (rows of
    ``scores``, ``(N, k)``: each word's ``w . c_i``) to groups of ``sizes`` reach ``observed``."""
    labels = np.repeat(np.arange(len(sizes)), sizes)
    per_slot = 1.0 / np.repeat(np.asarray(sizes, dtype=np.float64), sizes)
    threshold = observed - 1e-9 * max(1.0, float(np.abs(scores).sum()))
    n = scores.shape[0]
    hits, done = 0, 0
    block = max(1, min(_BLOCK, 2_000_000 // max(n, 1)))
    while done < n_permutations:
        b = min(block, n_permutations - done)
        perm = np.argsort(rng.random((b, n)), axis=1)
        stats = (scores[perm, labels[None, :]] * per_slot).sum(axis=1)
        hits += int(np.count_nonzero(stats >= threshold))
        done += b
    return hits


def gweat_p_value(scores: np.ndarray, sizes: list, *, n_permutations: int, exact_limit: int, rng):
    """``(p, standard error, exact, partitions counted)`` of the one-sided test (see the module docstring)."""
    from .weat import permutation_p_value

    if len(sizes) == 2:
        s = scores[:, 0]
        p, se, exact, counted, _ = permutation_p_value(s[:sizes[0]], s[sizes[0]:], exact_limit=exact_limit,
                                                       n_permutations=n_permutations, rng=rng)
        return p, se, exact, counted
    bounds = np.cumsum([0] + list(sizes))
    observed = sum(float(scores[bounds[i]:bounds[i + 1], i].mean()) for i in range(len(sizes)))
    m = int(n_permutations)
    hits = _monte_carlo(scores, sizes, observed, m, rng)
    p = (hits + 1) / (m + 1)
    return p, math.sqrt(p * (1 - p) / m), False, m


def generalized_weat(embedding, targets, attributes, *, n_permutations: int = 10_000, exact_limit: int = 1_000_000,
                     random_state: int | None = 0, bootstrap: int = 0, ci_level: float = 0.95,
                     max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> GeneralizedWeatResult:
    """Generalized WEAT of ``k`` target sets against their ``k`` attribute sets (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : sequence of k >= 2 word lists, or dict name -> words
        The groups' words.
    attributes : sequence of k word lists, or dict name -> words
        The ``i``-th is group ``i``'s stereotype set.
    n_permutations : int, default 10_000
        Random reassignments of the Monte-Carlo p-value (when it is not exact).
    exact_limit : int, default 1_000_000
        Two groups: count every partition when there are at most this many.
    random_state : int or None, default 0
        Seed of the permutations and of the bootstrap (independent streams).
    bootstrap, ci_level
        The bootstrap interval of the statistic (0 resamples: none).
    max_missing, lowercase
        As for every metric.

    Returns
    -------
    GeneralizedWeatResult
        ``.value`` is the statistic (0 is fairer).

    Raises
    ------
    EmbdebiasError
        Fewer than two target sets, or not as many attribute sets as target sets.
    """
    t_sets, a_sets = query_sets("generalized_weat", targets, attributes)
    result, sample = gweat_parts(as_emb(embedding), t_sets, a_sets, n_permutations=n_permutations,
                                 exact_limit=exact_limit, random_state=random_state, max_missing=max_missing,
                                 lowercase=lowercase)
    result.ci = function_interval(sample, bootstrap, random_state, ci_level, "generalized_weat", "", "statistic")
    result.ci_level = float(ci_level)
    return result


def gweat_parts(emb, t_sets: dict, a_sets: dict, *, n_permutations: int = 10_000, exact_limit: int = 1_000_000,
                random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING,
                lowercase: bool = True) -> tuple[GeneralizedWeatResult, Sample]:
    """``(result without interval, its Sample)`` of the generalized WEAT on named sets."""
    if len(a_sets) != len(t_sets):
        raise EmbdebiasError(f"generalized_weat: needs one attribute set per target set (group i's stereotype "
                             f"set i); got {len(t_sets)} target sets ({', '.join(t_sets)}) and {len(a_sets)} "
                             f"attribute sets ({', '.join(a_sets)})")
    for name, value in (("n_permutations", n_permutations), ("exact_limit", exact_limit)):
        try:
            positive_int(value)
        except EmbdebiasError as exc:
            raise EmbdebiasError(f"generalized_weat: {name}: {exc}") from None
    t_look = look_up(emb, t_sets, "generalized WEAT", "target", max_missing=max_missing, lowercase=lowercase)
    a_look = look_up(emb, a_sets, "generalized WEAT", "attribute", max_missing=max_missing, lowercase=lowercase)
    x_vec, a_vec = list(unit_sets(emb, t_look).values()), list(unit_sets(emb, a_look).values())
    centres = np.stack([v.mean(axis=0) for v in a_vec])
    centres -= centres.mean(axis=0)                                                  # c_i
    x_means = np.stack([v.mean(axis=0) for v in x_vec])
    terms = np.einsum("kd,kd->k", x_means - x_means.mean(axis=0), centres)
    perm_seed, _ = np.random.SeedSequence(random_state).spawn(2)
    p, se, exact, counted = gweat_p_value(np.concatenate(x_vec) @ centres.T, [len(v) for v in x_vec],
                                          n_permutations=n_permutations, exact_limit=exact_limit,
                                          rng=np.random.default_rng(perm_seed))
    x_keys, a_keys = [key("target", t) for t in t_sets], [key("attribute", a) for a in a_sets]
    groups = {k: list(lk.words) for k, lk in zip(x_keys, t_look.values())}
    groups.update({k: list(lk.words) for k, lk in zip(a_keys, a_look.values())})
    sample = Sample(groups, gweat_statistic(x_vec, a_vec, x_keys, a_keys), fairer="zero")
    result = GeneralizedWeatResult(
        statistic=float(terms.sum()), by_group=dict(zip(t_sets, terms.tolist())), p_value=float(p),
        p_value_se=float(se), exact=bool(exact), n_permutations=int(counted), random_state=random_state,
        **query_fields(t_look, a_look))
    return result, sample


# -- the metric as evaluate runs it -----------------------------------------------------------------


def _owner(name: str, groups) -> str | None:
    """The group a set is named after: the group name itself, or it followed by ``_`` or a space
    (race's ``black_stereotypes``)."""
    hits = [g for g in groups if name == g or name.startswith((f"{g}_", f"{g} "))]
    return hits[0] if len(hits) == 1 else None


def matched_sets(attr) -> dict:
    """``{set name: words}`` of an attribute's stereotype sets in group order: the sets named after
    the groups (``muslim`` or ``muslim_stereotypes``), or, when there are exactly ``k`` sets and
    none is named after a group, in their order (a partial match is refused: it would pair a
    group with another's set)."""
    sets = {str(k): tuple(v) for k, v in dict(attr.attribute_sets).items()}
    owners = {name: _owner(name, attr.groups) for name in sets}
    by_group = {g: [n for n, o in owners.items() if o == g] for g in attr.groups}
    if all(len(names) == 1 for names in by_group.values()):
        return {names[0]: sets[names[0]] for names in by_group.values()}
    if len(sets) == attr.k and not any(owners.values()):  # file order only when no set names a group
        return sets
    raise EmbdebiasError(f"generalized_weat: attribute {attr.name!r} needs one attribute set per group "
                         f"({', '.join(attr.groups)}), named after the group or {attr.k} in group order; "
                         f"it has {len(sets)}: {', '.join(sets) or 'none'}")


@register
class GeneralizedWeat(QueryMetric):
    name, title = "generalized_weat", "generalized WEAT"
    function = "generalized_weat"
    legend = ("Generalized WEAT (Swinger et al. 2019): sum over the groups of (the group's mean vector - the mean "
              "of the groups) . (its stereotype set's mean vector - the mean of the sets), on unit vectors; "
              "positive: each group is closer to its own stereotype set; 0 is fairer. p-value: one-sided "
              "permutation test reassigning the group words.")
    statistics = {"statistic": "generalized WEAT", "p_value": "p-value", N_SCORED: "words scored"}
    folded = ("p_value_se", "n_permutations")
    headline = (("", "statistic", "0"),)
    options = {
        "n_permutations": Option(10_000, "random reassignments of the p-value when it is not exact", positive_int),
        "exact_limit": Option(1_000_000, "two groups: count every partition when there are at most this many",
                              positive_int),
    }

    def units(self, ctx):
        """One unit when the attribute has a stereotype set per group (:func:`matched_sets`), else none
        (the data line says why)."""
        try:
            matched_sets(ctx.attribute_or_default())
        except EmbdebiasError:
            return []
        return ["stereotype sets"]

    def data(self, ctx):
        attr = ctx.attribute_or_default()
        try:
            matched_sets(attr)
            why = ""
        except EmbdebiasError as exc:
            why = f" (not scored: {str(exc).removeprefix('generalized_weat: ')})"
        return attribute_text(attr) + why

    def score(self, emb, unit, ctx):
        attr = ctx.attribute_or_default()
        r, sample = gweat_parts(emb, group_sets(attr), matched_sets(attr), random_state=ctx.random_state,
                                **ctx.opts(self.name), **ctx.common)
        cells = {"statistic": r.statistic, "p_value": r.p_value, "p_value_se": r.p_value_se,
                 "n_permutations": r.n_permutations, N_SCORED: r.n_scored}
        return r, {unit: cells}, {(unit, "statistic"): sample}

    def format_cell(self, statistic, cells, digits):
        """The p-value with its Monte-Carlo standard error (as WEAT's)."""
        return get_metric("weat").format_cell(statistic, cells, digits)

    def evidence(self, report, embedding):
        """Significant when the permutation p-value (groups' words reassigned) is below 0.05."""
        return p_value_evidence(report, self.name, embedding, "statistic", "statistic")
