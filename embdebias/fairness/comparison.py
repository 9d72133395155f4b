r"""Comparison functions :math:`d`: turn the scores of groups into one number.

Czarnowska et al. (2021, Sec. 3) call :math:`d` the comparison function.  PCM and BCM
use a bivariate :math:`d(x, y)`: in PCM :math:`x` is the score of the first group of a
pair and :math:`y` the second's; in BCM :math:`x` is the score of the background
:math:`\varphi(\beta)` and :math:`y` the score of the group (Eq. 3 writes
:math:`d(\varphi(\beta_{t_i,S}), \varphi(S^{t_i}))`).  MCM uses a multivariate
:math:`d(x_1, \dots, x_{|T|})` of all groups at once.

Scalar comparisons take scalar scores; set comparisons (Wasserstein-1, the
Mann-Whitney based ones) take the sets of scores of a set-valued :math:`\varphi`
(``scores``, ``positive_scores``, ``negative_scores``), that is the raw score
distributions, not a summary of them.

===============================  =========  ======  =======================================
name                             arity      input   :math:`d`
===============================  =========  ======  =======================================
``difference``                   pair       scalar  :math:`x - y` (signed)
``absolute_difference``          pair       scalar  :math:`|x - y|`
``ratio``                        pair       scalar  :math:`x / y`
``inverse_ratio``                pair       scalar  :math:`y / x`
``wasserstein``                  pair       set     :math:`W_1(X, Y)`
``average_equality_gap``         pair       set     :math:`\tfrac12 - \mathrm{MWU}(X,Y)/(|X||Y|)`
``auc_x_positive``               pair       set     AUC with :math:`X` positive, :math:`Y` negative
``auc_y_positive``               pair       set     AUC with :math:`Y` positive, :math:`X` negative
``range``                        multi      scalar  :math:`\max - \min`
``std``                          multi      scalar  population standard deviation
``variance``                     multi      scalar  population variance
===============================  =========  ======  =======================================

:math:`\mathrm{MWU}(X, Y)` is the Mann-Whitney U statistic of :math:`X`, the number of
pairs :math:`(x, y) \in X \times Y` with :math:`x > y`, ties counting one half, so
:math:`\mathrm{MWU}(X,Y)/(|X||Y|) = P(x > y) + \tfrac12 P(x = y)`.  With :math:`X` the
background and :math:`Y` the group (as in BCM), ``average_equality_gap`` is
:math:`\tfrac12 (P(y > x) - P(x > y))`: positive when the group's scores tend to be
higher than the background's, negative when lower, which is the reading Czarnowska et
al. give its sign (Sec. 6, "Signed vs Unsigned").  Borkan et al. (2019) state the
formula without fixing which sample's U is meant; we fix it this way.

``std`` and ``variance`` use ``ddof=0`` (the groups are the whole population being
compared, not a sample of one).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import FairnessInputError
from .scoring import builtin_by_name, roc_auc


@dataclass(frozen=True)
class ComparisonFunction:
    """A comparison function :math:`d`.

    Attributes
    ----------
    name : str
        Registry name, or the ``__name__`` of a user callable.
    arity : {"pair", "multi", "any"}
        ``"pair"``: called ``d(x, y)``; ``"multi"``: called ``d(values)`` on the scores
        of all groups; ``"any"``: a user callable, called either way.
    input : {"scalar", "set", "any"}
        What the scores must be: scalars, sets (1-D arrays), or either.
    vectorized : bool
        Whether ``func`` works elementwise on arrays of scalar scores (``"pair"``) or
        along the last axis of a 2-D array (``"multi"``), so all templates are
        compared in one call.
    commutative : bool or None
        Whether ``d(x, y) == d(y, x)``; a PCM with a non-commutative ``d`` depends on
        the order of the groups.
    description : str
        One line for documentation.
    func : callable
        The function itself.
    batch : callable or None
        For set comparisons: ``batch(xs, ys)`` compares the sets ``xs[j]`` and
        ``ys[j]`` of every template at once when all ``xs`` have one size and all
        ``ys`` another, and returns None otherwise (then ``func`` is called per
        template).
    """

    name: str
    arity: str
    input: str
    vectorized: bool
    commutative: bool | None
    description: str
    func: Callable
    batch: Callable | None = None

    def __call__(self, *args):
        return self.func(*args)


def _nonzero(den, what: str):
    if np.any(np.asarray(den) == 0):
        raise FairnessInputError(f"{what} is undefined: the denominator score is 0")
    return den


def _difference(x, y):
    return np.subtract(x, y)


def _absolute_difference(x, y):
    return np.abs(np.subtract(x, y))


def _ratio(x, y):
    return np.divide(x, _nonzero(y, "ratio x / y"))


def _inverse_ratio(x, y):
    return np.divide(y, _nonzero(x, "inverse_ratio y / x"))


def _wasserstein(x, y):
    from scipy.stats import wasserstein_distance

    return float(wasserstein_distance(x, y))


def _average_equality_gap(x, y):
    return 0.5 - roc_auc(x, y)


def _auc_x_positive(x, y):
    return roc_auc(x, y)


def _auc_y_positive(x, y):
    return roc_auc(y, x)


# -- set comparisons of all templates at once ------------------------------------------------
_CHUNK = 1 << 22  # largest number of array entries a batch step builds


def _stack(sets) -> np.ndarray | None:
    """The sets as rows of a 2-D array, or None when their sizes differ."""
    if len({np.size(s) for s in sets}) != 1:
        return None
    return np.stack([np.asarray(s, dtype=np.float64) for s in sets])


def _batched(xs, ys, width: Callable, rows: Callable) -> np.ndarray | None:
    """``rows(X, Y)`` over chunks of templates, ``width(m, k)`` entries per template."""
    X, Y = _stack(xs), _stack(ys)
    if X is None or Y is None:
        return None
    step = max(1, _CHUNK // width(X.shape[1], Y.shape[1]))
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], step):
        out[start:start + step] = rows(X[start:start + step], Y[start:start + step])
    return out


def _w1_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Wasserstein-1 of each row pair.

    Repeating each sorted value ``L / m`` times (``L = lcm(m, k)``) leaves an empirical
    distribution unchanged, and between two samples of equal size ``L`` W1 is the mean
    absolute difference of the sorted samples (the quantile functions' distance).
    """
    size = math.lcm(X.shape[1], Y.shape[1])
    xq = np.repeat(np.sort(X, axis=1), size // X.shape[1], axis=1)
    yq = np.repeat(np.sort(Y, axis=1), size // Y.shape[1], axis=1)
    return np.abs(xq - yq).mean(axis=1)


def _greater_rows(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """``P(x > y) + P(x = y) / 2`` of each row pair (the normalized Mann-Whitney U of X)."""
    diff = X[:, :, None] - Y[:, None, :]
    return (diff > 0).mean(axis=(1, 2)) + 0.5 * (diff == 0).mean(axis=(1, 2))


def _batch_wasserstein(xs, ys):
    return _batched(xs, ys, math.lcm, _w1_rows)


def _batch_average_equality_gap(xs, ys):
    out = _batched(xs, ys, operator.mul, _greater_rows)
    return None if out is None else 0.5 - out


def _batch_auc_x_positive(xs, ys):
    return _batched(xs, ys, operator.mul, _greater_rows)


def _batch_auc_y_positive(xs, ys):
    return _batched(ys, xs, operator.mul, _greater_rows)


# -- multi-group comparisons -------------------------------------------------------------------
def _range(values):
    return np.ptp(values, axis=-1)


def _std(values):
    return np.std(values, axis=-1)


def _variance(values):
    return np.var(values, axis=-1)


_BUILTIN = {c.name: c for c in (
    ComparisonFunction("difference", "pair", "scalar", True, False, "x - y (signed)", _difference),
    ComparisonFunction("absolute_difference", "pair", "scalar", True, True, "|x - y|", _absolute_difference),
    ComparisonFunction("ratio", "pair", "scalar", True, False, "x / y", _ratio),
    ComparisonFunction("inverse_ratio", "pair", "scalar", True, False, "y / x", _inverse_ratio),
    ComparisonFunction("wasserstein", "pair", "set", False, True,
                       "Wasserstein-1 distance between the score distributions", _wasserstein,
                       _batch_wasserstein),
    ComparisonFunction("average_equality_gap", "pair", "set", False, False,
                       "1/2 - MWU(X, Y) / (|X| |Y|)", _average_equality_gap, _batch_average_equality_gap),
    ComparisonFunction("auc_x_positive", "pair", "set", False, False,
                       "AUC with the x set as positives and the y set as negatives", _auc_x_positive,
                       _batch_auc_x_positive),
    ComparisonFunction("auc_y_positive", "pair", "set", False, False,
                       "AUC with the y set as positives and the x set as negatives", _auc_y_positive,
                       _batch_auc_y_positive),
    ComparisonFunction("range", "multi", "scalar", True, True, "max - min", _range),
    ComparisonFunction("std", "multi", "scalar", True, True, "standard deviation (ddof=0)", _std),
    ComparisonFunction("variance", "multi", "scalar", True, True, "variance (ddof=0)", _variance),
)}
_ALIASES = {"diff": "difference", "abs_diff": "absolute_difference", "absolute": "absolute_difference",
            "w1": "wasserstein", "wasserstein_distance": "wasserstein", "wasserstein1": "wasserstein",
            "max_min": "range", "standard_deviation": "std", "var": "variance",
            "aeg": "average_equality_gap"}


def available_comparisons() -> list[str]:
    """Names :func:`distance` accepts (aliases included), sorted."""
    return sorted(set(_BUILTIN) | set(_ALIASES))


def distance(spec) -> ComparisonFunction:
    """Resolve a comparison function from a name or a callable.

    Parameters
    ----------
    spec : str, callable or ComparisonFunction
        A name (case-insensitive; see :func:`available_comparisons`), a
        :class:`ComparisonFunction`, or a callable.  A callable used in PCM or BCM is
        called ``d(x, y)`` once per pair (or group) and template; in MCM it is called
        ``d(values)`` with a 1-D array of the groups' scalar scores (or a list of their
        score sets).  It must return a finite real number.

    Returns
    -------
    ComparisonFunction

    Raises
    ------
    FairnessInputError
        An unknown name; the message lists the known ones.
    """
    if isinstance(spec, ComparisonFunction):
        return spec
    if callable(spec):
        return ComparisonFunction(getattr(spec, "__name__", "custom"), "any", "any", False, None,
                                  "user comparison function", spec)
    return builtin_by_name(spec, _BUILTIN, _ALIASES, "comparison function", available_comparisons)
