"""A :class:`~embdebias.report.model.Report` as JSON, with its bulk arrays in Parquet beside it.

The JSON holds the summary a reader needs: every cell (``values`` and ``intervals`` per
row), the comparisons, the verdict and every metric's result with its per-word details.
A result field that is a long list (:data:`BULK_MIN_ITEMS` items or more, e.g. indirect
bias's tens of thousands of word pairs), or a dict of lists that long together (residual
bias's classified words per gender), goes to a Parquet file instead, one column per
``metric/unit/field`` (``metric/unit/field/key`` for a dict) and one row per (embedding,
item); the JSON names the file (``"bulk"``) and puts ``{"bulk": column, "length": n}``
(for a dict: ``{"bulk": {key: column}, "length": {key: n}}``) in the field's place.
:func:`from_json` reads both back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from .._atomic import atomic_file
from .._gc import fewer_collections
from .._outdir import name_problem
from ..errors import EmbdebiasError
from ..metrics.base import to_builtin
from .model import Cell, Report

VERSION = 3
#: A result's list field with at least this many items goes to the Parquet file.
BULK_MIN_ITEMS = 1000
#: Fields of every result (:class:`~embdebias.metrics.MetricResult`) the report itself reads: never bulk.
_SUMMARY_FIELDS = ("missing", "lowercased")


def _row(report: Report, key) -> dict:
    m, t, s = key
    per = report.cells[key]
    row = {"metric": m, "test": t, "statistic": s, "values": {e: c.value for e, c in per.items()}}
    intervals = {e: [c.ci_low, c.ci_high] for e, c in per.items() if c.interval is not None}
    if intervals:
        row["intervals"] = intervals
    return row


def _is_bulk(value, field: str = "") -> bool:
    """A long list, or a dict of lists that are long together."""
    if field in _SUMMARY_FIELDS:
        return False
    if isinstance(value, dict):
        return bool(value) and all(isinstance(v, list) for v in value.values()) and \
            sum(len(v) for v in value.values()) >= BULK_MIN_ITEMS
    return isinstance(value, list) and len(value) >= BULK_MIN_ITEMS


def _marker(column: str, value) -> dict:
    if isinstance(value, dict):
        return {"bulk": {k: f"{column}/{k}" for k in value}, "length": {k: len(v) for k, v in value.items()}}
    return {"bulk": column, "length": len(value)}


def _split_bulk(details: dict) -> dict:
    """``details`` with every bulk field replaced by its marker."""
    return {emb: {key: {f: (_marker(f"{key}/{f}", v) if _is_bulk(v, f) else v) for f, v in res.items()}
                  for key, res in results.items()}
            for emb, results in details.items()}


def _columns(column: str, value) -> dict:
    return {f"{column}/{k}": v for k, v in value.items()} if isinstance(value, dict) else {column: value}


def to_dict(report: Report, *, bulk: str | None = None) -> dict:
    """A JSON-serialisable dict; with ``bulk`` (a file name), the long list fields are left
    out and the dict names that file (write it with :func:`bulk_table`)."""
    with fewer_collections():  # hundreds of thousands of small lists: see embdebias._gc
        return _to_dict(report, bulk, to_builtin(report.details))


def _to_dict(report: Report, bulk: str | None, details: dict) -> dict:
    """:func:`to_dict` with the details already converted (``to_builtin(report.details)``)."""
    out = {"version": VERSION, "embeddings": list(report.embeddings),
           "rows": [_row(report, key) for key in report.rows],
           "details": None,  # converted by the caller: its place kept, its many items not converted again
           "params": report.params, "data": report.data, "legends": report.legends, "labels": report.labels,
           "failures": report.failures, "comparisons": report.comparisons, "aggregates": report.aggregates,
           "verdict": report.verdict(),
           "agreement": report.agreement(), "trust": report.trust,
           **({"certificates": report.certificates} if report.certificates else {})}
    if bulk:
        out["bulk"] = bulk
    out = to_builtin(out)
    out["details"] = _split_bulk(details) if bulk else details
    return out


def bulk_columns(report: Report, details: dict | None = None) -> dict:
    """``{embedding: {column: list}}`` of the bulk fields of the results (``details``: the report's
    details already converted by ``to_builtin``, if the caller has them)."""
    details = to_builtin(report.details) if details is None else details
    return {emb: {c: lst for key, res in results.items() for f, v in res.items() if _is_bulk(v, f)
                  for c, lst in _columns(f"{key}/{f}", v).items()}
            for emb, results in details.items()}


def bulk_table(report: Report, details: dict | None = None):
    """The long list fields as a pyarrow Table (None when there are none): one row per
    (embedding, item), columns ``embedding``, ``item`` and one per ``metric/unit/field``
    (``details`` as for :func:`bulk_columns`)."""
    import pyarrow as pa

    columns = {emb: per for emb, per in bulk_columns(report, details).items() if per}
    if not columns:
        return None
    names = sorted({c for per in columns.values() for c in per})
    tables = []
    for emb, per in columns.items():
        n = max(len(v) for v in per.values())
        data = {"embedding": pa.array([emb] * n, pa.string()), "item": pa.array(range(n), pa.int64())}
        for c in names:
            values = per.get(c, [])
            data[c] = values + [None] * (n - len(values))
        tables.append(pa.table(data))
    return pa.concat_tables(tables, promote_options="default")


def _check(data) -> None:
    if not isinstance(data, Mapping) or "embeddings" not in data or "rows" not in data:
        raise EmbdebiasError("not an embdebias report: expected a JSON object with 'embeddings' and 'rows'")


def _rows_into(report: Report, rows) -> None:
    intervals_by_key: dict = {}
    for row in rows:
        key = (row["metric"], row["test"], row["statistic"])
        stat = key[2]
        # version 2 kept intervals as sibling rows "<statistic>_ci_low" / "_ci_high"
        for side, suffix in ((0, "_ci_low"), (1, "_ci_high")):
            if stat.endswith(suffix) and (key[0], key[1], stat[:-len(suffix)]) in report.cells:
                base = (key[0], key[1], stat[:-len(suffix)])
                for e, v in row["values"].items():
                    intervals_by_key.setdefault(base, {}).setdefault(e, [None, None])[side] = v
                break
        else:
            report.rows.append(key)
            report.cells[key] = {e: Cell(v) for e, v in dict(row["values"]).items()}
            for e, (lo, hi) in (row.get("intervals") or {}).items():
                intervals_by_key.setdefault(key, {})[e] = [lo, hi]
    for key, per in intervals_by_key.items():
        for e, (lo, hi) in per.items():
            if e in report.cells[key]:
                report.cells[key][e] = report.cells[key][e]._replace(ci_low=lo, ci_high=hi)


def from_dict(data: Mapping, bulk=None) -> Report:
    """Rebuild a report from :func:`to_dict`'s output (versions 2 and 3); ``bulk``: the
    path of the Parquet file the dict names (its long list fields stay markers without it)."""
    _check(data)
    try:
        report = Report(list(data["embeddings"]), details=dict(data.get("details", {})),
                        params=dict(data.get("params", {})), data=dict(data.get("data", {})),
                        legends=dict(data.get("legends", {})), labels=dict(data.get("labels", {})),
                        failures=list(data.get("failures", [])), comparisons=list(data.get("comparisons", [])),
                        aggregates=list(data.get("aggregates", [])), trust=dict(data.get("trust") or {}),
                        certificates=dict(data.get("certificates") or {}))
        _rows_into(report, data["rows"])
    except (KeyError, TypeError, ValueError) as exc:
        raise EmbdebiasError(f"not an embdebias report: missing or malformed {exc}") from None
    if bulk is not None:
        _restore_bulk(report, bulk)
    return report


def _restore_bulk(report: Report, path) -> None:
    """Put the Parquet file's columns back in the results' marked fields."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (OSError, ValueError) as exc:
        raise EmbdebiasError(f"{path}: cannot read the report's bulk arrays: {exc}") from None
    for emb, results in report.details.items():
        rows = table.filter(pc.equal(table["embedding"], emb))

        def column(name: str, length: int, emb=emb, rows=rows) -> list:
            if name not in rows.column_names:
                raise EmbdebiasError(f"{path}: no column {name!r} for embedding {emb!r}")
            return rows[name].to_pylist()[:length]

        for res in results.values():
            for f, v in list(res.items()):
                if not (isinstance(v, dict) and set(v) == {"bulk", "length"}):
                    continue
                res[f] = ({k: column(c, v["length"][k]) for k, c in v["bulk"].items()}
                          if isinstance(v["bulk"], dict) else column(v["bulk"], v["length"]))


def to_json(report: Report, path, *, indent: int = 2, inputs=()) -> None:
    """Write ``path`` (the JSON) and, when the report has long list fields, ``path`` with the
    suffix ``.parquet`` beside it; each atomically, the Parquet file first, so that a JSON
    file never names a file not yet written."""
    path = Path(path)
    with fewer_collections():  # hundreds of thousands of small lists: see embdebias._gc
        details = to_builtin(report.details)  # once, for the Parquet file and the JSON
        table = bulk_table(report, details)
    bulk = None
    if table is not None:
        import pyarrow.parquet as pq

        bulk_path = path.with_suffix(".parquet")
        with atomic_file(bulk_path, inputs=inputs) as tmp:
            pq.write_table(table, tmp)
        bulk = bulk_path.name
    with atomic_file(path, inputs=inputs) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(_to_dict(report, bulk, details), fh, indent=indent, allow_nan=False)
            fh.write("\n")


def from_json(path) -> Report:
    """Read a report written by :func:`to_json` (and the Parquet file it names)."""
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        try:
            data = json.load(fh)
        except json.JSONDecodeError as exc:
            raise EmbdebiasError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
    _check(data)
    bulk = data.get("bulk")
    problem = name_problem(bulk) if bulk else None
    if problem is not None:  # a file beside the JSON, never a path out of its directory
        raise EmbdebiasError(f"{path}: bulk: expected the name of the Parquet file beside it ({problem})")
    return from_dict(data, bulk=None if not bulk else path.parent / bulk)
