"""Validation of the inputs every fairness metric shares.

The metrics take parallel one-dimensional arrays: a score per example, the protected
group of each example, optionally the counterfactual template (source example) each
example was made from and optionally each example's gold label.  :func:`prepare`
checks them once and turns the labels into integer codes, so the metrics can work on
``(template, group)`` cells with ``numpy.bincount``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FairnessInputError

_SHOW = 5  # how many offending positions or cells an error message names


@dataclass(frozen=True)
class FairnessData:
    """Validated inputs of a fairness metric.

    Attributes
    ----------
    scores : ndarray of float64, shape (n,)
        The finite scores.
    labels : ndarray of int8, shape (n,), or None
        Gold labels, 0 or 1.
    group_codes : ndarray of intp, shape (n,)
        Index of each example's group in ``group_names``.
    group_names : tuple
        The protected groups, in the order the metric uses them.
    template_codes : ndarray of intp, shape (n,)
        Index of each example's template in ``template_names`` (all 0 in group form).
    template_names : tuple
        The templates; ``(None,)`` in group form.
    counterfactual : bool
        Whether templates were given (the counterfactual form).
    """

    scores: np.ndarray
    labels: np.ndarray | None
    group_codes: np.ndarray
    group_names: tuple
    template_codes: np.ndarray
    template_names: tuple
    counterfactual: bool

    @property
    def n_groups(self) -> int:
        return len(self.group_names)

    @property
    def n_templates(self) -> int:
        return len(self.template_names)

    @property
    def cell_codes(self) -> np.ndarray:
        """Index of each example's ``(template, group)`` cell, ``t * n_groups + g``."""
        return self.template_codes * self.n_groups + self.group_codes

    def subset(self, mask: np.ndarray) -> FairnessData:
        """The examples where ``mask`` is true, with the same groups and templates."""
        return FairnessData(self.scores[mask], None if self.labels is None else self.labels[mask],
                            self.group_codes[mask], self.group_names, self.template_codes[mask],
                            self.template_names, self.counterfactual)


def _positions(mask: np.ndarray) -> str:
    where = np.flatnonzero(mask)
    shown = ", ".join(str(i) for i in where[:_SHOW])
    more = f" and {where.size - _SHOW} more" if where.size > _SHOW else ""
    return f"position{'s' if where.size > 1 else ''} {shown}{more}"


def _one_dimensional(name: str, values) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise FairnessInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    return arr


def _check_lengths(arrays: dict[str, np.ndarray]) -> None:
    lengths = {name: arr.shape[0] for name, arr in arrays.items()}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise FairnessInputError(f"the inputs must have one entry per example, but {listed}")
    if next(iter(lengths.values())) == 0:
        raise FairnessInputError("no examples: scores is empty")


def _finite_floats(name: str, arr: np.ndarray) -> np.ndarray:
    if arr.dtype.kind not in "biuf":
        raise FairnessInputError(f"{name} must be real numbers, got an array of dtype {arr.dtype}")
    out = arr.astype(np.float64)
    bad = ~np.isfinite(out)
    if bad.any():
        kind = "NaN" if np.isnan(out[bad]).all() else "NaN or infinite"
        raise FairnessInputError(f"{name} must be finite, found {kind} values at {_positions(bad)}")
    return out


def _binary_labels(arr: np.ndarray) -> np.ndarray:
    out = _finite_floats("labels", arr)
    bad = (out != 0) & (out != 1)
    if bad.any():
        raise FairnessInputError(
            "labels must be binary gold labels (0/1 or False/True); found "
            f"{sorted(set(out[bad].tolist()))[:_SHOW]} at {_positions(bad)}")
    return out.astype(np.int8)


def _codes(name: str, arr: np.ndarray) -> tuple[list, np.ndarray]:
    """Sorted distinct values of ``arr`` and the index of each entry among them."""
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise FairnessInputError(f"{name} must not be NaN, found NaN at {_positions(np.isnan(arr))}")
    try:
        uniq, inverse = np.unique(arr, return_inverse=True)
    except TypeError as exc:
        raise FairnessInputError(
            f"{name} must be labels of one sortable type (all strings or all numbers), "
            f"and not None: {exc}") from None
    values = uniq.tolist()
    if any(v is None for v in values):
        raise FairnessInputError(f"{name} must not be None, found None at {_positions(arr == None)}")  # noqa: E711
    return values, inverse.reshape(-1).astype(np.intp)


def _apply_order(names: list, codes: np.ndarray, group_order) -> tuple[tuple, np.ndarray]:
    order = list(group_order)
    if len(set(order)) != len(order):
        raise FairnessInputError(f"group_order lists a group twice: {order}")
    absent = [g for g in order if g not in names]
    if absent:
        raise FairnessInputError(
            f"group {absent[0]!r} has no examples (groups present: {names})")
    unlisted = [g for g in names if g not in order]
    if unlisted:
        raise FairnessInputError(f"group_order {order} leaves out the groups {unlisted}")
    position = {g: i for i, g in enumerate(order)}
    remap = np.array([position[g] for g in names], dtype=np.intp)
    return tuple(order), remap[codes]


def _check_coverage(data: FairnessData) -> None:
    """Every group must have at least one variation of every template."""
    cells = data.n_templates * data.n_groups
    if cells > max(data.scores.shape[0], 1 << 24):  # some cell is empty; too many cells to count and name one
        raise FairnessInputError(
            f"a counterfactual metric needs every group in every template, but {data.n_templates:,} templates x "
            f"{data.n_groups:,} groups make {cells:,} cells and there are only {data.scores.shape[0]:,} examples")
    counts = np.bincount(data.cell_codes, minlength=data.n_templates * data.n_groups)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        cells = [(data.template_names[c // data.n_groups], data.group_names[c % data.n_groups])
                 for c in empty[:_SHOW]]
        shown = ", ".join(f"group {g!r} in template {t!r}" for t, g in cells)
        more = f" and {empty.size - _SHOW} more" if empty.size > _SHOW else ""
        raise FairnessInputError(
            "a counterfactual metric needs every group in every template, but there are no "
            f"examples for {shown}{more}")


def prepare(scores, groups, *, templates=None, labels=None, group_order=None) -> FairnessData:
    """Validate the inputs of a fairness metric.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        One finite score per example (a probability, a predicted label or any number).
    groups : array-like, shape (n,)
        The protected group of each example (strings or numbers, not None or NaN).
    templates : array-like, shape (n,), optional
        The counterfactual template (source example) each example was made from.
        Given, the data are in counterfactual form and every group must occur in every
        template.
    labels : array-like of {0, 1}, shape (n,), optional
        Gold labels.
    group_order : sequence, optional
        The groups in the order to use (it fixes the order of pairs and the sign of
        non-commutative comparisons); default sorted.  Must list exactly the groups
        present.

    Returns
    -------
    FairnessData

    Raises
    ------
    FairnessInputError
        Mismatched lengths, no examples, non-finite scores, non-binary labels, None or
        NaN group labels, fewer than two groups, a listed group with no examples, or a
        group missing from a template.
    """
    arrays = {"scores": _one_dimensional("scores", scores), "groups": _one_dimensional("groups", groups)}
    if templates is not None:
        arrays["templates"] = _one_dimensional("templates", templates)
    if labels is not None:
        arrays["labels"] = _one_dimensional("labels", labels)
    _check_lengths(arrays)
    score_values = _finite_floats("scores", arrays["scores"])
    gold = _binary_labels(arrays["labels"]) if labels is not None else None
    names, group_codes = _codes("groups", arrays["groups"])
    if group_order is not None:
        names, group_codes = _apply_order(names, group_codes, group_order)
    if len(names) < 2:
        raise FairnessInputError(
            f"a fairness metric compares at least two groups, but the data have only {list(names)}")
    if templates is None:
        t_names, t_codes = (None,), np.zeros(score_values.shape[0], dtype=np.intp)
    else:
        t_names, t_codes = _codes("templates", arrays["templates"])
    data = FairnessData(score_values, gold, group_codes, tuple(names), t_codes, tuple(t_names),
                        templates is not None)
    if data.counterfactual:
        _check_coverage(data)
    return data
