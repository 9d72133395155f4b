r"""Named fairness metrics from the literature as parametrizations of PCM/BCM/VBCM/MCM.

Czarnowska, Vyas & Shah (2021, Table 2) express published extrinsic fairness metrics
as choices of the generalized metric, the scoring function :math:`\varphi`, the
comparison function :math:`d`, the normalizer :math:`N` and, for BCM, the background
:math:`\beta`.  Each :class:`MetricSpec` below records that choice and who introduced
the metric; :func:`fairness_metric` computes one by name.

Reading of the table (its text extraction breaks the formulas, so each row was checked
against the paper's prose) and deliberate choices:

* **Normalizers.**  FPED and FNED are published with :math:`N = 1` and Disparity Score
  with :math:`N = |T|` over pairs; Section 6 calls both wrong and recomputes them with
  :math:`N = |T|` (BCM) and :math:`N = \binom{|T|}{2}` (PCM).  Both versions are here:
  ``fped`` (as published) and ``fped_normalized`` (the paper's correction), and so on.
* **Two-group metrics.**  Rows 11-16 and 22 use a non-commutative :math:`d`
  (:math:`x-y`, :math:`x/y`) and were defined for two groups only ("gray circles");
  they refuse other numbers of groups.  The first group of ``group_order`` (sorted by
  default) is :math:`x`.
* **F1 Ratio** (Webster et al. 2018): Table 2 prints Recall as its :math:`\varphi`,
  but the metric's name and Webster et al.'s GAP bias (the ratio of the feminine and
  masculine F1 scores) use F1, so :math:`\varphi` = F1 here.
* **Parity Gap** (Beutel et al. 2017): implemented with the :math:`\varphi` Table 2
  prints, :math:`|\{x \in A: \hat y(x) = y(x)\}| / |A|` (accuracy).  For demographic
  parity (equal positive rates) use ``pcm(phi="positive_rate")``.
* **LAS Difference** (row 14) needs dependency parses, not scores, and is left out.
* **Counterfactual metrics** use one score per example, :math:`\varphi = f(x, 1)` with
  :math:`A = \{x\}`.  With several variations of a group in a template we average
  them (the ``mean`` scoring function) instead of sampling the Cartesian product of
  variations as the paper's experiments do (Sec. 5); the two agree when each group
  has one variation per template.
* **Target-class probability.**  Table 2 gives the Perturbation Score metrics
  :math:`\varphi = f(x, y(x))`, the probability of the gold class.  The variations of
  a template share their gold label, so for a binary model :math:`f(x, y(x))` is
  either :math:`f(x,1)` or :math:`1 - f(x,1)` for the whole template, and
  :math:`|x-y|`, the standard deviation and the range are unchanged by that flip.  We
  therefore use the scores as given and need no labels.
* **Source background.**  Counterfactual Token Fairness Gap and Perturbation Score
  Sensitivity compare each counterfactual with the unperturbed source example
  (:math:`\beta = \{x_j\}`).  Pass the source examples as a group of their own and
  name it, ``background=background(group="original")``.  Template data have no source
  sentence; for them the paper (Sec. 5) turns these two metrics into PCMs, which are
  here as ``cf_gap_pcm`` and ``pert_ss_pcm``.
* **Perturbation Score Sensitivity** is a VBCM (one value per group, as Prabhakaran et
  al. report one per name); Table 2 also lists :math:`N = |T|`, which only applies
  once the per-group values are averaged, i.e. to the BCM.
* **Average Equality Gaps** (Borkan et al. 2019): :math:`d(X, Y) = \frac12 -
  \mathrm{MWU}(X,Y)/(|X||Y|)` with :math:`X` the background and :math:`Y` the group,
  so a negative gap means the group's scores are lower than the background's (the
  sign reading of Czarnowska et al., Sec. 6).
* **BPSN / BNSP AUC** (Borkan et al. 2019) are VBCMs with a separate background
  scoring function (the paper's footnote 5): BPSN is the AUC of the background's
  gold positives against the group's gold negatives, BNSP of the group's gold
  positives against the background's gold negatives; the background is the other
  groups.
* **True class.**  ``true_class=c`` computes the "(TC)" variants of Section 5 for the
  probability-based metrics Average Group Fairness, Counterfactual Token Fairness Gap
  and Average Individual Fairness: only examples with gold label ``c`` are used, with
  the probability of class ``c`` (``1 - score`` for ``c = 0``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import FairnessInputError
from ._data import prepare
from .background import Background, background as resolve_background
from .generalized import bcm, mcm, pcm, vbcm
from .result import FairnessResult, VectorResult
from .scoring import phi as resolve_phi

#: Background of the counterfactual metrics that compare with the unperturbed example.
SOURCE = "source"


@dataclass(frozen=True)
class MetricSpec:
    r"""A published fairness metric as a parametrization of a generalized metric.

    Attributes
    ----------
    name : str
        Registry key (lower case).
    title : str
        The metric's name in the literature.
    generalized : {"PCM", "BCM", "VBCM", "MCM"}
    form : {"group", "counterfactual"}
    phi, d : str
        Scoring and comparison function names.
    normalizer : {"pairs", "groups", "one"} or None
        N (None for VBCM and MCM).
    background : {"all", "rest", "source"} or None
        The paper's :math:`\beta` for BCM/VBCM; ``"source"`` is the unperturbed example
        :math:`\{x_j\}`, which the caller names with ``background=``.
    phi_background : str or None
        A separate scoring function for the background (BPSN/BNSP).
    reference : str
        Who introduced the metric.
    table_row : int or None
        Row of Czarnowska et al.'s Table 2 (None: not a row of the table).
    two_groups : bool
        Defined for exactly two groups (non-commutative d).
    true_class : bool
        Whether the "(TC)" variant (``true_class=``) applies.
    aliases : tuple of str
        Other accepted names.
    note : str
        How the entry departs from or reads the table.
    """

    name: str
    title: str
    generalized: str
    form: str
    phi: str
    d: str
    normalizer: str | None
    background: str | None
    reference: str
    table_row: int | None = None
    phi_background: str | None = None
    two_groups: bool = False
    true_class: bool = False
    aliases: tuple = ()
    note: str = ""

    @property
    def needs_labels(self) -> bool:
        """Whether its scoring functions need gold labels."""
        names = [self.phi] + ([self.phi_background] if self.phi_background else [])
        return any(resolve_phi(n).needs_labels for n in names)

    def describe(self) -> str:
        """One line: title, (phi, d, N, beta) and reference."""
        parts = [f"phi={self.phi}", f"d={self.d}", f"N={self.normalizer or '-'}",
                 f"beta={self.background or '-'}"]
        if self.phi_background:
            parts.append(f"phi_beta={self.phi_background}")
        return (f"{self.title}: {self.form} {self.generalized} ({', '.join(parts)}); "
                f"{self.reference}")


def _spec(*args, **kwargs) -> MetricSpec:
    return MetricSpec(*args, **kwargs)


_DIXON = "Dixon et al. (2018)"
_HUANG = "Huang et al. (2020a)"
_BORKAN = "Borkan et al. (2019)"
_PRAB = "Prabhakaran et al. (2019)"

_SPECS = (
    # -- group metrics ---------------------------------------------------------------------
    _spec("fped", "False Positive Equality Difference", "BCM", "group", "fpr", "absolute_difference",
          "one", "all", _DIXON, 1, aliases=("false_positive_equality_difference",),
          note="published without normalization (N = 1)"),
    _spec("fped_normalized", "False Positive Equality Difference (normalized)", "BCM", "group", "fpr",
          "absolute_difference", "groups", "all", _DIXON + "; N = |T| per Czarnowska et al. (2021)", 1,
          note="the correctly normalized FPED* of Czarnowska et al., Sec. 6"),
    _spec("fned", "False Negative Equality Difference", "BCM", "group", "fnr", "absolute_difference",
          "one", "all", _DIXON, 2, aliases=("false_negative_equality_difference",),
          note="published without normalization (N = 1)"),
    _spec("fned_normalized", "False Negative Equality Difference (normalized)", "BCM", "group", "fnr",
          "absolute_difference", "groups", "all", _DIXON + "; N = |T| per Czarnowska et al. (2021)", 2,
          note="the correctly normalized FNED* of Czarnowska et al., Sec. 6"),
    _spec("avg_group_fairness", "Average Group Fairness", "BCM", "group", "scores", "wasserstein",
          "groups", "all", _HUANG, 3, true_class=True, aliases=("avggf", "average_group_fairness")),
    _spec("fpr_ratio", "FPR Ratio", "VBCM", "group", "fpr", "inverse_ratio", None, "rest",
          "Beutel et al. (2019)", 4, note="group FPR divided by the other groups' FPR"),
    _spec("pos_avg_eg", "Positive Average Equality Gap", "VBCM", "group", "positive_scores",
          "average_equality_gap", None, "rest", _BORKAN, 5,
          aliases=("posavgeg", "positive_average_equality_gap")),
    _spec("neg_avg_eg", "Negative Average Equality Gap", "VBCM", "group", "negative_scores",
          "average_equality_gap", None, "rest", _BORKAN, 6,
          aliases=("negavgeg", "negative_average_equality_gap")),
    _spec("disparity_score", "Disparity Score", "PCM", "group", "f1", "absolute_difference", "groups",
          None, "Gaut et al. (2020)", 7, note="published with N = |T| although it sums over pairs"),
    _spec("disparity_score_normalized", "Disparity Score (normalized)", "PCM", "group", "f1",
          "absolute_difference", "pairs", None, "Gaut et al. (2020); N = C(|T|, 2) per Czarnowska et al. (2021)",
          7, note="the correctly normalized Disparity Score* of Czarnowska et al., Sec. 6"),
    _spec("tpr_gap", "TPR Gap", "PCM", "group", "tpr", "absolute_difference", "pairs", None,
          "Beutel et al. (2017); Prost et al. (2019)", 8),
    _spec("tnr_gap", "TNR Gap", "PCM", "group", "tnr", "absolute_difference", "pairs", None,
          "Prost et al. (2019)", 9),
    _spec("parity_gap", "Parity Gap", "PCM", "group", "accuracy", "absolute_difference", "pairs", None,
          "Beutel et al. (2017)", 10, note="phi as printed in Table 2: |{x: y_hat(x) = y(x)}| / |A|"),
    _spec("accuracy_difference", "Accuracy Difference", "PCM", "group", "accuracy", "difference", "one",
          None, "Blodgett & O'Connor (2017); Bhaskaran & Bhallamudi (2019)", 11, two_groups=True),
    _spec("tpr_difference", "TPR Difference", "PCM", "group", "tpr", "difference", "one", None,
          "De-Arteaga et al. (2019)", 12, two_groups=True,
          note="De-Arteaga et al.'s TPR gap, TPR of the first group minus the second's"),
    _spec("f1_difference", "F1 Difference", "PCM", "group", "f1", "difference", "one", None,
          "Stanovsky et al. (2019); Saunders & Byrne (2020)", 13, two_groups=True),
    _spec("recall_difference", "Recall Difference", "PCM", "group", "recall", "difference", "one", None,
          "Bamman et al. (2019)", 15, two_groups=True),
    _spec("f1_ratio", "F1 Ratio", "PCM", "group", "f1", "ratio", "one", None, "Webster et al. (2018)", 16,
          two_groups=True, note="Table 2 prints Recall as phi; the metric (GAP's bias) is an F1 ratio"),
    _spec("bpsn_auc", "Background Positive Subgroup Negative AUC", "VBCM", "group", "negative_scores",
          "auc_x_positive", None, "rest", _BORKAN, phi_background="positive_scores", aliases=("bpsn",),
          note="VBCM with a separate background phi (Czarnowska et al., footnote 5)"),
    _spec("bnsp_auc", "Background Negative Subgroup Positive AUC", "VBCM", "group", "positive_scores",
          "auc_y_positive", None, "rest", _BORKAN, phi_background="negative_scores", aliases=("bnsp",),
          note="VBCM with a separate background phi (Czarnowska et al., footnote 5)"),
    # -- counterfactual metrics ------------------------------------------------------------
    _spec("cf_gap", "Counterfactual Token Fairness Gap", "BCM", "counterfactual", "mean",
          "absolute_difference", "groups", SOURCE, "Garg et al. (2019)", 17, true_class=True,
          aliases=("cfgap", "counterfactual_token_fairness_gap")),
    _spec("cf_gap_pcm", "Counterfactual Token Fairness Gap (PCM)", "PCM", "counterfactual", "mean",
          "absolute_difference", "pairs", None, "Garg et al. (2019); as a PCM per Czarnowska et al. (2021)",
          17, true_class=True, note="the PCM version the paper uses for template data (Sec. 5)"),
    _spec("pert_ss", "Perturbation Score Sensitivity", "VBCM", "counterfactual", "mean",
          "absolute_difference", None, SOURCE, _PRAB, 18,
          aliases=("pertss", "perturbation_score_sensitivity")),
    _spec("pert_ss_pcm", "Perturbation Score Sensitivity (PCM)", "PCM", "counterfactual", "mean",
          "absolute_difference", "pairs", None, _PRAB + "; as a PCM per Czarnowska et al. (2021)", 18,
          note="the PCM version the paper uses for template data (Sec. 5)"),
    _spec("pert_sd", "Perturbation Score Deviation", "MCM", "counterfactual", "mean", "std", None, None,
          _PRAB, 19, aliases=("pertsd", "perturbation_score_deviation")),
    _spec("pert_sr", "Perturbation Score Range", "MCM", "counterfactual", "mean", "range", None, None,
          _PRAB, 20, aliases=("pertsr", "perturbation_score_range")),
    _spec("avg_individual_fairness", "Average Individual Fairness", "PCM", "counterfactual", "scores",
          "wasserstein", "pairs", None, _HUANG, 21, true_class=True,
          aliases=("avgif", "average_individual_fairness")),
    _spec("average_score_difference", "Average Score Difference", "PCM", "counterfactual", "mean",
          "difference", "pairs", None, "Kiritchenko & Mohammad (2018); Popović et al. (2020)", 22,
          two_groups=True),
)

METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}
_LOOKUP = {**{a: s.name for s in _SPECS for a in s.aliases}, **{s.name: s.name for s in _SPECS}}


def _key(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def available_metrics() -> list[str]:
    """Registry names of the named metrics, sorted (aliases are accepted too)."""
    return sorted(METRICS)


def get_metric(name: str) -> MetricSpec:
    """The :class:`MetricSpec` of a registry metric (case-insensitive, aliases accepted).

    Raises
    ------
    FairnessInputError
        An unknown name; the message lists the known ones.
    """
    if not isinstance(name, str) or _key(name) not in _LOOKUP:
        raise FairnessInputError(f"unknown fairness metric {name!r}; known: {', '.join(available_metrics())}")
    return METRICS[_LOOKUP[_key(name)]]


def _resolve_spec_background(spec: MetricSpec, override) -> Background | None:
    if spec.generalized not in ("BCM", "VBCM"):
        if override is not None:
            raise FairnessInputError(f"{spec.name} is a {spec.generalized}; it has no background")
        return None
    if override is not None:
        return resolve_background(override)
    if spec.background == SOURCE:
        raise FairnessInputError(
            f"{spec.name} compares every counterfactual with the unperturbed source example of its "
            "template: give those examples their own group label and pass "
            "background=embdebias.fairness.background(group=<that label>); for template data "
            f"without a source sentence use {spec.name}_pcm (the paper's PCM version)")
    return resolve_background(spec.background)


def _check_inputs(spec: MetricSpec, templates, labels, true_class) -> None:
    if spec.form == "counterfactual" and templates is None:
        raise FairnessInputError(
            f"{spec.name} is a counterfactual metric: pass templates= (the template or source "
            "example each example was made from)")
    if (spec.needs_labels or true_class is not None) and labels is None:
        what = "true_class" if true_class is not None and not spec.needs_labels else spec.name
        raise FairnessInputError(f"{what} needs gold labels: pass labels=")
    if true_class is not None and not spec.true_class:
        with_tc = ", ".join(s.name for s in _SPECS if s.true_class)
        raise FairnessInputError(f"true_class applies only to {with_tc}, not {spec.name}")
    if true_class is not None and true_class not in (0, 1):
        raise FairnessInputError(f"true_class must be 0 or 1, got {true_class!r}")


def _restrict_to_class(scores, groups, templates, labels, group_order, true_class):
    """The examples with gold label ``true_class``, scored by the probability of that class."""
    data = prepare(scores, groups, templates=templates, labels=labels, group_order=group_order)
    keep = data.labels == true_class
    sub = data.subset(keep)
    class_scores = sub.scores if true_class == 1 else 1.0 - sub.scores
    names = np.asarray(data.group_names, dtype=object)
    t_names = None if templates is None else np.asarray(data.template_names, dtype=object)[sub.template_codes]
    return class_scores, names[sub.group_codes], t_names, sub.labels, data.group_names


def fairness_metric(name: str, scores, groups, *, templates=None, labels=None, background=None,
                    group_order=None, threshold: float = 0.5,
                    true_class: int | None = None) -> FairnessResult | VectorResult:
    """Compute a named fairness metric from the literature.

    Parameters
    ----------
    name : str
        A registry name or alias, case-insensitive (see :func:`available_metrics` and
        :data:`METRICS`).
    scores : array-like of float, shape (n,)
        One score per example: the probability of the positive class (class 1) for
        the probability-based metrics, or that probability or a 0/1 prediction for the
        prediction-based ones (predicted positive means ``score >= threshold``).
    groups : array-like, shape (n,)
        The protected group of each example.
    templates : array-like, shape (n,), optional
        Counterfactual template of each example; required by the counterfactual
        metrics.  Group metrics ignore it: they compare whole groups, which is how the
        paper evaluates them on template data too.
    labels : array-like of {0, 1}, shape (n,), optional
        Gold labels; required by the metrics whose phi uses them.
    background : "all", "rest" or Background, optional
        Replace the metric's background (BCM/VBCM only).  Required for ``cf_gap`` and
        ``pert_ss``: ``background(group=<label of the unperturbed source examples>)``.
    group_order : sequence, optional
        Order of the groups (default sorted); for the two-group metrics the first group
        is ``x`` in ``x - y`` and ``x / y``.
    threshold : float, default 0.5
        Predicted positive means ``score >= threshold``.
    true_class : {0, 1}, optional
        Compute the "(TC)" variant (Sec. 5 of Czarnowska et al.) of ``avg_group_fairness``,
        ``cf_gap``, ``cf_gap_pcm`` or ``avg_individual_fairness``: only examples with this
        gold label, scored by the probability of this class.

    Returns
    -------
    FairnessResult or VectorResult
        A :class:`FairnessResult` for PCM, BCM and MCM metrics and a
        :class:`VectorResult` (``{group: value}``) for VBCM metrics; ``metric`` is the
        registry name.

    Raises
    ------
    FairnessInputError
        Unknown name, missing templates or labels, a two-group metric with another
        number of groups, or bad inputs.
    """
    spec = get_metric(name)
    _check_inputs(spec, templates, labels, true_class)
    bg = _resolve_spec_background(spec, background)
    if spec.form == "group":
        templates = None
    if true_class is not None:
        scores, groups, templates, labels, group_order = _restrict_to_class(
            scores, groups, templates, labels, group_order, true_class)
    common = dict(templates=templates, labels=labels, group_order=group_order, threshold=threshold)
    if spec.two_groups:
        _check_two_groups(spec, scores, groups, common)
    return _compute(spec, scores, groups, bg, common)


def _check_two_groups(spec: MetricSpec, scores, groups, common) -> None:
    data = prepare(scores, groups, templates=common["templates"], labels=common["labels"],
                   group_order=common["group_order"])
    if data.n_groups != 2:
        raise FairnessInputError(
            f"{spec.name} is defined for exactly two groups (its d is not commutative), "
            f"but the data have {data.n_groups:,}: {list(data.group_names[:10])}"
            + (" ..." if data.n_groups > 10 else ""))


def _compute(spec: MetricSpec, scores, groups, bg, common):
    if spec.generalized == "PCM":
        result = pcm(scores, groups, phi=spec.phi, d=spec.d, normalizer=spec.normalizer, **common)
    elif spec.generalized == "BCM":
        result = bcm(scores, groups, phi=spec.phi, d=spec.d, normalizer=spec.normalizer, background=bg,
                     phi_background=spec.phi_background, **common)
    elif spec.generalized == "VBCM":
        result = vbcm(scores, groups, phi=spec.phi, d=spec.d, background=bg,
                      phi_background=spec.phi_background, **common)
    else:
        result = mcm(scores, groups, phi=spec.phi, d=spec.d, **common)
    return replace(result, metric=spec.name)
