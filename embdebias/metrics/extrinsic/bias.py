r"""Extrinsic bias: Czarnowska et al.'s generalized metrics over a downstream probe.

Intrinsic scores such as WEAT do not predict how biased a model built on the embedding
is (Goldfarb-Tarrant et al. 2021; Delobelle et al. 2022). This module measures the bias
of such a model: the :class:`~embdebias.metrics.extrinsic.probe.SentimentProbe` (logistic
regression on mean-pooled unit vectors, trained on the VADER lexicon) scores
counterfactual sentences (:mod:`embdebias.metrics.extrinsic.templates`) that differ only in an
identity term, and the generalized fairness metrics of Czarnowska, Vyas & Shah (2021)
compare its scores :math:`P(\text{positive})` across the groups of terms.

Statistics of one template family (:data:`STATISTICS`), each a call of
:mod:`embdebias.fairness` (T: the groups compared):

* **between the genders** (T = the two groups of terms): ``score_gap``, the mean score
  of the first group minus the second's (Average Score Difference; signed: which group
  the probe reads as more positive); ``cf_pcm``, the counterfactual PCM with
  :math:`|x - y|` over counterpart pairs (the Counterfactual Token Fairness Gap as a PCM):
  the mean :math:`|f(\text{female term}) - f(\text{male term})|` over every template and
  every pair of counterparts ("my mother" / "my father": the template files list the two
  groups paired in order). Czarnowska et al. (Sec. 5) sample the Cartesian product of the
  variations instead; with terms that are not interchangeable (names) that would count
  "Mary" vs "John" and "Mary" vs "Thomas" alike, and be non-zero for a model that treats
  each counterpart pair identically;
* **group form** (whole groups, Eq. 1, 3, 5): ``group_pcm``, ``group_bcm`` (against all
  examples) and ``group_mcm`` (range). With two groups they are exactly
  :math:`|\text{score gap}|`, :math:`|\text{score gap}|/2` and :math:`|\text{score
  gap}|`: reported for completeness, without intervals of their own (the signed score
  gap's interval is theirs);
* **perturbation sensitivity** (T = every identity term, as Prabhakaran et al. 2019 treat
  each name as its own perturbation; counterfactual form, Eq. 4 and 6): ``cf_bcm``, the
  mean |term - the template's mean over terms|; ``cf_mcm``, the range over terms
  (Perturbation Score Range); ``cf_mcm_std``, their standard deviation (Perturbation
  Score Deviation). They measure how much the identity term moves the score at all,
  within a gender as well as across;
* with gold labels (the emotion family): ``fped`` and ``fned`` (FPED/FNED over the two
  groups, normalized by their number as Czarnowska et al. Sec. 6 recommend) and
  ``tpr_gap``. A family whose labelled fillers lose one polarity to missing words keeps
  its other statistics and says why these are missing.

**Uncertainty.** Every statistic but the three group-form identities has a bootstrap
interval over templates *and* terms: each resample draws counterfactual templates
(template, filler) and, independently, the terms of each group, with replacement. The
scores form a full (template x term) grid, so each statistic is computed on a thousand
resamples at once from the draw counts (:mod:`embdebias.metrics.extrinsic._grid`); on
the full sample and on single resamples it equals the library (tested), whose values
are the ones reported.

**Missing words.** A term, filler or template sentence is scored only when all its
tokens are in the vocabulary (otherwise it would silently mean something else: "my
niece" without "niece" is "my"); the rest are listed in ``missing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ... import wordlists
from ...errors import EmbdebiasError, MissingWordsError
from ...fairness import bcm, fairness_metric, mcm, pcm
from ..base import N_SCORED, Metric, Option, register
from .._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, check_max_missing
from .templates import _SLOT, TemplateFamily, TemplateSet, load_templates


@dataclass(frozen=True)
class ExtrinsicStatistic:
    """One extrinsic statistic: its label, its library call and how to read it."""

    key: str
    label: str
    call: str
    fairer: str = "lower"
    needs_labels: bool = False
    interval: bool = True


#: The statistics of a family, in report order. ``interval``: has a bootstrap interval
#: and a paired comparison (the group-form identities have neither).
STATISTICS = (
    ExtrinsicStatistic("score_gap", "score gap, female - male (signed; group form)",
                       "fairness_metric('average_score_difference')", fairer="zero"),
    ExtrinsicStatistic("cf_pcm", "counterfactual PCM: mean abs(female - male) over counterpart pairs",
                       "fairness_metric('cf_gap_pcm') on the Cartesian product of variations"),
    ExtrinsicStatistic("group_pcm", "group PCM (= abs(score gap))", "pcm(phi='mean')", interval=False),
    ExtrinsicStatistic("group_bcm", "group BCM (= abs(score gap) / 2)", "bcm(phi='mean')", interval=False),
    ExtrinsicStatistic("group_mcm", "group MCM (= abs(score gap))", "mcm(phi='mean', d='range')", interval=False),
    ExtrinsicStatistic("cf_bcm", "counterfactual BCM over terms: mean abs(term - template mean)",
                       "bcm(phi='mean', templates=..., groups=terms)"),
    ExtrinsicStatistic("cf_mcm", "counterfactual MCM over terms: range (perturbation score range)",
                       "fairness_metric('pert_sr', groups=terms)"),
    ExtrinsicStatistic("cf_mcm_std", "counterfactual MCM over terms: std (perturbation score deviation)",
                       "fairness_metric('pert_sd', groups=terms)"),
    ExtrinsicStatistic("fped", "FPED (normalized)", "fairness_metric('fped_normalized')", needs_labels=True),
    ExtrinsicStatistic("fned", "FNED (normalized)", "fairness_metric('fned_normalized')", needs_labels=True),
    ExtrinsicStatistic("tpr_gap", "TPR gap", "fairness_metric('tpr_gap')", needs_labels=True),
)


@dataclass
class FamilyScores:
    """The probe's scores of one template family: a (template x term) grid.

    Attributes
    ----------
    family : str
    units : list of TemplateUnit
        The counterfactual templates scored (rows).
    terms : dict
        ``{group: [terms scored]}``; the columns are these, group after group.
    scores : ndarray of shape (n_units, n_terms)
        ``P(positive)`` of every sentence.
    labels : ndarray of int or None
        Gold label of every row (None for an unlabelled family).
    missing : dict
        ``{"identity terms" | "fillers" | "templates": [left out]}``.
    pairs : list of (str, str) or None
        Counterpart terms ``(first group's, second group's)`` when the two groups are
        paired in order (both kept); None otherwise.
    """

    family: str
    units: list
    terms: dict
    scores: np.ndarray
    labels: np.ndarray | None
    missing: dict
    pairs: list | None = None

    @property
    def group_names(self) -> list[str]:
        return list(self.terms)

    @property
    def column_groups(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.terms)), [len(v) for v in self.terms.values()])

    def pair_columns(self) -> np.ndarray:
        """``(n_pairs, 2)`` column indices of the counterpart pairs."""
        position = {t: i for i, t in enumerate(t for ts in self.terms.values() for t in ts)}
        return np.array([[position[a], position[b]] for a, b in self.pairs or []], dtype=np.int64).reshape(-1, 2)

    def take(self, rows, terms: dict | None = None, pairs=None) -> "FamilyScores":
        """The scores of some templates and, per group, some terms -- or some counterpart
        pairs -- by position, repeats allowed.

        A repeated template, term or pair becomes a distinct one (keys suffixed ``#k``),
        so the result is one bootstrap resample as a data set of its own.
        """
        rows = np.asarray(rows, dtype=np.int64)
        units = [replace(self.units[i], key=f"{self.units[i].key}#{k}") for k, i in enumerate(rows)]
        labels = None if self.labels is None else self.labels[rows]
        if pairs is not None:
            chosen = [(k, self.pairs[j]) for k, j in enumerate(np.asarray(pairs, dtype=np.int64))]
            new_pairs = [(f"{a}#{k}", f"{b}#{k}") for k, (a, b) in chosen]
            names = dict(zip(self.group_names, map(list, zip(*new_pairs))))
            cols = self.pair_columns()[np.asarray(pairs, dtype=np.int64)].T.ravel()
            return FamilyScores(self.family, units, names, self.scores[np.ix_(rows, cols)], labels, self.missing,
                                new_pairs)
        picked = {g: np.asarray(terms[g], dtype=np.int64) for g in self.group_names}
        cols = np.concatenate([np.flatnonzero(self.column_groups == i)[picked[g]]
                               for i, g in enumerate(self.group_names)])
        names = {g: [f"{self.terms[g][j]}#{k}" for k, j in enumerate(p)] for g, p in picked.items()}
        return FamilyScores(self.family, units, names, self.scores[np.ix_(rows, cols)], labels, self.missing)

    def to_long(self) -> dict:
        """One entry per sentence: ``{"example", "group", "term", "template", "score", "label", "pair"}``
        (``label`` with gold labels, ``pair`` with counterpart pairs).

        The columns of ``embdebias fairness SCORES.csv``.
        """
        n_units, n_terms = self.scores.shape
        names = np.asarray(self.group_names, dtype=object)[self.column_groups]
        terms = [t for ts in self.terms.values() for t in ts]
        keys = [u.key for u in self.units]
        out = {"example": [f"{k}|{t}" for k in keys for t in terms],
               "group": np.tile(names, n_units).tolist(), "term": terms * n_units,
               "template": np.repeat(np.asarray(keys, dtype=object), n_terms).tolist(),
               "score": self.scores.ravel().tolist()}
        if self.labels is not None:
            out["label"] = np.repeat(self.labels, n_terms).tolist()
        if self.pairs:
            pair_of = {t: f"{a}|{b}" for a, b in self.pairs for t in (a, b)}
            out["pair"] = [pair_of.get(t, "") for t in out["term"]]
        return out


def _pieces(probe, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(logit sums, token counts, complete)`` of texts; complete: every token in the vocabulary."""
    from .templates import tokenize

    sums, counts, _ = probe.logit_parts(texts)
    return sums, counts, counts == np.array([len(tokenize(t)) for t in texts])


def _missing(fam: TemplateFamily, lost: list, filler_ok: np.ndarray, frame_ok: np.ndarray) -> dict:
    return {"identity terms": lost,
            "fillers": sorted({u.filler for u, ok in zip(fam.units, filler_ok) if not ok}),
            "templates": sorted({u.template for u, ok in zip(fam.units, frame_ok) if not ok})}


def _check_groups(groups: dict, lost: list, emb_name: str, max_missing: float) -> None:
    for g, ts in groups.items():
        gone = [t for t in ts if t in lost]
        if len(ts) - len(gone) < 2 or len(gone) / len(ts) > max_missing:
            raise MissingWordsError(
                f"extrinsic identity terms ({g}): {len(gone)} of {len(ts)} are not in the vocabulary of "
                f"{emb_name} (more than the allowed {max_missing:.0%}, or fewer than 2 left): "
                f"{', '.join(map(repr, gone[:30]))}", gone)


def score_family(probe, template_set: TemplateSet, family: str | TemplateFamily, *,
                 max_missing: float = DEFAULT_MAX_MISSING) -> FamilyScores:
    """Score every sentence of ``family`` with a fitted ``probe``.

    Raises
    ------
    MissingWordsError
        More than ``max_missing`` of a group's identity terms are out of vocabulary (or
        fewer than two are left), or no template sentence of the family is.
    """
    fam = template_set.family(family) if isinstance(family, str) else family
    max_missing = check_max_missing(max_missing)
    name = probe.embedding_.name
    frame = _pieces(probe, [_SLOT.sub(" ", u.template) for u in fam.units])
    filler = _pieces(probe, [u.filler for u in fam.units])
    all_terms = template_set.terms
    term = _pieces(probe, all_terms)
    lost = [t for t, ok in zip(all_terms, term[2]) if not ok]
    missing = _missing(fam, lost, filler[2], frame[2])
    _check_groups(template_set.groups, lost, name, max_missing)
    unit_ok, term_ok = frame[2] & filler[2], term[2]
    if not unit_ok.any():
        raise MissingWordsError(f"extrinsic templates ({fam.name}): no template sentence has all its words in "
                                f"the vocabulary of {name}", missing["templates"])
    # logit of (unit, term) = b + (frame + filler + term sums) / (their token counts)
    num = (frame[0] + filler[0])[unit_ok][:, None] + term[0][term_ok][None, :]
    den = (frame[1] + filler[1])[unit_ok][:, None] + term[1][term_ok][None, :]
    scores = 1.0 / (1.0 + np.exp(-(probe.intercept_ + num / den)))
    units = [u for u, ok in zip(fam.units, unit_ok) if ok]
    labels = _labels(fam, units, missing)
    kept = {g: [t for t in ts if t not in lost] for g, ts in template_set.groups.items()}
    return FamilyScores(fam.name, units, kept, scores, labels, missing, _pairs(template_set.groups, lost))


def _labels(fam: TemplateFamily, units: list, missing: dict) -> np.ndarray | None:
    """Gold labels of the scored units; None without labels or with one polarity left (FPED,
    FNED and the TPR gap need both; the rest of the family still stands), said in ``missing``."""
    if not fam.labelled:
        return None
    labels = np.array([u.label for u in units], dtype=np.int64)
    if np.unique(labels).size < 2:
        missing["label classes"] = [name for c, name in ((1, "positive"), (0, "negative")) if c not in labels]
        return None
    return labels


def _pairs(groups: dict, lost: list) -> list | None:
    """Counterpart pairs of two groups of equal length (the i-th terms), both in the vocabulary."""
    if len(groups) != 2 or len({len(ts) for ts in groups.values()}) != 1:
        return None
    return [(a, b) for a, b in zip(*groups.values()) if a not in lost and b not in lost]


# -- the statistics on the full sample (the library) and on resamples (the grid) ---------------


def _paired(long: dict) -> tuple[list, list, list]:
    """``(scores, groups, templates)``: one counterfactual template per (template, counterpart
    pair), holding the pair's two sentences; ``long`` is :meth:`FamilyScores.to_long`."""
    keep = [i for i, p in enumerate(long["pair"]) if p]
    return ([long["score"][i] for i in keep], [long["group"][i] for i in keep],
            [f"{long['template'][i]}|{long['pair'][i]}" for i in keep])


def _sorted_codes(labels: list) -> tuple[list, np.ndarray]:
    """``(sorted distinct labels, each label's index among them)``.

    The library sorts the labels of every call (:mod:`embdebias.fairness` groups and orders
    by them); given these codes, which sort as the labels do, it groups and orders the
    examples the same way, and the strings are converted and sorted once per family, not
    once per statistic."""
    names, codes = np.unique(np.asarray(labels), return_inverse=True)
    return names.tolist(), codes.reshape(-1).astype(np.intp)


def library_statistics(fs: FamilyScores, threshold: float = 0.5) -> dict:
    """``{statistic key: value}`` of one family, computed by :mod:`embdebias.fairness`.

    ``score_gap`` compares exactly two groups and ``cf_pcm`` counterpart pairs of two groups;
    each is left out otherwise;
    ``fped``, ``fned`` and ``tpr_gap`` need gold labels.
    """
    s = fs.scores.ravel().astype(np.float64)                   # the order of to_long: unit by unit
    n_units, n_terms = fs.scores.shape
    names, of_column = _sorted_codes(np.asarray(fs.group_names, dtype=object)[fs.column_groups].tolist())
    g = np.tile(of_column, n_units)
    t = np.repeat(_sorted_codes([u.key for u in fs.units])[1], n_terms)
    term = np.tile(_sorted_codes([w for ws in fs.terms.values() for w in ws])[1], n_units)
    order = [names.index(name) for name in fs.group_names]
    common = dict(group_order=order, threshold=threshold)
    terms = dict(templates=t, threshold=threshold)
    out = {"group_pcm": pcm(s, g, phi="mean", **common).value,
           "group_bcm": bcm(s, g, phi="mean", **common).value,
           "group_mcm": mcm(s, g, phi="mean", d="range", **common).value,
           "cf_bcm": bcm(s, term, phi="mean", **terms).value,
           "cf_mcm": fairness_metric("pert_sr", s, term, **terms).value,
           "cf_mcm_std": fairness_metric("pert_sd", s, term, **terms).value}
    if len(order) == 2:
        out["score_gap"] = fairness_metric("average_score_difference", s, g, templates=t, **common).value
    if fs.pairs:
        ps, pg, pt = _paired(fs.to_long())
        out["cf_pcm"] = fairness_metric("cf_gap_pcm", np.asarray(ps, dtype=np.float64),
                                        np.array([names.index(name) for name in pg], dtype=np.intp),
                                        templates=_sorted_codes(pt)[1], **common).value
    if fs.labels is not None:
        labels = np.repeat(fs.labels, n_terms)
        for key, name in (("fped", "fped_normalized"), ("fned", "fned_normalized"), ("tpr_gap", "tpr_gap")):
            out[key] = fairness_metric(name, s, g, labels=labels, **common).value
    return {st.key: out[st.key] for st in STATISTICS if st.key in out}


def grid_keys(fs: FamilyScores) -> list[str]:
    """The statistics of ``fs`` that have bootstrap intervals (its groups and labels allowing)."""
    return [s.key for s in STATISTICS if s.interval and (fs.labels is not None or not s.needs_labels)
            and (s.key != "score_gap" or len(fs.terms) == 2) and (s.key != "cf_pcm" or fs.pairs)]


def sample_items(fs: FamilyScores, key: str) -> dict:
    """The resampled items of a statistic: templates, and the terms of each group -- or, for
    ``cf_pcm``, the counterpart pairs."""
    items = {"templates": [u.key for u in fs.units]}
    if key == "cf_pcm":
        return {**items, "pairs": [f"{a}|{b}" for a, b in fs.pairs]}
    return {**items, **fs.terms}


def grid_statistics(fs: FamilyScores, idx: dict, threshold: float = 0.5, keys=None) -> dict:
    """Statistics on ``B`` resamples: ``{key: (B,) array}`` (all of :func:`grid_keys`, or ``keys``)."""
    from ._grid import grid_statistics as on_grid

    return on_grid(fs, idx, threshold, grid_keys(fs) if keys is None else keys)


def grid_statistic(fs: FamilyScores, key: str, threshold: float = 0.5):
    """``stat(idx) -> (B,)`` of one statistic, for a :class:`~embdebias.metrics._resample.Sample`."""
    return lambda idx: grid_statistics(fs, idx, threshold, keys=(key,))[key]


def resolve_threshold(fs: FamilyScores, threshold) -> float:
    """The decision threshold: a number, or ``"median"`` of the family's scores."""
    if isinstance(threshold, str):
        if threshold != "median":
            raise EmbdebiasError(f"threshold must be a number in (0, 1) or 'median', got {threshold!r}")
        return float(np.median(fs.scores))
    threshold = float(threshold)
    if not 0.0 < threshold < 1.0:
        raise EmbdebiasError(f"threshold must be a number in (0, 1) or 'median', got {threshold}")
    return threshold


@dataclass
class ExtrinsicResult(MetricResult):
    """Extrinsic bias of one template family on one embedding.

    Attributes
    ----------
    family : str
    statistics : dict
        ``{key: value}`` of :data:`STATISTICS` (the labelled ones only with gold labels).
    accuracy : float
        The probe's held-out accuracy on lexicon words.
    template_accuracy, template_auc : float or None
        Share of the family's sentences whose predicted polarity is the gold label, and
        the AUC of their scores against the gold labels (None without labels).
    threshold : float
        The decision threshold used.
    group_means : dict
        ``{group: mean P(positive)}``.
    term_scores : dict
        ``{term: mean P(positive) over the templates}``.
    n_templates : int
        Counterfactual templates (template, filler) scored.
    n_terms : dict
        ``{group: terms scored}``.
    missing : dict
        Terms, fillers and template sentences left out.
    probe : dict
        The probe's parameters and training counts.
    """

    family: str
    statistics: dict
    accuracy: float
    template_accuracy: float | None
    template_auc: float | None
    threshold: float
    group_means: dict
    term_scores: dict
    n_templates: int
    n_terms: dict
    missing: dict
    probe: dict = field(default_factory=dict)
    lowercased: dict = field(default_factory=dict)

    value_field = "cf_pcm"

    @property
    def cf_pcm(self) -> float:
        return self.statistics["cf_pcm"]

    @property
    def n_scored(self) -> int:
        """Sentences scored."""
        return self.n_templates * sum(self.n_terms.values())


def fit_probe(embedding, template_set: TemplateSet, **probe_params):
    """A :class:`~embdebias.metrics.extrinsic.probe.SentimentProbe` fitted on ``embedding``,
    never trained on a token of ``template_set``."""
    from .probe import SentimentProbe

    return SentimentProbe(**probe_params).fit(as_emb(embedding), exclude=template_set.tokens())


def extrinsic_bias(embedding, family: str = "emotion", *, templates=None, probe=None,
                   max_missing: float = DEFAULT_MAX_MISSING, threshold="median",
                   random_state: int | None = 0, lowercase: bool = True) -> ExtrinsicResult:
    """Extrinsic bias of ``family`` on ``embedding`` (see the module docstring).

    Parameters
    ----------
    embedding : Embedding or gensim KeyedVectors
    family : str, default "emotion"
        A family of the template set ("emotion" or "occupation" in the bundled one).
    templates : TemplateSet or path, optional
        Default: the bundled ``extrinsic_templates.json``.
    probe : SentimentProbe, optional
        A probe fitted on ``embedding``; default a new one (seeded by ``random_state``).
    max_missing : float, default 0.2
        Largest fraction of a group's identity terms that may be out of vocabulary.
    threshold : float or "median", default "median"
        Predicted positive means ``P(positive) >= threshold`` (FPED, FNED, TPR gap and the
        template accuracy). The neutral words of a template pull every sentence's pooled
        vector the same way, so a fixed 0.5 calls nearly every sentence positive (on GloVe
        6B 50d the sentences' mean score is 0.75 and 0.5 gives a template accuracy of
        0.53 although the sentences' AUC is 0.91). ``"median"`` puts the threshold at the
        median score of the family's sentences, splitting them in half as the gold labels
        do when they are balanced (as in the bundled emotion family); it uses no gold label
        and is fixed before any bootstrap.
    random_state : int or None, default 0
    lowercase : bool, default True
    """


    template_set = templates if isinstance(templates, TemplateSet) else load_templates(templates)
    if probe is None:
        probe = fit_probe(embedding, template_set, random_state=random_state, lowercase=lowercase)
    fs = score_family(probe, template_set, family, max_missing=max_missing)
    return extrinsic_result(fs, probe, threshold)


def _template_quality(fs: FamilyScores, threshold: float) -> tuple[float | None, float | None]:
    """``(accuracy, AUC)`` of the sentences against their gold labels (None without labels)."""
    from ...fairness.scoring import roc_auc

    if fs.labels is None:
        return None, None
    gold = np.broadcast_to(fs.labels[:, None].astype(bool), fs.scores.shape)
    accuracy = float(np.mean((fs.scores >= threshold) == gold))
    return accuracy, float(roc_auc(fs.scores[gold], fs.scores[~gold]))


def extrinsic_result(fs: FamilyScores, probe, threshold="median") -> ExtrinsicResult:
    """The :class:`ExtrinsicResult` of scored sentences (``threshold``: see :func:`extrinsic_bias`)."""
    threshold = resolve_threshold(fs, threshold)
    stats = library_statistics(fs, threshold)
    template_accuracy, template_auc = _template_quality(fs, threshold)
    terms = [t for ts in fs.terms.values() for t in ts]
    cols = fs.column_groups
    return ExtrinsicResult(
        family=fs.family, statistics=stats, accuracy=probe.accuracy_, template_accuracy=template_accuracy,
        template_auc=template_auc, threshold=threshold,
        group_means={g: float(fs.scores[:, cols == i].mean()) for i, g in enumerate(fs.group_names)},
        term_scores=dict(zip(terms, fs.scores.mean(axis=0).tolist())), n_templates=len(fs.units),
        n_terms={g: len(ts) for g, ts in fs.terms.items()}, missing=fs.missing,
        probe={**probe.get_params(), "n_train": probe.n_train_, "n_test": probe.n_test_,
               "n_positive": probe.n_positive_, "n_negative": probe.n_negative_,
               "lexicon_missing": probe.lexicon_missing_})


# -- the metric as evaluate runs it ------------------------------------------------------------------


@register
class Extrinsic(Metric):
    name, title = "extrinsic", "Extrinsic bias"
    headline = (("*", "score_gap", "0"),)
    # gaps of a few thousandths: a quarter of the original gap to count as fairer
    min_share = 0.25
    function = "extrinsic_bias"
    kind = "extrinsic"
    legend = ("Bias of a model built on the embedding, with Czarnowska et al. (2021)'s generalized metrics. "
              "A sentiment probe (logistic regression on the mean of a sentence's unit word vectors, "
              "trained on VADER lexicon words, never on a template word) scores sentences that differ "
              "only in a female or male identity term; the rows compare its P(positive). "
              "Between the genders: the score gap (female minus male; positive: female terms read as "
              "more positive) and the counterfactual PCM, the mean |female - male| over every "
              "template and pair of counterpart terms (my mother / my father, Mary / John). The group PCM, "
              "BCM and MCM of two groups are |gap|, |gap|/2 and |gap| exactly, so they have no interval "
              "of their own. Over terms (each term its own group): the counterfactual BCM and MCM (range, std) say how "
              "much the identity term moves the score at all, within a gender as well as across. "
              "FPED, FNED and TPR gap (emotion only) take the emotion word's polarity as gold label "
              "and call a sentence positive at or above the family's median score. 0 is fairer for "
              "every bias row. The probe's held-out accuracy and the template accuracy and AUC say "
              "how far to trust it. Intervals: bootstrap over templates and terms; an absolute "
              "value near 0 can have an interval above it (a resample's |difference| is rarely "
              "smaller), so the signed gap's interval says whether 0 is plausible.")
    statistics = {**{s.key: s.label for s in STATISTICS}, "accuracy": "probe accuracy (held-out lexicon words)",
                  "template_accuracy": "template accuracy", "template_auc": "template AUC",
                  "threshold": "decision threshold", N_SCORED: "sentences scored"}
    options = {"templates": Option(None, "counterfactual templates: a file or a TemplateSet "
                                         "(default: the bundled extrinsic_templates.json)")}

    def params(self, opts):
        t = opts["templates"]
        return {"templates": "bundled" if t is None else str(getattr(t, "path", t))}

    @staticmethod
    def template_set(ctx) -> TemplateSet:
        """The extrinsic templates (the bundled ones unless the ``templates`` option names a file)."""
        if "extrinsic_templates" not in ctx.cache:
            t = ctx.opts("extrinsic")["templates"]
            ctx.cache["extrinsic_templates"] = t if isinstance(t, TemplateSet) else load_templates(t)
        return ctx.cache["extrinsic_templates"]

    def probe(self, emb, ctx):
        """The sentiment probe fitted on ``emb`` (once per embedding in the evaluation)."""
        probes = ctx.cache.setdefault("extrinsic_probes", {})
        if id(emb) not in probes:
            probes[id(emb)] = (emb, fit_probe(emb, self.template_set(ctx), random_state=ctx.random_state,
                                              lowercase=ctx.lowercase))
        return probes[id(emb)][1]

    def units(self, ctx):
        return list(self.template_set(ctx).families)

    def data(self, ctx):
        ts = self.template_set(ctx)
        groups = ", ".join(f"{len(v)} {g}" for g, v in ts.groups.items())
        fams = "; ".join(f"{f.name}: {len(f.templates)} templates x {len(f.units) // max(len(f.templates), 1)} "
                         f"fillers on average ({len(f.units)} counterfactual templates)"
                         for f in ts.families.values())
        given = ctx.opts(self.name)["templates"]
        if hasattr(given, "families"):
            where = "a template set given in Python"
        else:
            info = wordlists.describe(given or "extrinsic_templates", ctx.lists)
            where = f"`{info['path']}` ({info['source']})"
        return (f"templates: {where}; identity terms: {groups}; {fams}. Probe: trained on VADER "
                f"(Hutto & Gilbert 2014) words with |valence| >= 1, minus every template word")

    def score(self, emb, unit, ctx):
        from .._resample import Sample

        probe = self.probe(emb, ctx)
        fs = score_family(probe, self.template_set(ctx), unit, max_missing=ctx.max_missing)
        r = extrinsic_result(fs, probe)
        cells = {**r.statistics, "accuracy": r.accuracy, "template_accuracy": r.template_accuracy,
                 "template_auc": r.template_auc, "threshold": r.threshold, N_SCORED: r.n_scored}
        fairer = {s.key: s.fairer for s in STATISTICS}
        samples = {(unit, key): Sample(sample_items(fs, key), grid_statistic(fs, key, r.threshold), fairer[key])
                   for key in grid_keys(fs)}
        return r, {unit: {k: v for k, v in cells.items() if v is not None}}, samples

    def evidence(self, report, embedding):
        """Significant when a family's signed score gap has an interval that excludes 0."""
        gaps = [report.cell(m, t, s, embedding) for (m, t, s) in report.rows if m == self.name and s == "score_gap"]
        gaps = [c for c in gaps if c is not None and c.interval]
        if not gaps:
            return None
        hits = sum(1 for c in gaps if c.ci_low > 0 or c.ci_high < 0)
        return {"significant": bool(hits), "text": f"score gap beyond the noise in {hits} of {len(gaps)} "
                                                   f"template families"}

    def notes(self, report, place="table"):
        """Whether the intrinsic and extrinsic verdicts agree, saying first whether the reference had a
        measurable extrinsic gender gap (the signed score gaps' intervals); under the table and in
        the verdict."""
        from ..agreement import agreement_text

        ref = report.embeddings[0] if report.embeddings else ""
        gaps = [(t, cell.ci_low, cell.ci_high) for (m, t, s) in report.rows
                if m == self.name and s == "score_gap" and (cell := report.cell(m, t, s, ref)) is not None]
        note = ""
        if gaps and all(lo is not None and hi is not None and lo <= 0 <= hi for _, lo, hi in gaps):
            note = (f"'{ref}' has no female - male score gap beyond the noise in any template family "
                    f"({', '.join(f'{t} [{lo:.3g}, {hi:.3g}]' for t, lo, hi in gaps)}), so there was "
                    f"little extrinsic gender bias for debiasing to remove.")
        text = agreement_text(report.agreement(), note)
        if not text:
            return []
        return [f"- {text}"] if place == "verdict" else [text + "\n"]
