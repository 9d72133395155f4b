r"""Extrinsic bias: Czarnowska et al.'s generalized metrics over a downstream probe.

Intrinsic scores such as WEAT do not predict how biased a model built on the embedding
is (Goldfarb-Tarrant et al. 2021; Delobelle et al. 2022). This module measures the bias
of such a model: the :class:`~embdebias.fairness.probe.SentimentProbe` (logistic
regression on mean-pooled unit vectors, trained on the VADER lexicon) scores
counterfactual sentences (:mod:`embdebias.fairness.templates`) that differ only in an
identity term, and the generalized fairness metrics of Czarnowska, Vyas & Shah (2021)
compare its scores :math:`P(\text{positive})` across the groups of terms.

Statistics of one template family (:data:`STATISTICS`), each a call of
:mod:`embdebias.fairness`:

* group form (whole groups compared, Eq. 1, 3, 5): ``group_pcm`` (PCM, mean score,
  :math:`|x-y|`), ``group_bcm`` (BCM against all examples), ``group_mcm`` (MCM, range);
* counterfactual form (within each template, averaged over templates, Eq. 2, 4, 6):
  ``cf_pcm`` (Counterfactual Token Fairness Gap as a PCM), ``cf_bcm`` (BCM against all
  variations of the template), ``cf_mcm`` (Perturbation Score Range);
* ``score_gap``: Average Score Difference, first group minus second (signed: which
  group the probe scores as more positive);
* with gold labels (the emotion family): ``fped`` and ``fned`` (FPED/FNED, normalized by
  the number of groups as Czarnowska et al. Sec. 6 recommend) and ``tpr_gap``.

**Uncertainty.** Every statistic has a bootstrap interval over templates *and* terms:
each resample draws counterfactual templates (template, filler) and, independently,
the terms of each group, with replacement. The scores form a full (template x term)
grid, so each statistic is a ratio of weighted sums over that grid; the resampled
statistics are computed from resample counts as matrix products (:func:`grid_statistic`),
a thousand resamples in milliseconds. On the full sample they equal the library's values
(tested), which are the ones reported.

**Missing words.** A term, filler or template sentence is scored only when all its
tokens are in the vocabulary (otherwise it would silently mean something else: "my
niece" without "niece" is "my"); the rest are listed in ``missing``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np

from ..errors import EmbdebiasError, MissingWordsError
from ..fairness import bcm, fairness_metric, mcm, pcm
from ..fairness.templates import _SLOT, TemplateFamily, TemplateSet
from ._common import DEFAULT_MAX_MISSING, MetricResult, as_emb, check_max_missing


@dataclass(frozen=True)
class ExtrinsicStatistic:
    """One extrinsic statistic: its label, its library call and how to read it."""

    key: str
    label: str
    call: str
    fairer: str = "lower"
    needs_labels: bool = False


#: The statistics of a family, in report order.
STATISTICS = (
    ExtrinsicStatistic("cf_pcm", "counterfactual PCM (CF token fairness gap)", "fairness_metric('cf_gap_pcm')"),
    ExtrinsicStatistic("cf_bcm", "counterfactual BCM", "bcm(phi='mean', templates=...)"),
    ExtrinsicStatistic("cf_mcm", "counterfactual MCM (perturbation score range)", "fairness_metric('pert_sr')"),
    ExtrinsicStatistic("group_pcm", "group PCM (mean score)", "pcm(phi='mean')"),
    ExtrinsicStatistic("group_bcm", "group BCM (mean score vs all)", "bcm(phi='mean')"),
    ExtrinsicStatistic("group_mcm", "group MCM (range of means)", "mcm(phi='mean', d='range')"),
    ExtrinsicStatistic("score_gap", "average score difference (first - second group)",
                       "fairness_metric('average_score_difference')", fairer="zero"),
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
    """

    family: str
    units: list
    terms: dict
    scores: np.ndarray
    labels: np.ndarray | None
    missing: dict

    @property
    def group_names(self) -> list[str]:
        return list(self.terms)

    @property
    def column_groups(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.terms)), [len(v) for v in self.terms.values()])

    def take(self, rows, terms: dict) -> "FamilyScores":
        """The scores of some templates and, per group, some terms (by position, repeats allowed).

        A repeated template or term becomes a distinct one (keys suffixed ``#k``), so the
        result is one bootstrap resample as a data set of its own.
        """
        rows = np.asarray(rows, dtype=np.int64)
        picked = {g: np.asarray(terms[g], dtype=np.int64) for g in self.group_names}
        cols = np.concatenate([np.flatnonzero(self.column_groups == i)[picked[g]]
                               for i, g in enumerate(self.group_names)])
        units = [replace(self.units[i], key=f"{self.units[i].key}#{k}") for k, i in enumerate(rows)]
        names = {g: [f"{self.terms[g][j]}#{k}" for k, j in enumerate(p)] for g, p in picked.items()}
        labels = None if self.labels is None else self.labels[rows]
        return FamilyScores(self.family, units, names, self.scores[np.ix_(rows, cols)], labels, self.missing)

    def to_long(self) -> dict:
        """One entry per sentence: ``{"example", "group", "term", "template", "score", "label"}``.

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
        return out


def _pieces(probe, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(logit sums, token counts, complete)`` of texts; complete: every token in the vocabulary."""
    from ..fairness.templates import tokenize

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
    labels = np.array([u.label for u in units], dtype=np.int64) if fam.labelled else None
    kept = {g: [t for t in ts if t not in lost] for g, ts in template_set.groups.items()}
    return FamilyScores(fam.name, units, kept, scores, labels, missing)


# -- the statistics on the full sample (the library) and on resamples (the grid) ---------------


def library_statistics(fs: FamilyScores, threshold: float = 0.5) -> dict:
    """``{statistic key: value}`` of one family, computed by :mod:`embdebias.fairness`."""
    long = fs.to_long()
    s, g, t, order = long["score"], long["group"], long["template"], fs.group_names
    labels = long.get("label")
    common = dict(group_order=order, threshold=threshold)
    out = {"cf_pcm": fairness_metric("cf_gap_pcm", s, g, templates=t, **common).value,
           "cf_bcm": bcm(s, g, phi="mean", templates=t, **common).value,
           "cf_mcm": fairness_metric("pert_sr", s, g, templates=t, **common).value,
           "group_pcm": pcm(s, g, phi="mean", **common).value,
           "group_bcm": bcm(s, g, phi="mean", **common).value,
           "group_mcm": mcm(s, g, phi="mean", d="range", **common).value}
    if len(order) == 2:
        out["score_gap"] = fairness_metric("average_score_difference", s, g, templates=t, **common).value
    if labels is not None:
        for key, name in (("fped", "fped_normalized"), ("fned", "fned_normalized"), ("tpr_gap", "tpr_gap")):
            out[key] = fairness_metric(name, s, g, labels=labels, **common).value
    return out


def _counts(idx: np.ndarray, n: int) -> np.ndarray:
    """``(B, n)`` multiplicities of the items drawn in each row of ``idx``."""
    b = idx.shape[0]
    flat = (idx + (np.arange(b) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=b * n).reshape(b, n).astype(np.float64)


def _pairs_mean(values: list) -> np.ndarray:
    return np.mean([np.abs(values[i] - values[k]) for i, k in combinations(range(len(values)), 2)], axis=0)


def _group_form(matrices: list, r: np.ndarray, cs: list) -> tuple[list, list]:
    """Per group, the weighted numerators and denominators of a mean over its grid cells."""
    nums = [((r @ m) * c).sum(axis=1) for m, c in zip(matrices, cs)]
    dens = [r.sum(axis=1) * c.sum(axis=1) for c in cs]
    return nums, dens


def _bcm(nums: list, dens: list) -> np.ndarray:
    background = sum(nums) / sum(dens)
    return np.mean([np.abs(background - n / d) for n, d in zip(nums, dens)], axis=0)


def _counterfactual(matrices: list, r: np.ndarray, cs: list) -> dict:
    sums = [c @ m.T for m, c in zip(matrices, cs)]  # (B, n_units) per group
    means = [s / c.sum(axis=1)[:, None] for s, c in zip(sums, cs)]
    background = sum(sums) / sum(c.sum(axis=1) for c in cs)[:, None]

    def over_templates(x):
        return (r * x).sum(axis=1) / r.sum(axis=1)

    out = {"cf_pcm": over_templates(_pairs_mean(means)),
           "cf_bcm": over_templates(np.mean([np.abs(background - m) for m in means], axis=0)),
           "cf_mcm": over_templates(np.ptp(np.stack(means), axis=0))}
    if len(means) == 2:
        out["score_gap"] = over_templates(means[0] - means[1])
    return out


def _labelled(matrices: list, r: np.ndarray, cs: list, labels: np.ndarray, threshold: float) -> dict:
    predicted = [(m >= threshold).astype(np.float64) for m in matrices]
    tp, p = _group_form(predicted, r * labels, cs)
    fp, n = _group_form(predicted, r * (1 - labels), cs)
    fnr = [1.0 - a / b for a, b in zip(tp, p)]
    all_fnr = 1.0 - sum(tp) / sum(p)
    return {"fped": _bcm(fp, n),
            "fned": np.mean([np.abs(all_fnr - f) for f in fnr], axis=0),
            "tpr_gap": _pairs_mean([a / b for a, b in zip(tp, p)])}


_GROUP_KEYS = ("group_pcm", "group_bcm", "group_mcm")
_LABEL_KEYS = ("fped", "fned", "tpr_gap")


def grid_statistics(fs: FamilyScores, idx: dict, threshold: float = 0.5, keys=None) -> dict:
    """Statistics on ``B`` resamples: ``{key: (B,) array}`` (all, or those in ``keys``).

    ``idx`` holds ``(B, n)`` index arrays: ``"templates"`` into the rows and, per group,
    into that group's terms (the :class:`~embdebias.metrics.uncertainty.Sample` format).
    """
    keys = set(grid_keys(fs) if keys is None else keys)
    cols = fs.column_groups
    matrices = [fs.scores[:, cols == i] for i in range(len(fs.terms))]
    r = _counts(idx["templates"], fs.scores.shape[0])
    cs = [_counts(idx[g], m.shape[1]) for g, m in zip(fs.group_names, matrices)]
    out = {}
    if keys & set(_GROUP_KEYS):
        nums, dens = _group_form(matrices, r, cs)
        means = [a / b for a, b in zip(nums, dens)]
        out.update(group_pcm=_pairs_mean(means), group_bcm=_bcm(nums, dens), group_mcm=np.ptp(np.stack(means), axis=0))
    if keys - set(_GROUP_KEYS) - set(_LABEL_KEYS):
        out.update(_counterfactual(matrices, r, cs))
    if keys & set(_LABEL_KEYS) and fs.labels is not None:
        out.update(_labelled(matrices, r, cs, fs.labels.astype(np.float64)[None, :], threshold))
    return {k: v for k, v in out.items() if k in keys}


def grid_keys(fs: FamilyScores) -> list[str]:
    """The statistics of ``fs``: every one of :data:`STATISTICS` its groups and labels allow."""
    return [s.key for s in STATISTICS if (fs.labels is not None or not s.needs_labels)
            and (s.key != "score_gap" or len(fs.terms) == 2)]


def grid_statistic(fs: FamilyScores, key: str, threshold: float = 0.5):
    """``stat(idx) -> (B,)`` of one statistic, for a :class:`~embdebias.metrics.uncertainty.Sample`."""
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
    """A :class:`~embdebias.fairness.probe.SentimentProbe` fitted on ``embedding``,
    never trained on a token of ``template_set``."""
    from ..fairness.probe import SentimentProbe

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
        median score of the family's sentences, splitting them in half as the balanced
        gold labels do; it uses no gold label and is fixed before any bootstrap.
    random_state : int or None, default 0
    lowercase : bool, default True
    """
    from ..fairness.templates import load_templates

    template_set = templates if isinstance(templates, TemplateSet) else load_templates(templates)
    if probe is None:
        probe = fit_probe(embedding, template_set, random_state=random_state, lowercase=lowercase)
    fs = score_family(probe, template_set, family, max_missing=max_missing)
    return extrinsic_result(fs, probe, threshold)


def _template_quality(fs: FamilyScores, threshold: float) -> tuple[float | None, float | None]:
    """``(accuracy, AUC)`` of the sentences against their gold labels (None without labels)."""
    from ..fairness.scoring import roc_auc

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
