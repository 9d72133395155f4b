"""A classifier's scores from a CSV file, for auditing a model trained elsewhere.

The file has a header row and one example per row:

========  =====================================  ======================================
role      column names accepted (in any case)    value
========  =====================================  ======================================
id        id, example_id, example                unique per row
group     group, protected_group, identity       the protected group
score     score, prob, probability, proba        a finite number
template  template, template_id                  optional: the counterfactual template
label     label, gold, y, gold_label, y_true     optional: the gold label, 0 or 1
========  =====================================  ======================================

Other columns are ignored.  ``id_col=`` and the like name a column explicitly.
:func:`read_scores_csv` streams the rows with :mod:`csv`, checks every cell and names
the file, the line and the column of the first bad one; :meth:`ScoresTable.metric`
computes a registry metric (:func:`~embdebias.fairness.fairness_metric`) on them.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "scores.csv"
>>> _ = path.write_text("id,group,score,label\\n1,f,0.9,1\\n2,f,0.2,0\\n3,m,0.4,1\\n4,m,0.7,0\\n")
>>> table = read_scores_csv(path)
>>> table.groups.tolist(), table.scores.tolist(), table.labels.tolist()
(['f', 'f', 'm', 'm'], [0.9, 0.2, 0.4, 0.7], [1, 0, 1, 0])
>>> table.metric("tpr_gap").value  # TPR: f 1/1, m 0/1
1.0
"""

from __future__ import annotations

import csv
import math
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from .._files import check_unicode_errors, open_regular
from ..errors import FairnessInputError, quote
from .registry import fairness_metric, get_metric

#: Accepted names of each column, compared after :func:`_norm` (lower case, ``_`` for
#: spaces and hyphens); the first three are required.
COLUMNS: dict[str, tuple[str, ...]] = {
    "id": ("id", "example_id", "example", "exampleid"),
    "group": ("group", "protected_group", "identity", "group_id"),
    "score": ("score", "prob", "probability", "proba"),
    "template": ("template", "template_id", "templateid"),
    "label": ("label", "gold", "y", "gold_label", "y_true", "true_label"),
}
REQUIRED = ("id", "group", "score")
_LABELS = {"0": 0, "1": 1, "0.0": 0, "1.0": 1, "false": 0, "true": 1}


#: A score as a decimal number in ASCII: float() also takes "0_5" (as 5.0), non-ASCII digits and
#: surrounding white space.  NaN and infinity match, to be reported as not finite.
_DECIMAL = re.compile(r"[+-]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|inf(?:inity)?)",
                      re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _norm(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


@dataclass(frozen=True)
class ScoresTable:
    """The examples of a scores file, as the arrays the fairness metrics take.

    Attributes
    ----------
    path : str
        The file read.
    ids, groups : ndarray of str, shape (n,)
        Example id and protected group of each row.
    scores : ndarray of float64, shape (n,)
    templates : ndarray of str, shape (n,), or None
        Counterfactual template of each row, when the file has a template column.
    labels : ndarray of int8, shape (n,), or None
        Gold labels (0/1), when the file has a label column.
    lines : ndarray of int, shape (n,)
        Line of the file each example was read from (1-based, as an editor numbers them).
    columns : dict
        ``{role: column name as written in the header}`` for the columns used.
    header : tuple of str
        Every column name of the header.
    """

    path: str
    ids: np.ndarray
    groups: np.ndarray
    scores: np.ndarray
    templates: np.ndarray | None
    labels: np.ndarray | None
    lines: np.ndarray
    columns: dict
    header: tuple = ()

    def __len__(self) -> int:
        return int(self.scores.shape[0])

    def group_counts(self) -> dict:
        """``{group: number of examples}``, groups sorted."""
        names, counts = np.unique(self.groups, return_counts=True)
        return dict(zip(names.tolist(), counts.tolist(), strict=True))

    def metric(self, name: str, **kwargs):
        """Compute the registry metric ``name`` on the file's examples.

        Parameters
        ----------
        name : str
            A name of :func:`~embdebias.fairness.available_metrics` (or an alias).
        **kwargs
            ``background``, ``group_order``, ``threshold``, ``true_class``, as
            :func:`~embdebias.fairness.fairness_metric` takes them.

        Returns
        -------
        FairnessResult or VectorResult

        Raises
        ------
        FairnessInputError
            What :func:`~embdebias.fairness.fairness_metric` raises, with the file and
            the metric in front; a metric that needs a column the file lacks.
        """
        spec = get_metric(name)
        _check_columns(self.path, self.header, {role: role in self.columns for role in ("template", "label")},
                       [spec.name])
        self._check_true_class(spec, kwargs.get("true_class"))
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # huge scores: the library's error says so
                return fairness_metric(spec.name, self.scores, self.groups, templates=self.templates,
                                       labels=self.labels, **kwargs)
        except FairnessInputError as exc:
            what = "" if str(exc).startswith(spec.name) else f"{spec.name}: "
            raise FairnessInputError(f"{self.path}: {what}{exc}") from None

    def _check_true_class(self, spec, true_class) -> None:
        """With ``true_class``, every group keeps examples of that gold label."""
        if true_class not in (0, 1) or not spec.true_class or self.labels is None:
            return  # fairness_metric explains what is wrong
        kept = set(self.groups[self.labels == true_class].tolist())
        lost = [g for g in self.group_counts() if g not in kept]
        if lost:
            raise FairnessInputError(
                f"{self.path}: {spec.name} with true class {true_class}: group {lost[0]!r} has no "
                f"examples (none of its rows has label {true_class})")


def _check_columns(path, header: list[str], present: dict, metrics: Sequence[str]) -> None:
    """Every metric in ``metrics`` finds the template and label columns it needs."""
    for name in metrics:
        spec = get_metric(name)
        if spec.form == "counterfactual" and not present["template"]:
            raise FairnessInputError(
                f"{path}: {spec.name} is a counterfactual metric and needs a template column "
                f"({_names('template')}; or --template-col), but the columns are {_listing(header)}")
        if spec.needs_labels and not present["label"]:
            raise FairnessInputError(
                f"{path}: {spec.name} needs gold labels, but there is no label column "
                f"({_names('label')}; or --label-col) among {_listing(header)}")


def _names(role: str) -> str:
    return ", ".join(COLUMNS[role])


def _listing(header: Sequence[str], most: int = 12) -> str:
    shown = ", ".join(quote(h, 30) for h in header[:most])
    return (shown + (f" and {len(header) - most} more" if len(header) > most else "")) or "none"


def _find_column(path, header: list[str], role: str, given: str | None) -> int | None:
    """Index of the column of ``role`` in ``header``: the one named ``given``, else an alias."""
    keys = [_norm(h) for h in header]
    wanted = (_norm(given),) if given is not None else COLUMNS[role]
    found = [i for i, k in enumerate(keys) if k in wanted]
    if len(found) > 1:
        names = " and ".join(quote(header[i], 30) for i in found)
        raise FairnessInputError(
            f"{path}: columns {names} could both be the {role} column; "
            f"name one with --{role}-col")
    if found:
        return found[0]
    if given is not None:
        raise FairnessInputError(f"{path}: no {role} column {quote(given, 30)}; the columns are {_listing(header)}")
    if role in REQUIRED:
        raise FairnessInputError(
            f"{path}: no {role} column ({_names(role)}; or --{role}-col); "
            f"the columns are {_listing(header)}")
    return None


def _header(reader, path) -> list[str]:
    """The first row that is not blank, stripped."""
    for row in reader:
        if row:
            return [h.strip() for h in row]
    raise FairnessInputError(f"{path}: empty file; expected a header row naming the columns "
                             f"({', '.join(REQUIRED)}, optional template, label)")


def _column_index(path, header: list[str], given: dict) -> dict:
    """``{role: column index}`` of the roles found, each column used once."""
    index = {role: i for role in COLUMNS
             if (i := _find_column(path, header, role, given[role])) is not None}
    roles: dict[int, str] = {}
    for role, i in index.items():
        if i in roles:
            raise FairnessInputError(f"{path}: column {quote(header[i], 30)} cannot be both the "
                                     f"{roles[i]} and the {role} column")
        roles[i] = role
    return index


def _decoded_lines(fh, path, unicode_errors: str) -> Iterator[str]:
    """The lines of a binary file as text, a leading UTF-8 BOM removed."""
    for number, raw in enumerate(fh, 1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            yield raw.decode("utf-8", unicode_errors)
        except UnicodeDecodeError as exc:
            raise FairnessInputError(
                f"{path} (line {number}): not UTF-8 text ({exc.reason} at byte {exc.start} of "
                "the line); --unicode-errors ignore or replace accepts it") from None


class _Columns:
    """Reads the cells of one row: the columns of each role, checked values."""

    def __init__(self, path, header: list[str], index: dict):
        self.path, self.header, self.index = path, header, index
        self.width = len(header)

    def where(self, line: int, role: str) -> str:
        return f"{self.path} (line {line}, column {quote(self.header[self.index[role]], 30)})"

    def text(self, row: list[str], line: int, role: str) -> str:
        value = row[self.index[role]].strip()
        if not value:
            raise FairnessInputError(f"{self.where(line, role)}: empty {role}")
        if _CONTROL.search(value):
            raise FairnessInputError(f"{self.where(line, role)}: {role} {quote(value)} holds a control "
                                     f"character (binary data?)")
        return value

    def score(self, row: list[str], line: int) -> float:
        cell = self.text(row, line, "score")
        try:
            if not _DECIMAL.fullmatch(cell):
                raise ValueError(cell)
            value = float(cell)
        except ValueError:
            raise FairnessInputError(
                f"{self.where(line, 'score')}: score {quote(cell)} is not a number") from None
        if not math.isfinite(value):
            raise FairnessInputError(f"{self.where(line, 'score')}: score {quote(cell)} is not finite")
        return value

    def label(self, row: list[str], line: int) -> int:
        cell = self.text(row, line, "label")
        if cell.lower() not in _LABELS:
            raise FairnessInputError(
                f"{self.where(line, 'label')}: label {quote(cell)} is not a gold label (0 or 1)")
        return _LABELS[cell.lower()]


def _read_rows(reader, columns: _Columns, path) -> dict:
    out = {"ids": [], "groups": [], "scores": [], "templates": [], "labels": [], "lines": []}
    seen: dict[str, int] = {}
    for row in reader:
        line = reader.line_num
        if not row:  # a blank line
            continue
        if len(row) != columns.width:
            raise FairnessInputError(f"{path} (line {line}): {len(row)} fields, but the header has "
                                     f"{columns.width} ({_listing(columns.header)})")
        example = columns.text(row, line, "id")
        if example in seen:
            raise FairnessInputError(f"{columns.where(line, 'id')}: duplicate example id "
                                     f"{quote(example)} (first on line {seen[example]})")
        seen[example] = line
        out["ids"].append(example)
        out["groups"].append(columns.text(row, line, "group"))
        out["scores"].append(columns.score(row, line))
        if "template" in columns.index:
            out["templates"].append(columns.text(row, line, "template"))
        if "label" in columns.index:
            out["labels"].append(columns.label(row, line))
        out["lines"].append(line)
    return out


def read_scores_csv(path, *, id_col: str | None = None, group_col: str | None = None,
                    score_col: str | None = None, template_col: str | None = None,
                    label_col: str | None = None, unicode_errors: str = "strict",
                    metrics: Sequence[str] = ()) -> ScoresTable:
    """Read a classifier's scores from a CSV file with a header row.

    Parameters
    ----------
    path : str or path-like
        UTF-8 CSV file (a byte order mark is skipped), comma-separated, quoted as
        :mod:`csv` reads it (``strict``: a quote left open is an error).  Blank lines
        are skipped.
    id_col, group_col, score_col, template_col, label_col : str, optional
        Name of the column of each role (case-insensitive); by default the column
        whose name is one of :data:`COLUMNS`.  Template and label are optional.
    unicode_errors : {"strict", "ignore", "replace"}
        Undecodable UTF-8: an error naming the line (``"strict"``), dropped
        (``"ignore"``) or U+FFFD (``"replace"``).
    metrics : sequence of str, optional
        Registry metrics to be computed: a counterfactual one without a template
        column, or one that needs labels without a label column, is an error before
        any row is read.

    Returns
    -------
    ScoresTable

    Raises
    ------
    FairnessInputError
        The file is empty or has only a header; a column is missing or ambiguous
        (the message lists the columns); a row with another number of fields than the
        header, an empty cell, a score that is not a finite number, a label that is
        not 0/1 or a duplicate example id (the message names the line and column);
        undecodable UTF-8 with ``unicode_errors="strict"``; an unknown metric.
    OSError
        The file cannot be opened.
    """
    path = os.fspath(path)
    unicode_errors = check_unicode_errors(unicode_errors)
    given = {"id": id_col, "group": group_col, "score": score_col, "template": template_col,
             "label": label_col}
    with open_regular(path, FairnessInputError, "a scores file") as fh:
        reader = csv.reader(_decoded_lines(fh, path, unicode_errors), strict=True)
        try:
            header = _header(reader, path)
            index = _column_index(path, header, given)
            _check_columns(path, header, {r: r in index for r in ("template", "label")}, metrics)
            data = _read_rows(reader, _Columns(path, header, index), path)
        except csv.Error as exc:
            raise FairnessInputError(f"{path} (line {reader.line_num}): not valid CSV ({exc})") from None
    if not data["ids"]:
        raise FairnessInputError(f"{path}: no examples, only a header row")
    return ScoresTable(
        path=path, ids=np.array(data["ids"], dtype=object), groups=np.array(data["groups"], dtype=object),
        scores=np.array(data["scores"], dtype=np.float64),
        templates=np.array(data["templates"], dtype=object) if "template" in index else None,
        labels=np.array(data["labels"], dtype=np.int8) if "label" in index else None,
        lines=np.array(data["lines"], dtype=np.int64),
        columns={role: header[i] for role, i in index.items()}, header=tuple(header))


# --------------------------------------------------------------------------- reports
#: How many templates the text report lists (the JSON lists every one).
SHOW_TEMPLATES = 20
#: The summary line names this many groups (with their counts); --json lists all.
SHOW_GROUPS = 20


def _used(table: ScoresTable, true_class: int | None) -> int:
    """Number of examples a metric uses (those of the true class for a "(TC)" variant)."""
    if true_class is None or table.labels is None:
        return len(table)
    return int(np.count_nonzero(table.labels == true_class))


def audit_dict(table: ScoresTable, results: dict, *, true_class: int | None = None) -> dict:
    """JSON-friendly report of metrics computed on a scores file.

    Parameters
    ----------
    table : ScoresTable
        The file the metrics were computed on.
    results : dict
        ``{registry name: FairnessResult or VectorResult}``.
    true_class : {0, 1}, optional
        The ``true_class`` the metrics were computed with.

    Returns
    -------
    dict
        ``file``, ``n_examples``, ``groups`` (``{group: count}``), ``n_templates``
        (None without a template column), ``columns`` and ``metrics``: for each
        metric its ``to_dict()`` with ``title``, ``description`` and ``n_examples``.
    """
    metrics = []
    for name, result in results.items():
        spec = get_metric(name)
        metrics.append({"title": spec.title, "description": spec.describe(),
                        "n_examples": _used(table, true_class), "true_class": true_class,
                        **result.to_dict()})
    n_templates = None if table.templates is None else len(set(table.templates.tolist()))
    return {"file": table.path, "n_examples": len(table), "groups": table.group_counts(),
            "n_templates": n_templates, "columns": table.columns, "metrics": metrics}


def _number(value) -> str:
    return f"{float(value):.6g}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    return ["  " + "  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *rows]]


def _group_columns(record: dict) -> list[tuple[str, dict]]:
    """``(title, {group: value})`` of the group's own value (VBCM) or term (BCM), phi, phi(background)."""
    if "per_group" in record:
        own = ("value", record["per_group"])
    else:
        own = ("d", [r for r in record["parts"] if "group" in r])
    columns = [own, ("phi", record["group_scores"]), ("phi(background)", record["background_scores"])]
    return [(name, {r["group"]: r["value"] for r in recs}) for name, recs in columns if recs]


def _group_lines(record: dict) -> list[str]:
    """The per-group table of a metric's record."""
    columns = _group_columns(record)
    if not columns:
        return []
    groups = list(dict.fromkeys(g for _, values in columns for g in values))
    rows = [[g, *(_number(values[g]) if g in values else "" for _, values in columns)] for g in groups]
    return _table(["group", *(name for name, _ in columns)], rows)


def _detail_lines(record: dict) -> list[str]:
    lines = _group_lines(record)
    pairs = [r for r in record.get("parts", []) if "groups" in r]
    if pairs:
        lines += _table(["pair", "d"], [[" vs ".join(map(str, r["groups"])), _number(r["value"])]
                                        for r in pairs])
    templates = record.get("per_template", [])
    if templates:
        shown = templates[:SHOW_TEMPLATES]
        title = "template" if len(shown) == len(templates) else \
            f"template (first {len(shown)} of {len(templates)}; --json lists all)"
        lines += _table([title, "value"], [[r["template"], _number(r["value"])] for r in shown])
    return lines


def audit_text(report: dict) -> str:
    """The report of :func:`audit_dict` as plain-text tables.

    Parameters
    ----------
    report : dict
        What :func:`audit_dict` returns.

    Returns
    -------
    str
        A summary line of the file, then for each metric its value, definition,
        number of examples and the per-group, per-pair and per-template details the
        result has.
    """
    counts = list(report["groups"].items())
    groups = ", ".join(f"{g} {n}" for g, n in counts[:SHOW_GROUPS]) + (
        f", ... {len(counts) - SHOW_GROUPS:,} more (--json lists all)" if len(counts) > SHOW_GROUPS else "")
    extra = "" if report["n_templates"] is None else f", {report['n_templates']} templates"
    lines = [(f"{report['file']}: {report['n_examples']} examples, {len(report['groups'])} groups "
              f"({groups}){extra}")]
    for record in report["metrics"]:
        value = "one value per group" if "per_group" in record else _number(record["value"])
        lines += ["", f"{record['metric']} = {value}", f"  {record['description']}"]
        tc = "" if record["true_class"] is None else f" (true class {record['true_class']})"
        norm = "" if record.get("normalizer") is None else f", normalizer {_number(record['normalizer'])}"
        lines.append(f"  {record['n_examples']} examples{tc}{norm}")
        lines += _detail_lines(record)
    return "\n".join(lines)
