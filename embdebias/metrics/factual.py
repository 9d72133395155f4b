r"""Factual association: does an embedding's bias of an occupation follow the share of women in it?

Caliskan, Bryson & Narayanan (2017) correlate each occupation's WEFAT score (female vs male
attribute words, :func:`embdebias.metrics.wefat`) with the percentage of women employed in it
(U.S. Bureau of Labor Statistics); Garg et al. (2018) do the same with relative norm distances
and census data; responsibly's ``compute_factual_association`` with projections on the gender
direction. :func:`factual_association` computes

.. math::

    r = \operatorname{Pearson}\bigl(\mathrm{score}(w),\ \mathrm{fact}(w)\bigr)_{w \in \text{occupations}}

with ``score`` either the WEFAT score (``method="wefat"``, default: Caliskan et al.'s) or the
cosine with the gender direction (``method="projection"``: the first component of a
:class:`~embdebias.subspace.BiasSubspace`, female positive). Both are oriented so that a word
closer to the female words scores higher, so ``r > 0`` means the embedding's gender
association of occupations follows the share of women in them.

The facts: by default the bundled table of 60 one-word occupations and their share of women
(U.S. BLS, Current Population Survey, 2015; 2016 for 9 words), published by Rudinger et al.
(2018) with the Winogender Schemas (``wordlists/rudinger2018/SOURCE.md``); or a user's table
(:mod:`embdebias.data.facts`: a header line, a word column and a number column, tab- or
comma-separated). Also reported: Spearman's rank correlation, the two-sided p-value of r
(``scipy.stats.pearsonr``) and a Fisher-z interval; :func:`~embdebias.evaluate.evaluate`'s
interval is a bootstrap over the words, as for every metric.

How to read it: a high r says the embedding mirrors the labour statistics; debiasing that
removes gender from occupation words should bring it towards 0 ("fairer" here means closer to
0, the reading debiasing papers use; it is not a claim that the statistics are wrong).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..data.facts import FactTable, load_facts
from ..errors import EmbdebiasError
from .base import N_SCORED, Metric, Option, register
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, fisher_z_interval
from ._query import group_sets
from .wefat import wefat

#: How a word is scored: Caliskan et al.'s WEFAT score, or the cosine with the gender direction.
METHODS = ("wefat", "projection")


@dataclass
class FactualAssociationResult(MetricResult):
    """Result of :func:`factual_association`.

    Attributes
    ----------
    r : float
        Pearson correlation of the scores with the facts (the headline ``value``).
    ci : tuple of float
        Fisher-z 95% interval of ``r``.
    p_value : float
        Two-sided p-value of ``r`` (``scipy.stats.pearsonr``).
    spearman : float
        Spearman's rank correlation.
    words, scores, facts : list
        The words scored (in the facts' order), their scores and their facts.
    method : str
        ``"wefat"`` or ``"projection"``.
    fact_column, source : str
        The facts' column and where they come from.
    missing, lowercased : dict
        ``{"facts": [fact words not in the vocabulary]}``, and the words found only in lower case.
    """

    r: float
    ci: tuple[float, float]
    p_value: float
    spearman: float
    words: list[str]
    scores: list[float]
    facts: list[float]
    method: str
    fact_column: str
    source: str
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)

    value_field = "r"

    @property
    def n_scored(self) -> int:
        """Words correlated."""
        return len(self.words)


def as_facts(facts, value_column: str | None = None) -> FactTable:
    """A :class:`~embdebias.data.facts.FactTable` from None (the bundled BLS table), a path, a
    table or a ``{word: number}`` mapping."""
    if isinstance(facts, FactTable):
        return facts
    if isinstance(facts, Mapping):
        try:
            values = {str(w): float(v) for w, v in facts.items()}
        except (TypeError, ValueError):
            raise EmbdebiasError("factual association: facts must map words to numbers") from None
        if not all(np.isfinite(list(values.values()))):
            raise EmbdebiasError("factual association: facts must be finite numbers")
        return FactTable(values, value_column or "value", "", "given mapping")
    return load_facts(facts, value_column=value_column)


def pearson_of(scores: np.ndarray, facts: np.ndarray):
    """``stat`` of Pearson's r between per-word ``scores`` and ``facts`` over resampled words."""
    def stat(idx):
        x, y = scores[idx["items"]], facts[idx["items"]]
        x = x - x.mean(axis=1, keepdims=True)
        y = y - y.mean(axis=1, keepdims=True)
        return (x * y).sum(axis=1) / np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
    return stat


def _word_scores(emb, words, attributes, method, subspace, lists, ddof, lowercase):
    """``(scores, lookup)`` of the in-vocabulary ``words`` by ``method``."""
    lk = lookup(emb, words, name="factual association: words", lowercase=lowercase, max_missing=1.0, min_size=0)
    if method == "wefat":
        if attributes is None:
            from ..data.attributes import load_attribute

            attributes = list(group_sets(load_attribute("gender", lists)).values())
        return np.asarray(wefat(emb, lk.words, attributes, ddof=ddof, max_missing=DEFAULT_MAX_MISSING,
                                lowercase=lowercase).scores), lk
    from ..subspace import gender_direction

    g, _ = gender_direction(emb, subspace, lists=lists)
    return unit_vectors(emb, lk.rows) @ g, lk


def factual_association(embedding, targets=None, attributes=None, *, facts=None, value_column: str | None = None,
                        method: str = "wefat", subspace=None, lists: str = "published", ddof: int = 1,
                        max_missing: float = DEFAULT_MAX_MISSING, lowercase: bool = True) -> FactualAssociationResult:
    """Correlation of the words' gender scores with a fact about them (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : list of str, optional
        The words to correlate (each must be in the facts); default: every word of the facts.
    attributes : two sets of words, optional
        For ``method="wefat"``: the first set is the side the fact counts (women), the second
        the other; default: the female and male words of the gender attribute.
    facts : None, path, FactTable or dict, optional
        Default: the bundled BLS share of women by occupation (Rudinger et al. 2018).
    value_column : str, optional
        The facts file's value column (default: its second column; ``bls_pct_female`` for the
        bundled table).
    method : {"wefat", "projection"}, default "wefat"
        Caliskan et al.'s WEFAT score, or the cosine with the gender direction (female positive).
    subspace : BiasSubspace or array, optional
        The direction of ``method="projection"`` (default: fitted on ``embedding``).
    lists : {"published", "curated"}
        Supplies the default attribute words and definitional pairs.
    ddof : int, default 1
        Of the WEFAT score's standard deviation.
    max_missing : float, default 0.2
        Largest fraction of the words that may be missing from the vocabulary.
    lowercase : bool, default True

    Returns
    -------
    FactualAssociationResult
    """
    from scipy import stats

    if method not in METHODS:
        raise EmbdebiasError(f"factual association: method must be one of {', '.join(METHODS)}, got {method!r}")
    emb = as_emb(embedding)
    table = as_facts(facts, value_column)
    words = list(table.values) if targets is None else list(dict.fromkeys(targets))
    unknown = [w for w in words if w not in table.values]
    if unknown:
        raise EmbdebiasError(f"factual association: {len(unknown)} target word(s) have no fact in "
                             f"{table.path or table.source}: {', '.join(map(repr, unknown[:20]))}")
    lookup(emb, words, name="factual association: words", lowercase=lowercase, max_missing=max_missing,
           min_size=3)
    scores, lk = _word_scores(emb, words, attributes, method, subspace, lists, ddof, lowercase)
    values = np.array([table.values[w] for w in lk.words])
    r = p = rho = float("nan")
    if np.ptp(values) > 0 and np.ptp(scores) > 0:      # a constant column has no correlation
        r, p = map(float, stats.pearsonr(scores, values))
        rho = float(stats.spearmanr(scores, values)[0])
    return FactualAssociationResult(
        r=r, ci=fisher_z_interval(r, len(lk.words)), p_value=p, spearman=rho, words=list(lk.words),
        scores=scores.tolist(), facts=values.tolist(), method=method, fact_column=table.column,
        source=table.source, missing={"facts": list(lk.missing)},
        lowercased={"facts": dict(lk.lowercased)} if lk.lowercased else {})


def _check_method(value) -> str:
    if value not in METHODS:
        raise EmbdebiasError(f"expected one of {', '.join(METHODS)}, got {value!r}")
    return str(value)


@register
class FactualAssociation(Metric):
    name, title = "factual", "Factual association (share of women)"
    function = "factual_association"
    legend = ("Pearson r between each occupation's gender score (WEFAT: female vs male words, Caliskan et al. "
              "2017; or its cosine with the gender direction) and the share of women employed in it (U.S. "
              "Bureau of Labor Statistics, 2015-16, as published by Rudinger et al. 2018, unless a facts file "
              "is given). r near 1: the embedding mirrors the labour statistics; debiasing should bring it "
              "towards 0. Spearman's rho beside it; the interval is a bootstrap over the occupations.")
    statistics = {"r": "Pearson r", "spearman": "Spearman rho", "p_value": "p-value of r", N_SCORED: "words"}
    headline = (("", "r", "0"),)
    options = {"facts": Option(None, "a facts file (header; word, number columns; default: the bundled BLS "
                                     "share of women by occupation)"),
               "value_column": Option(None, "the facts file's number column (default: its second column)"),
               "method": Option("wefat", "wefat (Caliskan et al.) or projection (cosine with the gender "
                                         "direction)", _check_method)}

    def params(self, opts):
        return {k: None if v is None else str(v) for k, v in opts.items()}

    def units(self, ctx):
        # the bundled facts are about women: another attribute needs its own facts file (and two groups)
        attr = ctx.attribute_or_default()
        own = ctx.opts(self.name)["facts"] is not None
        return ["occupations"] if (attr.uses_gender_lists or own) and attr.k == 2 else []

    def data(self, ctx):
        opts = ctx.opts(self.name)
        table = as_facts(opts["facts"], opts["value_column"])
        return f"{len(table.values)} words with column {table.column!r}: {table.source}"

    def score(self, emb, unit, ctx):
        opts = ctx.opts(self.name)
        groups = group_sets(ctx.attribute_or_default())
        # projection: the one direction every column is measured on (fitted on the first column)
        direction = ctx.reference_direction()[0] if opts["method"] == "projection" else None
        r = factual_association(emb, facts=opts["facts"], value_column=opts["value_column"], method=opts["method"],
                                attributes=list(groups.values()), subspace=direction, lists=ctx.lists,
                                **ctx.common)
        cells = {"r": r.r, "spearman": r.spearman, "p_value": r.p_value, N_SCORED: r.n_scored}
        sample = Sample({"items": r.words}, pearson_of(np.asarray(r.scores), np.asarray(r.facts)), fairer="zero")
        return r, {unit: cells}, {(unit, "r"): sample}
