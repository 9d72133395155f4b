r"""The three generalized fairness metrics of Czarnowska, Vyas & Shah (2021, Sec. 3).

Let :math:`T` be the protected groups and :math:`S^{t}` the examples of group
:math:`t`.  In the counterfactual form, :math:`S' = \{S'_1, \dots, S'_{|S'|}\}` are the
templates (source examples) and :math:`S'^{t}_j` the variations of template :math:`j`
for group :math:`t`.

Pairwise Comparison Metric, group (Eq. 1) and counterfactual (Eq. 2):

.. math::

    \frac1N \sum_{\{t_i,t_k\} \in \binom T2} d(\varphi(S^{t_i}), \varphi(S^{t_k}))
    \qquad
    \frac{1}{|S'|\,N} \sum_{S'_j \in S'} \sum_{\{t_i,t_k\} \in \binom T2}
        d(\varphi(S'^{t_i}_j), \varphi(S'^{t_k}_j))

Background Comparison Metric (Eq. 3 and 4), with background :math:`\beta`:

.. math::

    \frac1N \sum_{t_i \in T} d(\varphi(\beta_{t_i,S}), \varphi(S^{t_i}))
    \qquad
    \frac{1}{|S'|\,N} \sum_{S'_j \in S'} \sum_{t_i \in T}
        d(\varphi(\beta_{t_i,S'_j}), \varphi(S'^{t_i}_j))

The vector-valued BCM (VBCM) drops the :math:`\frac1N\sum_{t_i}`: one value per group
(in the counterfactual form still averaged over templates).

Multi-group Comparison Metric (Eq. 5 and 6):

.. math::

    d(\varphi(S^{t_1}), \dots, \varphi(S^{t_{|T|}}))
    \qquad
    \frac{1}{|S'|} \sum_{S'_j \in S'} d(\varphi(S'^{t_1}_j), \dots, \varphi(S'^{t_{|T|}}_j))

The pairs :math:`\binom T2` are unordered in the paper; with a non-commutative
:math:`d` (``difference``, ``ratio``) we take each pair once, first group first, in
``group_order`` (sorted by default).

Passing ``templates`` selects the counterfactual form.  When a group has several
variations in a template (several identity terms), :math:`\varphi` is computed on all
of them together, as the equations say (for ``mean``, the average over the identity
terms, as Kiritchenko & Mohammad (2018) do).  The paper's experiments instead sample
from the Cartesian product of the variations for metrics defined on single examples
(Sec. 5, "Metrics"); with one variation per group and template the two agree, and
with a nonlinear ``d`` such as ``absolute_difference`` they differ otherwise.
"""

from __future__ import annotations

import numpy as np

from ..errors import FairnessInputError
from ._cells import Table, background_table, group_table
from ._data import FairnessData, prepare
from .background import Background, background as resolve_background
from .comparison import ComparisonFunction, distance
from .normalizer import normalizer as resolve_normalizer
from .result import FairnessResult, VectorResult
from .scoring import ScoringFunction, phi as resolve_phi

_SET_PHIS = "'scores', 'positive_scores', 'negative_scores'"
#: PCM lists its per-pair terms (``parts``) for at most this many pairs (about 450 groups).
PAIR_PARTS_LIMIT = 100_000
#: Most pairs of groups PCM compares one by one (about 1,400 groups); past it only a
#: comparison in :data:`CLOSED_FORMS` on scalar scores is computed, the others refused.
PAIRS_LIMIT = 1_000_000
#: Comparisons whose sum over all pairs follows from sorted or suffix sums, in
#: O(|T| log |T|): PCM computes them for any number of groups in memory linear in |T|.
CLOSED_FORMS = ("difference", "absolute_difference", "ratio", "inverse_ratio")
#: Most scores set comparisons (``wasserstein``, the AUCs) read in all, counting a set once
#: per comparison it enters (a background of the other groups holds nearly every score,
#: once per group): past it a metric is refused before any set is built.
SET_SCORES_LIMIT = 100_000_000


def _resolve_functions(phi_spec, d_spec, threshold, arity: str, metric: str):
    dist = distance(d_spec)
    if dist.arity not in (arity, "any"):
        if arity == "multi":
            raise FairnessInputError(
                f"{metric} compares all groups at once and needs a multi-group comparison "
                f"(range, std, variance or a callable), not {dist.name!r}")
        raise FairnessInputError(
            f"{metric} compares two scores at a time; {dist.name!r} compares all groups at once "
            "(use it with mcm)")
    if phi_spec is None:
        phi_spec = "scores" if dist.input == "set" else "mean"
    return resolve_phi(phi_spec, threshold=threshold), dist


def _check_compatible(f: ScoringFunction, dist: ComparisonFunction, set_valued: bool | None) -> None:
    if set_valued is None or dist.input == "any":
        return
    if dist.input == "set" and not set_valued:
        raise FairnessInputError(
            f"comparison {dist.name!r} compares score distributions and needs a set-valued "
            f"scoring function ({_SET_PHIS} or a callable returning an array), not {f.name!r}")
    if dist.input == "scalar" and set_valued:
        raise FairnessInputError(
            f"scoring function {f.name!r} gives a set of scores, which comparison {dist.name!r} "
            "cannot compare; use a set comparison (wasserstein, average_equality_gap, "
            "auc_x_positive, auc_y_positive) or a scalar scoring function such as 'mean'")


def _check_labels(data: FairnessData, *functions: ScoringFunction) -> None:
    for f in functions:
        if f.needs_labels and data.labels is None:
            raise FairnessInputError(f"scoring function {f.name!r} needs gold labels: pass labels=")


def _setup(scores, groups, templates, labels, group_order, phi_spec, d_spec, threshold, arity, metric):
    f, dist = _resolve_functions(phi_spec, d_spec, threshold, arity, metric)
    data = prepare(scores, groups, templates=templates, labels=labels, group_order=group_order)
    _check_labels(data, f)
    _check_compatible(f, dist, f.set_valued)
    return data, f, dist


def _as_float(value, location: str) -> float:
    if np.ndim(value) != 0:
        raise FairnessInputError(f"the comparison returned a non-scalar for {location}")
    out = float(value)
    if not np.isfinite(out):
        raise FairnessInputError(f"the comparison returned {out} for {location}")
    return out


def _template_words(data: FairnessData, t: int) -> str:
    return f" in template {data.template_names[t]!r}" if data.counterfactual else ""


def _compare_at_once(dist: ComparisonFunction, xs: np.ndarray, ys: np.ndarray) -> np.ndarray | None:
    """All templates in one call when ``d`` allows it, else None."""
    if xs.dtype != object:
        return np.asarray(dist(xs, ys), dtype=np.float64) if dist.vectorized else None
    return None if dist.batch is None else dist.batch(xs, ys)


def _compare_pairs(dist: ComparisonFunction, xs: np.ndarray, ys: np.ndarray, data: FairnessData,
                   location: str) -> np.ndarray:
    """``d(xs[j], ys[j])`` for every template ``j``."""
    try:
        out = _compare_at_once(dist, xs, ys)
        if out is not None:
            bad = np.flatnonzero(~np.isfinite(out))
            if bad.size:
                raise FairnessInputError(f"it gave {out[bad[0]]}{_template_words(data, bad[0])}")
            return out
        return np.array([_as_float(dist(x, y), location + _template_words(data, t))
                         for t, (x, y) in enumerate(zip(xs, ys))])
    except FairnessInputError as exc:
        raise FairnessInputError(f"{dist.name} comparing {location}: {exc}") from None


def _compare_all(dist: ComparisonFunction, table: Table, data: FairnessData) -> np.ndarray:
    """``d(row)`` of every template row of the table."""
    if dist.vectorized and not table.set_valued:
        return np.asarray(dist(table.values), dtype=np.float64)
    rows = [list(row) if table.set_valued else np.asarray(row, dtype=np.float64) for row in table.values]
    return np.array([_as_float(dist(row), f"all groups{_template_words(data, t)}") for t, row in enumerate(rows)])


def _scalar_scores(table: Table, names: list) -> dict:
    if table.set_valued:
        return {}
    return dict(zip(names, table.values.mean(axis=0).tolist()))


def _per_template(data: FairnessData, contributions: np.ndarray) -> dict:
    if not data.counterfactual:
        return {}
    return dict(zip(data.template_names, contributions.tolist()))


def _form(data: FairnessData) -> str:
    return "counterfactual" if data.counterfactual else "group"


def pcm(scores, groups, *, phi=None, d="absolute_difference", normalizer=None, templates=None,
        labels=None, group_order=None, threshold: float = 0.5) -> FairnessResult:
    """Pairwise Comparison Metric (Czarnowska et al. 2021, Eq. 1 and 2).

    The average (with the default N) comparison of the scores of two groups, over all
    pairs of groups.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        One score per example, e.g. the probability of the positive class or a 0/1
        prediction.
    groups : array-like, shape (n,)
        The protected group of each example.
    phi : str or callable, optional
        Scoring function (see :func:`~embdebias.fairness.phi`); default ``"mean"``, or
        ``"scores"`` when ``d`` compares score sets (``wasserstein``).
    d : str or callable, default "absolute_difference"
        Bivariate comparison function (see :func:`~embdebias.fairness.distance`).
    normalizer : None, "pairs", "groups", "one" or float
        N; default the number of pairs C(|T|, 2).
    templates : array-like, shape (n,), optional
        Counterfactual template of each example: gives the counterfactual form (Eq. 2).
    labels : array-like of {0, 1}, shape (n,), optional
        Gold labels, for scoring functions that need them.
    group_order : sequence, optional
        Order of the groups (default sorted); the pairs are taken first-group-first.
    threshold : float, default 0.5
        Predicted positive means ``score >= threshold``.

    Returns
    -------
    FairnessResult
        ``value``, and ``parts`` per pair.

    Raises
    ------
    FairnessInputError
        Bad inputs (see :func:`~embdebias.fairness.prepare`), missing labels, a ``phi``
        and ``d`` that do not fit together, or a score undefined for some group.
    """
    data, f, dist = _setup(scores, groups, templates, labels, group_order, phi, d, threshold, "pair", "PCM")
    if f.set_valued:  # each score enters the comparisons of its group with every other group
        _check_set_scores(f, dist, (data.n_groups - 1) * data.scores.shape[0])
    table = group_table(f, data, list(range(data.n_groups)))
    _check_compatible(f, dist, table.set_valued)
    names = data.group_names
    sums, parts = _pair_sums(dist, table, data)
    n = resolve_normalizer(normalizer, n_groups=data.n_groups, kind="pcm")
    return FairnessResult(
        value=float(sums.mean() / n), metric="PCM", form=_form(data), parts=parts,
        normalizer=n, group_scores=_scalar_scores(table, list(names)),
        per_template=_per_template(data, sums / n), phi=f.name, d=dist.name)


def n_pairs(n_groups: int) -> int:
    """The number of pairs of ``n_groups`` groups, C(|T|, 2)."""
    return n_groups * (n_groups - 1) // 2


def _pair_sums(dist: ComparisonFunction, table: Table, data: FairnessData) -> tuple[np.ndarray, dict]:
    """``(per-template sum over the pairs of d, {pair: its term averaged over templates})``.

    The pairs are listed up to :data:`PAIR_PARTS_LIMIT` (else ``parts`` is empty). Past
    that, a comparison with a closed form over sorted or suffix sums (:data:`CLOSED_FORMS`)
    costs O(|T| log |T|) per template in memory and time; any other is computed pair by
    pair, one group's pairs at a time, up to :data:`PAIRS_LIMIT` pairs and refused past it.
    """
    count = n_pairs(data.n_groups)
    if count > PAIR_PARTS_LIMIT and not table.set_valued and _has_closed_form(dist):
        sums = _closed_form_sums(dist.name, table.values)
        if not np.isfinite(sums).all():
            _raise_first_bad_pair(dist, table, data)
        return sums, {}
    if count > PAIRS_LIMIT:
        raise FairnessInputError(
            f"PCM with {dist.name} compares each pair of groups: {data.n_groups:,} groups make {count:,} pairs, "
            f"more than {PAIRS_LIMIT:,}; use fewer groups, a BCM or MCM metric, or a comparison with a closed "
            f"form ({', '.join(CLOSED_FORMS)}) and a scalar phi")
    return _streamed_pair_sums(dist, table, data, keep=count <= PAIR_PARTS_LIMIT)


def _has_closed_form(dist: ComparisonFunction) -> bool:
    return dist.name in CLOSED_FORMS and distance(dist.name) is dist


def _closed_form_sums(name: str, X: np.ndarray) -> np.ndarray:
    """Per row of ``X`` (templates x groups, in group order), the sum of ``d(x_i, x_k)``
    over the pairs ``i < k``, from sorted or suffix sums instead of the pairs."""
    g = X.shape[1]
    j = np.arange(g, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if name == "difference":  # x_j is first in g - 1 - j pairs and second in j
            return X @ (g - 1 - 2 * j)
        if name == "absolute_difference":  # sorted, x_(j) is the larger in j pairs, the smaller in g - 1 - j
            return np.sort(X, axis=1) @ (2 * j - g + 1)
        later = X if name == "inverse_ratio" else 1.0 / X
        after = np.cumsum(later[:, :0:-1], axis=1)[:, ::-1]  # column i < g - 1: the sum over k > i
        return (X[:, :-1] * after if name == "ratio" else after / X[:, :-1]).sum(axis=1)


def _raise_first_bad_pair(dist, table: Table, data: FairnessData):
    """Raise the error of the first pair (in pair order) whose ``d`` is not finite: a zero
    denominator of a ratio lies in the first group's pairs (``ratio``) or in the pairs of
    the first group scored 0 (``inverse_ratio``); otherwise the sum itself overflowed."""
    zero = np.flatnonzero((table.values == 0).any(axis=0))
    first = 0 if dist.name == "ratio" else (int(zero[0]) if zero.size else None)
    if first is not None and first < data.n_groups - 1:
        _first_group_block(dist, table, data, first)
    raise FairnessInputError(f"{dist.name} summed over the {n_pairs(data.n_groups):,} pairs of groups is not "
                             f"finite (the scores are too large)")


def _streamed_pair_sums(dist, table: Table, data: FairnessData, keep: bool) -> tuple[np.ndarray, dict]:
    """The pairs' sums (and terms if ``keep``), one first group at a time, in pair order."""
    values, names = table.values, data.group_names
    sums, parts = np.zeros(values.shape[0]), {}
    for i in range(data.n_groups - 1):
        block = _first_group_block(dist, table, data, i)
        sums += block.sum(axis=1)
        if keep:
            parts.update({(names[i], names[k]): float(v) for k, v in zip(range(i + 1, data.n_groups),
                                                                          block.mean(axis=0))})
    return sums, parts


def _first_group_block(dist, table: Table, data: FairnessData, i: int) -> np.ndarray:
    """``d(group i, group k)`` for every template (rows) and every ``k > i`` (columns)."""
    values, names = table.values, data.group_names
    block = _columns_at_once(dist, Table(values[:, i:i + 1], False), Table(values[:, i + 1:], False)) \
        if not table.set_valued else None
    if block is not None:
        return block
    # pair by pair: a pair's error names it (and its template), as the first bad pair in order
    return np.column_stack([_compare_pairs(dist, values[:, i], values[:, k], data,
                                           f"group {names[i]!r} with group {names[k]!r}")
                            for k in range(i + 1, data.n_groups)])


def _background_index(data: FairnessData, bg: Background) -> int | None:
    if bg.kind != "group":
        return None
    if bg.group not in data.group_names:
        raise FairnessInputError(
            f"background group {bg.group!r} has no examples (groups present: {list(data.group_names)})")
    return data.group_names.index(bg.group)


def _compare_backgrounds(scores, groups, templates, labels, group_order, phi_spec, d_spec, background,
                         phi_background, threshold, metric):
    """Per-template ``d(phi(background), phi(group))`` for every compared group."""
    data, f, dist = _setup(scores, groups, templates, labels, group_order, phi_spec, d_spec, threshold,
                           "pair", metric)
    fb = f if phi_background is None else resolve_phi(phi_background, threshold=threshold)
    _check_labels(data, fb)
    _check_compatible(fb, dist, fb.set_valued)
    bg = resolve_background(background)
    bg_index = _background_index(data, bg)
    cols = [g for g in range(data.n_groups) if g != bg_index]
    if f.set_valued or fb.set_valued:
        _check_set_scores(f, dist, _background_set_scores(data, bg, bg_index, cols))
    table = group_table(f, data, cols)
    btable = background_table(fb, data, bg, bg_index, cols)
    _check_compatible(f, dist, table.set_valued)
    _check_compatible(fb, dist, btable.set_valued)
    names = [data.group_names[g] for g in cols]
    matrix = _columns_at_once(dist, btable, table)
    if matrix is None:  # group by group: a group's error names it (and its template)
        matrix = np.column_stack([_compare_pairs(dist, btable.values[:, c], table.values[:, c], data,
                                                 f"the background ({bg.describe()}) with group {name!r}")
                                  for c, name in enumerate(names)])
    return data, f, dist, bg, names, matrix, table, btable


def _columns_at_once(dist: ComparisonFunction, xs: Table, ys: Table) -> np.ndarray | None:
    """``d(xs, ys)`` of every cell in one call when ``d`` works elementwise and all are finite, else None."""
    if not dist.vectorized or xs.set_valued or ys.set_valued:
        return None
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        try:
            out = np.asarray(dist(xs.values, ys.values), dtype=np.float64)
        except FairnessInputError:
            return None
    return out if out.shape == ys.values.shape and np.isfinite(out).all() else None


def _background_set_scores(data: FairnessData, bg: Background, bg_index: int | None, cols: list) -> int:
    """How many scores the comparisons of each group in ``cols`` with its background read in all."""
    cells = np.bincount(data.cell_codes, minlength=data.n_templates * data.n_groups).reshape(data.n_templates, -1)
    rows = cells.sum(axis=1, dtype=np.int64)
    compared = int(cells[:, cols].sum())
    if bg.kind == "rest":  # the group's set and the others': the whole template
        return int((rows * len(cols)).sum())
    if bg.kind == "all":
        return int((rows * len(cols)).sum()) + compared
    return int(cells[:, bg_index].sum()) * len(cols) + compared


def _check_set_scores(f: ScoringFunction, dist: ComparisonFunction, count: int) -> None:
    if count > SET_SCORES_LIMIT:
        raise FairnessInputError(
            f"{dist.name} of the score sets ({f.name}) would read {count:,} scores in all (each group's set "
            f"once per comparison it enters), more than {SET_SCORES_LIMIT:,}; use fewer groups or a scalar "
            f"phi such as 'mean'")


def bcm(scores, groups, *, phi=None, d="absolute_difference", normalizer=None, background=None,
        phi_background=None, templates=None, labels=None, group_order=None,
        threshold: float = 0.5) -> FairnessResult:
    """Background Comparison Metric (Czarnowska et al. 2021, Eq. 3 and 4).

    Compares the score of each group with the score of its background and averages
    (with the default N) over the groups.

    Parameters
    ----------
    scores, groups, templates, labels, group_order, threshold
        As for :func:`pcm`.
    phi : str or callable, optional
        Scoring function; default ``"mean"`` (``"scores"`` for a set comparison).
    d : str or callable, default "absolute_difference"
        Called ``d(phi(background), phi(group))``.
    normalizer : None, "pairs", "groups", "one" or float
        N; default the number of compared groups |T|.
    background : "all", "rest" or Background, optional
        The background (see :func:`~embdebias.fairness.background`): all examples
        (default; in the counterfactual form all variations of the template), the
        other groups' examples (``"rest"``), or ``background(group=g)``: group ``g``,
        which then is not itself compared (a privileged group, or the unperturbed
        source example of each template).
    phi_background : str or callable, optional
        A different scoring function for the background.  The paper's BCM uses one
        phi; its footnote 5 relaxes this to express the BPSN/BNSP AUCs of Borkan et
        al. (2019).  Default: ``phi``.

    Returns
    -------
    FairnessResult
        ``value``, ``parts`` per group and ``background_scores``.
    """
    data, f, dist, bg, names, matrix, table, btable = _compare_backgrounds(
        scores, groups, templates, labels, group_order, phi, d, background, phi_background, threshold, "BCM")
    n = resolve_normalizer(normalizer, n_groups=len(names), kind="bcm")
    return FairnessResult(
        value=float(matrix.sum(axis=1).mean() / n), metric="BCM", form=_form(data),
        parts=dict(zip(names, matrix.mean(axis=0).tolist())), normalizer=n,
        group_scores=_scalar_scores(table, names), background_scores=_scalar_scores(btable, names),
        per_template=_per_template(data, matrix.sum(axis=1) / n), phi=f.name, d=dist.name)


def vbcm(scores, groups, *, phi=None, d="absolute_difference", background=None, phi_background=None,
         templates=None, labels=None, group_order=None, threshold: float = 0.5) -> VectorResult:
    """Vector-valued Background Comparison Metric (Czarnowska et al. 2021, Sec. 3.2).

    BCM without the aggregation over groups: one value per group,
    ``d(phi(background), phi(group))`` (averaged over templates in the
    counterfactual form).

    Parameters
    ----------
    scores, groups, phi, d, background, phi_background, templates, labels, group_order, threshold
        As for :func:`bcm`.

    Returns
    -------
    VectorResult
        A mapping ``{group: value}`` with the per-group scores.
    """
    data, f, dist, bg, names, matrix, table, btable = _compare_backgrounds(
        scores, groups, templates, labels, group_order, phi, d, background, phi_background, threshold, "VBCM")
    return VectorResult(
        per_group=dict(zip(names, matrix.mean(axis=0).tolist())), metric="VBCM", form=_form(data),
        background=bg.describe(), group_scores=_scalar_scores(table, names),
        background_scores=_scalar_scores(btable, names), phi=f.name, d=dist.name)


def mcm(scores, groups, *, phi=None, d="range", templates=None, labels=None, group_order=None,
        threshold: float = 0.5) -> FairnessResult:
    """Multi-group Comparison Metric (Czarnowska et al. 2021, Eq. 5 and 6).

    One comparison of the scores of all groups at once, e.g. their range or standard
    deviation; in the counterfactual form averaged over templates.

    Parameters
    ----------
    scores, groups, phi, templates, labels, group_order, threshold
        As for :func:`pcm`.
    d : str or callable, default "range"
        A multi-group comparison: ``range``, ``std``, ``variance`` or a callable taking
        the groups' scores (a 1-D array, in group order).

    Returns
    -------
    FairnessResult
        ``value``; ``group_scores``; ``per_template`` in the counterfactual form.
    """
    data, f, dist = _setup(scores, groups, templates, labels, group_order, phi, d, threshold, "multi", "MCM")
    table = group_table(f, data, list(range(data.n_groups)))
    _check_compatible(f, dist, table.set_valued)
    values = _compare_all(dist, table, data)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise FairnessInputError(f"{dist.name} gave {values[bad[0]]}{_template_words(data, bad[0])}")
    return FairnessResult(
        value=float(values.mean()), metric="MCM", form=_form(data),
        group_scores=_scalar_scores(table, list(data.group_names)),
        per_template=_per_template(data, values), phi=f.name, d=dist.name)
