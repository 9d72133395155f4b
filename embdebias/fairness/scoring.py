r"""Scoring functions :math:`\varphi`: the base measurement of a set of examples.

Czarnowska et al. (2021, Sec. 3) parametrize every fairness metric by a scoring function
:math:`\varphi(A)` that maps a set of examples :math:`A` to a score, either a scalar
(a rate, a mean probability) or a set (the probabilities themselves, compared with a
distance between distributions such as Wasserstein-1).

Prediction-based scores (``tpr``, ``fpr``, ``accuracy``, ...) need predicted labels:
an example is predicted positive when its score is at least ``threshold`` (default
0.5), so 0/1 predictions can be passed as scores directly.  Probability-based scores
(``mean``, ``scores``, ``auc``) use the scores as they are.  Gold labels are 0/1
(binary classification, class 1 the positive class).

Most scalar scores are ratios of sums over examples (true positives over positives,
and so on); they are computed for all groups and templates at once from
``numpy.bincount`` sums, and their value for a background (all examples, or all but one
group) follows from the same sums.

========================  =====================================================  ======
name                      :math:`\varphi(A)`                                     labels
========================  =====================================================  ======
``mean``                  mean score, :math:`\mathrm{mean}\{f(x,1)\}`            no
``positive_rate``         fraction predicted positive                            no
``accuracy``              :math:`|\{x: \hat y(x) = y(x)\}| / |A|`                yes
``tpr`` (``recall``)      true positive rate TP / (TP + FN)                      yes
``fnr``                   false negative rate FN / (TP + FN)                     yes
``fpr``                   false positive rate FP / (FP + TN)                     yes
``tnr``                   true negative rate TN / (FP + TN)                      yes
``precision``             TP / (TP + FP)                                         yes
``f1``                    2 TP / (2 TP + FP + FN)                                yes
``auc``                   ROC AUC of the scores against the gold labels          yes
``scores``                the set :math:`\{f(x,1) \mid x \in A\}`                no
``positive_scores``       the set :math:`\{f(x,1) \mid x \in A, y(x) = 1\}`      yes
``negative_scores``       the set :math:`\{f(x,1) \mid x \in A, y(x) = 0\}`      yes
========================  =====================================================  ======

A score that is undefined for a set (a TPR without gold positives, an AUC with one
class) raises :class:`~embdebias.errors.FairnessInputError` naming the group; it is
never silently NaN.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..errors import FairnessInputError


def builtin_by_name(spec, builtin: dict, aliases: dict, kind: str, known):
    """The built-in ``kind`` named ``spec`` (case, ``-`` and spaces ignored; aliases allowed).

    ``known()`` lists the names for the error message of an unknown one.
    """
    if not isinstance(spec, str):
        raise FairnessInputError(f"a {kind} is a name or a callable, got {spec!r}")
    key = spec.strip().lower().replace("-", "_").replace(" ", "_")
    key = aliases.get(key, key)
    if key not in builtin:
        raise FairnessInputError(f"unknown {kind} {spec!r}; known: {', '.join(known())}")
    return builtin[key]


@dataclass(frozen=True)
class ScoringFunction:
    """A scoring function :math:`\\varphi`.

    Call it as ``phi(scores, labels)`` on the examples of one set.

    Attributes
    ----------
    name : str
        Registry name, or the ``__name__`` of a user callable.
    needs_labels : bool
        Whether gold labels are required.
    set_valued : bool or None
        Whether it returns a set of values (an array) rather than a scalar; None for a
        user callable (decided from what it returns).
    threshold : float
        Score at or above which an example counts as predicted positive.
    description : str
        One line for documentation and error messages.
    stats, finish : callable or None
        For scores that are ratios of sums: ``stats(scores, labels, threshold)`` gives
        per-example additive statistics, shape (n, k), and ``finish(sums)`` turns sums
        over a set (shape (..., k)) into the score, NaN where it is undefined.
    func : callable or None
        Otherwise, ``func(scores, labels)`` computes the score of one set.
    undefined : str
        Why the score can be undefined (used in error messages).
    """

    name: str
    needs_labels: bool = False
    set_valued: bool | None = False
    threshold: float = 0.5
    description: str = ""
    stats: Callable | None = None
    finish: Callable | None = None
    func: Callable | None = None
    undefined: str = "it is undefined for this set"

    @property
    def additive(self) -> bool:
        """Whether the score is a ratio of per-example sums (vectorized path)."""
        return self.stats is not None

    def __call__(self, scores, labels=None):
        scores = np.asarray(scores, dtype=np.float64)
        labels = None if labels is None else np.asarray(labels)
        if self.needs_labels and labels is None:
            raise FairnessInputError(f"scoring function {self.name!r} needs gold labels")
        if self.additive:
            value = self.finish(self.stats(scores, labels, self.threshold).sum(axis=0))
            if np.isnan(value):
                raise FairnessInputError(f"{self.name} is undefined: {self.undefined}")
            return float(value)
        return self.func(scores, labels)


# -- additive scores: per-example statistics and how their sums give the score --------
def _ratio(sums: np.ndarray) -> np.ndarray:
    """``sums[..., 0] / sums[..., 1]``, NaN where the denominator is 0."""
    num, den = sums[..., 0], sums[..., 1]
    return np.divide(num, den, out=np.full(np.shape(num), np.nan), where=den != 0)


def _f1(sums: np.ndarray) -> np.ndarray:
    tp, fp, fn = sums[..., 0], sums[..., 1], sums[..., 2]
    den = 2 * tp + fp + fn
    return np.divide(2 * tp, den, out=np.full(np.shape(tp), np.nan), where=den != 0)


def _columns(*cols) -> np.ndarray:
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])


def _outcomes(scores, labels, threshold):
    pred = scores >= threshold
    gold = labels.astype(bool)
    return pred, gold


def _stats_mean(scores, labels, threshold):
    return _columns(scores, np.ones_like(scores))


def _stats_positive_rate(scores, labels, threshold):
    return _columns(scores >= threshold, np.ones_like(scores))


def _stats_accuracy(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(pred == gold, np.ones_like(scores))


def _stats_tpr(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(pred & gold, gold)


def _stats_fnr(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(~pred & gold, gold)


def _stats_fpr(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(pred & ~gold, ~gold)


def _stats_tnr(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(~pred & ~gold, ~gold)


def _stats_precision(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(pred & gold, pred)


def _stats_f1(scores, labels, threshold):
    pred, gold = _outcomes(scores, labels, threshold)
    return _columns(pred & gold, pred & ~gold, ~pred & gold)


# -- scores computed set by set ---------------------------------------------------------
def roc_auc(positives, negatives) -> float:
    """Probability that a positive outscores a negative, ties counting one half.

    This is the Mann-Whitney U statistic of ``positives`` divided by
    ``len(positives) * len(negatives)``, computed from average ranks.
    """
    from scipy.stats import rankdata

    pos = np.asarray(positives, dtype=np.float64)
    neg = np.asarray(negatives, dtype=np.float64)
    ranks = rankdata(np.concatenate([pos, neg]))
    u_pos = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
    return float(u_pos / (pos.size * neg.size))


def _auc(scores, labels):
    gold = labels.astype(bool)
    if gold.all() or not gold.any():
        raise FairnessInputError("auc is undefined: it needs both gold-positive and gold-negative examples")
    return roc_auc(scores[gold], scores[~gold])


def _scores(scores, labels):
    return scores.copy()


def _class_scores(scores, labels, cls: int, what: str):
    chosen = scores[labels == cls]
    if chosen.size == 0:
        raise FairnessInputError(f"{what} is empty: there are no gold-{'positive' if cls else 'negative'} examples")
    return chosen


def _positive_scores(scores, labels):
    return _class_scores(scores, labels, 1, "positive_scores")


def _negative_scores(scores, labels):
    return _class_scores(scores, labels, 0, "negative_scores")


_NO_POS = "there are no gold-positive examples"
_NO_NEG = "there are no gold-negative examples"

_BUILTIN = {
    "mean": ScoringFunction("mean", False, False, description="mean score",
                            stats=_stats_mean, finish=_ratio, undefined="there are no examples"),
    "positive_rate": ScoringFunction("positive_rate", False, False,
                                     description="fraction of examples predicted positive",
                                     stats=_stats_positive_rate, finish=_ratio,
                                     undefined="there are no examples"),
    "accuracy": ScoringFunction("accuracy", True, False, description="fraction predicted correctly",
                                stats=_stats_accuracy, finish=_ratio, undefined="there are no examples"),
    "tpr": ScoringFunction("tpr", True, False, description="true positive rate TP / (TP + FN)",
                           stats=_stats_tpr, finish=_ratio, undefined=_NO_POS),
    "fnr": ScoringFunction("fnr", True, False, description="false negative rate FN / (TP + FN)",
                           stats=_stats_fnr, finish=_ratio, undefined=_NO_POS),
    "fpr": ScoringFunction("fpr", True, False, description="false positive rate FP / (FP + TN)",
                           stats=_stats_fpr, finish=_ratio, undefined=_NO_NEG),
    "tnr": ScoringFunction("tnr", True, False, description="true negative rate TN / (FP + TN)",
                           stats=_stats_tnr, finish=_ratio, undefined=_NO_NEG),
    "precision": ScoringFunction("precision", True, False, description="precision TP / (TP + FP)",
                                 stats=_stats_precision, finish=_ratio,
                                 undefined="there are no predicted-positive examples"),
    "f1": ScoringFunction("f1", True, False, description="F1 = 2 TP / (2 TP + FP + FN)",
                          stats=_stats_f1, finish=_f1,
                          undefined="there are no gold-positive and no predicted-positive examples"),
    "auc": ScoringFunction("auc", True, False, description="ROC AUC of the scores against the gold labels",
                           func=_auc),
    "scores": ScoringFunction("scores", False, True, description="the set of scores {f(x, 1) | x in A}",
                              func=_scores),
    "positive_scores": ScoringFunction("positive_scores", True, True,
                                       description="the scores of the gold-positive examples",
                                       func=_positive_scores),
    "negative_scores": ScoringFunction("negative_scores", True, True,
                                       description="the scores of the gold-negative examples",
                                       func=_negative_scores),
}
_ALIASES = {"recall": "tpr", "true_positive_rate": "tpr", "false_positive_rate": "fpr",
            "false_negative_rate": "fnr", "true_negative_rate": "tnr", "roc_auc": "auc"}


def available_scoring_functions() -> list[str]:
    """Names :func:`phi` accepts (aliases included), sorted."""
    return sorted(set(_BUILTIN) | set(_ALIASES))


def _user_callable(func: Callable) -> ScoringFunction:
    def call(scores, labels):
        return func(scores, labels)

    return ScoringFunction(getattr(func, "__name__", "custom"), needs_labels=False, set_valued=None,
                           description="user scoring function", func=call)


def phi(spec, *, threshold: float = 0.5) -> ScoringFunction:
    """Resolve a scoring function from a name or a callable.

    Parameters
    ----------
    spec : str, callable or ScoringFunction
        A name (case-insensitive; see :func:`available_scoring_functions`), a
        :class:`ScoringFunction`, or a callable ``f(scores, labels)`` that gets the
        scores (float array) and gold labels (int8 array, or None when none were
        given) of one set of examples and returns a scalar or a 1-D array (a set).
    threshold : float, default 0.5
        Predicted positive means ``score >= threshold``; used by the prediction-based
        scores (``positive_rate``, ``accuracy``, ``tpr``, ``fpr``, ...).

    Returns
    -------
    ScoringFunction

    Raises
    ------
    FairnessInputError
        An unknown name (the message lists the known ones) or a non-finite threshold.
    """
    if not np.isfinite(threshold):
        raise FairnessInputError(f"threshold must be a finite number, got {threshold!r}")
    if isinstance(spec, ScoringFunction):
        return replace(spec, threshold=float(threshold))
    if callable(spec):
        return _user_callable(spec)
    found = builtin_by_name(spec, _BUILTIN, _ALIASES, "scoring function", available_scoring_functions)
    return replace(found, threshold=float(threshold))
