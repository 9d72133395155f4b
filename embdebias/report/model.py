"""The report of an evaluation: one row per (metric, test, statistic), one column per
embedding, each cell a value with its interval, plus every metric's full result, the
parameters, the data and how to read each metric.

The report knows no metric by name: what is particular to one (how a p-value cell folds
its standard error, a verdict line, a note under its table) comes from that metric's
hooks (:class:`~embdebias.metrics.base.Metric`), looked up in the registry by name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from .._providers import provided
from ..errors import EmbdebiasError


class Cell(NamedTuple):
    """One cell: the value and its interval (None when there is none)."""

    value: float | int | None
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def interval(self) -> tuple[float, float] | None:
        return None if self.ci_low is None or self.ci_high is None else (self.ci_low, self.ci_high)


def _number(value):
    """A cell's number: NaN and infinity become None, numpy scalars Python numbers."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if hasattr(value, "item") and not isinstance(value, float):
        value = value.item()
        if isinstance(value, (bool, int)):
            return value
    value = float(value)
    return value if math.isfinite(value) else None


def metric_of(name: str):
    """The registered metric ``name`` for its report hooks; a plain one for a metric this
    installation does not have (a report read from a file)."""
    from ..metrics.base import METRICS, Metric

    if name in METRICS:
        return METRICS[name]
    plain = Metric()
    plain.name = plain.title = name
    return plain


@dataclass
class Report:
    """Scores of several embeddings, one row per (metric, test, statistic).

    Row keys are stable machine keys (``("weat", "gender_career_family",
    "effect_size")``); display labels live in :attr:`labels`.

    Attributes
    ----------
    embeddings : list of str
        Column names, in order.
    rows : list of (metric, test, statistic)
        Row keys, in order.
    cells : dict
        ``{(metric, test, statistic): {embedding: Cell}}``.
    details : dict
        ``{embedding: {"metric/unit": result.to_dict()}}``, with the out-of-vocabulary
        words of every set under ``"missing"``.
    params : dict
        The parameters of the run (``options``: each metric's).
    data : dict
        ``{metric: text}``: the lists and data set each metric used, their source and size.
    legends : dict
        ``{metric: text}``: what each metric measures and which way is fairer.
    labels : dict
        ``{metric: {statistic: display label}}``.
    failures : list of dict
        ``{"embedding", "metric", "unit", "reason"}`` of every unit not scored.
    comparisons : list of dict
        For every bias statistic of every column but the first (the reference):
        ``{"embedding", "reference", "metric", "test", "statistic", "reference_value",
        "value", "change", "ci_low", "ci_high", "outcome", "n_items"}``, where ``change``
        is the paired change of the bias magnitude (negative: fairer) and ``outcome`` is
        "improved", "worse", "small change" (beyond the noise but under the metric's minimum
        share of bias, :func:`~embdebias.evaluate.sized_outcome`) or "no significant change" (see
        :func:`~embdebias.metrics._resample.paired_change`); a bias row's ``share`` (with
        ``share_ci_low``, ``share_ci_high``) is the share of the reference's bias removed.
    aggregates : list of dict
        Means over a metric's tests (:data:`embdebias.evaluate.AGGREGATES`, e.g. the mean ``|WEAT d|``),
        one per column: ``{"embedding", "name", "label", "metric", "statistic", "tests",
        "value", "ci_low", "ci_high"}`` and, for every column but the first, the paired
        ``change``, ``change_ci_low``, ``change_ci_high``, ``outcome`` and ``n_items``.
    trust : dict
        How far to trust the numbers (:mod:`embdebias.metrics.trust`, issue 34): ``"sensitivity"``
        (the seed-word band of every word-set statistic), ``"consistency"`` (Cronbach's alpha across
        base pairs), ``"agreement"`` (Kendall's tau between metric families across the columns),
        ``"word_agreement"`` and ``"validity"``; empty when not computed.
    certificates : dict
        ``{column: certificate}`` of the linear methods of a run
        (:func:`~embdebias.debias.certificate.run_certificate`: ``edited``, ``normalized``,
        ``before``, ``n_words``, ``n_groups``, ``output``, ``guarded``; or ``{"error": why}``):
        whether each is linearly guarded on the attribute's labelled words.
    """

    embeddings: list[str]
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    cells: dict[tuple[str, str, str], dict[str, Cell]] = field(default_factory=dict)
    details: dict[str, dict[str, dict]] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    data: dict[str, str] = field(default_factory=dict)
    legends: dict[str, str] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    failures: list[dict] = field(default_factory=list)
    comparisons: list[dict] = field(default_factory=list)
    aggregates: list[dict] = field(default_factory=list)
    trust: dict = field(default_factory=dict)
    certificates: dict = field(default_factory=dict)

    # -- building --------------------------------------------------------------------
    def add(self, embedding: str, metric: str, test: str, statistic: str, value, ci_low=None,
            ci_high=None) -> None:
        """Set one cell; ``value`` may be a ``(value, ci_low, ci_high)`` triple."""
        if isinstance(value, tuple):
            value, ci_low, ci_high = value
        key = (metric, test, statistic)
        if key not in self.cells:
            self.rows.append(key)
            self.cells[key] = {}
        self.cells[key][embedding] = Cell(_number(value), _number(ci_low), _number(ci_high))

    def set_interval(self, embedding: str, metric: str, test: str, statistic: str, ci_low, ci_high) -> None:
        """Give an existing cell its interval."""
        cell = self.cells[(metric, test, statistic)][embedding]
        self.cells[(metric, test, statistic)][embedding] = cell._replace(ci_low=_number(ci_low),
                                                                         ci_high=_number(ci_high))

    @classmethod
    def combine(cls, reports) -> Report:
        """The columns of several reports side by side, in the order given.

        Rows are the union of the reports' rows in first-seen order; a cell a report
        does not have stays empty. Column names must be distinct.
        """
        reports = list(reports)
        if not reports:
            raise EmbdebiasError("Report.combine: no reports given")
        out = cls([], params=dict(reports[0].params))
        for rep in reports:
            clash = set(out.embeddings) & set(rep.embeddings)
            if clash:
                raise EmbdebiasError(f"Report.combine: column(s) {', '.join(sorted(clash))} in two reports")
            out.embeddings.extend(rep.embeddings)
            for key in rep.rows:
                if key not in out.cells:
                    out.rows.append(key)
                    out.cells[key] = {}
                out.cells[key].update(rep.cells[key])
            out.details.update(rep.details)
            out.failures.extend(rep.failures)
            out.comparisons.extend(rep.comparisons)
            out.aggregates.extend(rep.aggregates)
            out.certificates.update(rep.certificates)
            for mine, theirs in ((out.data, rep.data), (out.legends, rep.legends), (out.labels, rep.labels)):
                for k, v in theirs.items():
                    mine.setdefault(k, v)
        return out

    # -- access ----------------------------------------------------------------------
    @property
    def values(self) -> dict[tuple[str, str, str], dict[str, float | None]]:
        """``{(metric, test, statistic): {embedding: value}}`` (the cells without their intervals)."""
        return {key: {e: c.value for e, c in per.items()} for key, per in self.cells.items()}

    def cell(self, metric: str, test: str, statistic: str, embedding: str | None = None) -> Cell | None:
        """One cell, or None when the report has the row but not the column's cell.

        ``embedding`` may be omitted when there is only one column. Raises
        :class:`KeyError` for a row or column the report does not have.
        """
        if embedding is None:
            if len(self.embeddings) != 1:
                raise KeyError(f"the report has {len(self.embeddings)} embeddings; name one of "
                               f"{', '.join(self.embeddings)}")
            embedding = self.embeddings[0]
        if embedding not in self.embeddings:
            raise KeyError(f"no embedding {embedding!r} in the report; it has {', '.join(self.embeddings)}")
        key = (metric, test, statistic)
        if key not in self.cells:
            raise KeyError(f"no row {key!r} in the report")
        return self.cells[key].get(embedding)

    def value(self, metric: str, test: str, statistic: str, embedding: str | None = None):
        """One cell's value (None for an empty cell, a unit not scored); see :meth:`cell`."""
        cell = self.cell(metric, test, statistic, embedding)
        return None if cell is None else cell.value

    def interval(self, metric: str, test: str, statistic: str, embedding: str | None = None):
        """One cell's ``(ci_low, ci_high)``, or None without an interval; see :meth:`cell`."""
        cell = self.cell(metric, test, statistic, embedding)
        return None if cell is None else cell.interval

    @property
    def missing(self) -> dict[str, dict[str, dict[str, list[str]]]]:
        """``{embedding: {"metric/unit": {set: [out-of-vocabulary words]}}}`` (non-empty only)."""
        out: dict = {}
        for emb, results in self.details.items():
            for key, res in results.items():
                sets = {k: v for k, v in (res.get("missing") or {}).items() if v}
                if sets:
                    out.setdefault(emb, {})[key] = sets
        return out

    def aggregate(self, name: str, embedding: str) -> dict | None:
        """The aggregate ``name`` of ``embedding`` (see :attr:`aggregates`), or None."""
        return next((a for a in self.aggregates if a["name"] == name and a["embedding"] == embedding), None)

    def metrics(self) -> list[str]:
        """The metrics of the rows, in order."""
        return list(dict.fromkeys(m for m, _, _ in self.rows))

    def to_frame(self):
        """A pandas DataFrame, one row per (embedding, metric, test, statistic): ``value``,
        ``ci_low``, ``ci_high`` and the paired comparison with the first column, ``change``,
        ``change_ci_low``, ``change_ci_high``, ``outcome`` (empty for the first column and for
        statistics without one). Needs pandas (``pip install 'embdebias[pandas]'``)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Report.to_frame needs pandas: pip install 'embdebias[pandas]'") from None
        columns = ["embedding", "metric", "test", "statistic", "value", "ci_low", "ci_high", "change",
                   "change_ci_low", "change_ci_high", "outcome"]
        by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in self.comparisons}
        empty = {"change": None, "ci_low": None, "ci_high": None, "outcome": None}
        records = [(e, m, t, s, *(per.get(e) or Cell(None)),
                    *(by_key.get((e, m, t, s), empty)[k] for k in ("change", "ci_low", "ci_high", "outcome")))
                   for (m, t, s), per in self.cells.items() for e in self.embeddings]
        return pd.DataFrame.from_records(records, columns=columns)

    # -- the verdict -------------------------------------------------------------------
    def verdict(self) -> dict:
        """Per column compared with the reference: per metric, the statistics that improved
        significantly, did not change significantly, and got worse; computed from
        :attr:`comparisons`, never written by hand; plus each metric's own verdict entry
        (:meth:`~embdebias.metrics.base.Metric.verdict`)."""
        out: dict = {}
        for c in self.comparisons:
            per = out.setdefault(c["embedding"], {}).setdefault(
                c["metric"], {"improved": [], "small change": [], "no significant change": [], "worse": [],
                              "not comparable": []})
            per[c["outcome"]].append(f"{c['test']}/{c['statistic']}")
        for emb in self.embeddings[1:]:
            for name in self.metrics():
                entry = metric_of(name).verdict(self, emb)
                if entry is not None:
                    out.setdefault(emb, {})[name] = entry
        return out

    def agreement(self) -> dict | None:
        """Whether the intrinsic and extrinsic verdicts agree, and their rank correlation across
        the columns (see :mod:`embdebias.metrics.agreement`); None without both kinds."""
        from ..metrics.agreement import agreement

        extrinsic = [m for m in self.metrics() if metric_of(m).kind == "extrinsic"]
        bias = [c for c in self.comparisons if metric_of(c["metric"]).kind != "quality"]
        return agreement(bias, self.embeddings, extrinsic)

    # -- serialisation and display ----------------------------------------------------
    # The model imports no renderer: report/json.py and report/markdown.py import it, and
    # the package's __init__ provides their functions under these names (embdebias._providers).
    def to_dict(self, *, bulk: str | None = None) -> dict:
        """A JSON-serialisable dict (see :func:`embdebias.report.json.to_dict`)."""
        return provided("report to dict")(self, bulk=bulk)

    @classmethod
    def from_dict(cls, data, bulk=None) -> Report:
        """Rebuild a report from :meth:`to_dict`'s output (``bulk``: the Parquet file it names)."""
        return provided("report from dict")(data, bulk=bulk)

    def to_json(self, path, *, indent: int = 2, inputs=()) -> None:
        """Write the report as JSON to ``path`` and its bulk arrays beside it (Parquet), atomically."""
        provided("report to json")(self, path, indent=indent, inputs=inputs)

    @classmethod
    def from_json(cls, path) -> Report:
        return provided("report from json")(path)

    def to_markdown(self, *, digits: int = 3, missing: bool = True, summary: bool = True) -> str:
        """Markdown: with ``summary``, the first screen (sentences computed from the numbers and the
        summary table, :mod:`embdebias.report.summary`); the verdict, per metric its data, how
        to read it and a table (rows = tests x statistics, columns = embeddings); then the units not scored and, with
        ``missing=True``, the out-of-vocabulary words."""
        return provided("report to markdown")(self, digits=digits, missing=missing, summary=summary)

    def summary(self) -> str:
        """The first screen only: the opening answers and the summary table (Markdown), and where the
        rest is (:meth:`to_markdown`). What ``str(report)`` and ``repr(report)`` give."""
        return provided("report summary")(self)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()

    # -- notebooks: Jupyter shows a report as a table, as it shows a pandas DataFrame ----
    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_html_(self) -> str:
        """One HTML table (:func:`embdebias.report.markdown.to_html`)."""
        return provided("report to html")(self)
