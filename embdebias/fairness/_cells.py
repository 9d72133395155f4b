r"""Scores :math:`\varphi` of every ``(template, group)`` cell and of its background.

The group form of a metric is the counterfactual form with a single template holding
every example, so both are computed the same way: a table with one row per template
and one column per compared group.

Additive scoring functions (ratios of sums) are computed for all cells at once from
``numpy.bincount`` sums; their backgrounds follow from the same sums (all examples of
a template: the row total; the other groups: row total minus the cell).  Other
scoring functions are called once per cell on the cell's examples.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import FairnessInputError
from ._data import FairnessData
from .background import Background
from .scoring import ScoringFunction


@dataclass(frozen=True)
class Table:
    """Scores of cells: ``values[t, c]`` for template ``t`` and compared group ``cols[c]``.

    ``values`` is a float array when the scores are scalars and an object array of
    1-D float arrays when they are sets.
    """

    values: np.ndarray
    set_valued: bool


def where(data: FairnessData, template: int, group: int | None, background: bool = False) -> str:
    """Words locating a cell (or its background) for an error message."""
    text = "the background" if background else ""
    if group is not None:
        text = f"{text} of group {data.group_names[group]!r}" if background else f"group {data.group_names[group]!r}"
    if data.counterfactual:
        text += f" in template {data.template_names[template]!r}"
    return text.strip()


# -- additive scores ---------------------------------------------------------------------
def _cell_sums(phi: ScoringFunction, data: FairnessData) -> np.ndarray:
    stats = phi.stats(data.scores, data.labels, phi.threshold)
    n_cells = data.n_templates * data.n_groups
    columns = [np.bincount(data.cell_codes, weights=stats[:, k], minlength=n_cells)
               for k in range(stats.shape[1])]
    return np.stack(columns, axis=-1).reshape(data.n_templates, data.n_groups, -1)


def _background_sums(sums: np.ndarray, bg: Background, bg_index: int | None) -> np.ndarray:
    total = sums.sum(axis=1, keepdims=True)
    if bg.kind == "rest":
        return total - sums
    chosen = total if bg.kind == "all" else sums[:, bg_index:bg_index + 1, :]
    return np.broadcast_to(chosen, sums.shape)


def _finish(phi: ScoringFunction, data: FairnessData, sums: np.ndarray, cols, background: bool) -> Table:
    values = phi.finish(sums[:, cols, :])
    bad = np.argwhere(np.isnan(values))
    if bad.size:
        t, c = bad[0]
        raise FairnessInputError(
            f"{phi.name} is undefined for {where(data, t, cols[c], background)}: {phi.undefined}")
    return Table(np.asarray(values, dtype=np.float64), False)


# -- scores computed cell by cell ----------------------------------------------------------
def _cell_indices(codes: np.ndarray, n: int) -> list[np.ndarray]:
    order = np.argsort(codes, kind="stable")
    counts = np.bincount(codes, minlength=n)
    return np.split(order, np.cumsum(counts)[:-1])


def _checked(value, phi: ScoringFunction, location: str):
    arr = np.asarray(value, dtype=np.float64) if np.ndim(value) <= 1 else None
    if arr is None:
        raise FairnessInputError(f"{phi.name} returned a {np.ndim(value)}-D array for {location}; "
                                 "a score is a scalar or a 1-D set")
    if arr.size == 0 or not np.isfinite(arr).all():
        raise FairnessInputError(f"{phi.name} gave an empty or non-finite score for {location}")
    return float(arr) if arr.ndim == 0 else arr


def _evaluate(phi: ScoringFunction, data: FairnessData, index: np.ndarray, location: str):
    labels = None if data.labels is None else data.labels[index]
    try:
        value = phi(data.scores[index], labels)
    except FairnessInputError as exc:
        raise FairnessInputError(f"{location}: {exc}") from None
    return _checked(value, phi, location)


def _background_index(row: list[np.ndarray], bg: Background, bg_index: int | None, g: int) -> np.ndarray:
    if bg.kind == "all":
        return np.concatenate(row)
    if bg.kind == "rest":
        return np.concatenate(row[:g] + row[g + 1:])
    return row[bg_index]


def _as_table(rows: list[list], phi: ScoringFunction) -> Table:
    flat = [v for row in rows for v in row]
    kinds = {isinstance(v, np.ndarray) for v in flat}
    if len(kinds) > 1:
        raise FairnessInputError(f"{phi.name} returned scalars for some sets and arrays for others")
    if kinds == {True}:
        values = np.empty((len(rows), len(rows[0])), dtype=object)
        for t, row in enumerate(rows):
            for c, v in enumerate(row):
                values[t, c] = v
        return Table(values, True)
    return Table(np.array(rows, dtype=np.float64), False)


def _generic_table(phi, data, cols, bg=None, bg_index=None) -> Table:
    cells = _cell_indices(data.cell_codes, data.n_templates * data.n_groups)
    rows = []
    for t in range(data.n_templates):
        row = cells[t * data.n_groups:(t + 1) * data.n_groups]
        if bg is None:
            rows.append([_evaluate(phi, data, row[g], where(data, t, g)) for g in cols])
        elif bg.kind == "rest":
            rows.append([_evaluate(phi, data, _background_index(row, bg, bg_index, g), where(data, t, g, True))
                         for g in cols])
        else:  # the same background for every group of the template
            shared = _evaluate(phi, data, _background_index(row, bg, bg_index, 0), where(data, t, None, True))
            rows.append([shared] * len(cols))
    return _as_table(rows, phi)


# -- public to the package -------------------------------------------------------------------
def group_table(phi: ScoringFunction, data: FairnessData, cols: list[int]) -> Table:
    """:math:`\\varphi(S'^{t}_j)` for every template ``j`` and group ``t`` in ``cols``."""
    if phi.additive:
        return _finish(phi, data, _cell_sums(phi, data), cols, background=False)
    return _generic_table(phi, data, cols)


def background_table(phi: ScoringFunction, data: FairnessData, bg: Background, bg_index: int | None,
                     cols: list[int]) -> Table:
    """:math:`\\varphi(\\beta)` of the background of every group in ``cols``, per template."""
    if phi.additive:
        sums = _background_sums(_cell_sums(phi, data), bg, bg_index)
        return _finish(phi, data, sums, cols, background=True)
    return _generic_table(phi, data, cols, bg, bg_index)
