"""The methods side by side (issue 22): one row per column of a report, one column per measure.

:func:`comparison_table` gives, for the original and every debiased column, the residual bias
(clustering, SVM, neighbours), direct bias on the original and on the re-fitted direction,
mean |WEAT d|, BAT, the extrinsic gap and the quality kept (WordSim353, SimLex-999, analogy),
each with its interval and its paired change from the first column. :func:`unrecoverable_line`
is the verdict's line naming the methods after which the attribute is no longer recoverable
beyond the noise. The numbers are the report's own cells and aggregates
(:attr:`~embdebias.report.model.Report.aggregates`); nothing is recomputed here.

The residual tests' intervals are analytic (they hold the words fixed) and have no paired
resampling: their change is the difference of the values, marked as such.
"""

from __future__ import annotations

from typing import NamedTuple

from ..metrics.base import chance_level
from .model import metric_of
from .summary import mark_text


class Measure(NamedTuple):
    """One column of the comparison table: a report row (``test`` None: the metric's first
    test in the report) or an aggregate (``metric`` "aggregate", ``statistic`` its name)."""

    label: str
    metric: str
    test: str | None
    statistic: str
    fairer: str


#: The comparison table's columns, in order.
MEASURES = (
    Measure("clustering", "residual", None, "cluster_accuracy", "chance"),
    Measure("SVM", "residual", None, "classification_accuracy", "chance"),
    Measure("neighbour r", "residual", None, "neighbour_correlation", "0"),
    Measure("DirectBias (original direction)", "direct_bias", None, "direct_bias_original", "lower"),
    Measure("DirectBias (re-fitted direction)", "direct_bias", None, "direct_bias_own", "lower"),
    Measure("mean \\|WEAT d\\|", "aggregate", None, "weat_mean_abs_d", "lower"),
    Measure("BAT stereotype", "bat", "all", "stereotype", "lower"),
    Measure("extrinsic mean \\|gap\\|", "aggregate", None, "extrinsic_mean_abs_gap", "lower"),
    Measure("WordSim353", "similarity", "wordsim353", "spearman", "higher"),
    Measure("SimLex-999", "similarity", "simlex999", "spearman", "higher"),
    Measure("analogy", "analogy", None, "accuracy", "higher"),
)


def _test(report, measure: Measure) -> str | None:
    if measure.test is not None:
        return measure.test
    return next((t for m, t, s in report.rows if m == measure.metric and s == measure.statistic), None)


def measure_entry(report, measure: Measure, embedding: str) -> dict | None:
    """``{"value", "ci_low", "ci_high", "change", "change_ci_low", "change_ci_high", "outcome",
    "paired"}`` of ``measure`` in ``embedding`` (None: not in the report or not scored)."""
    if measure.metric == "aggregate":
        entry = report.aggregate(measure.statistic, embedding)
        if entry is None or entry.get("value") is None:
            return None
        return {**entry, "paired": True}
    test = _test(report, measure)
    key = (measure.metric, test, measure.statistic)
    cell = report.cells.get(key, {}).get(embedding)
    if cell is None or cell.value is None:
        return None
    out = {"value": cell.value, "ci_low": cell.ci_low, "ci_high": cell.ci_high, "paired": False}
    comp = next((c for c in report.comparisons if (c["embedding"], c["metric"], c["test"], c["statistic"])
                 == (embedding, *key)), None)
    if comp is not None:
        out.update(change=comp["change"], change_ci_low=comp["ci_low"], change_ci_high=comp["ci_high"],
                   outcome=comp["outcome"], share=comp.get("share"), paired=True)
    elif embedding != report.embeddings[0]:
        ref = report.cells[key].get(report.embeddings[0])
        if ref is not None and ref.value is not None:
            out["change"] = cell.value - ref.value  # of the value, not the bias: see the note
    return out


def _kind(measure: Measure) -> str:
    return "quality" if measure.metric != "aggregate" and metric_of(measure.metric).kind == "quality" else "bias"


def _digits(*values) -> int:
    """3 decimals, 4 for a cell whose numbers are all below 0.01 (the extrinsic gaps)."""
    largest = max((abs(v) for v in values if v is not None), default=0.0)
    return 4 if 0 < largest < 0.01 else 3


def shown_change(entry: dict, measure: Measure) -> tuple:
    """``(change, low, high)`` as the table shows it: a bias's change of its magnitude (the
    comparison's own), a quality number's change of the number (the comparison's, negated)."""
    change, lo, hi = entry.get("change"), entry.get("change_ci_low"), entry.get("change_ci_high")
    if _kind(measure) != "quality" or not entry["paired"]:
        return change, lo, hi
    return -change, None if hi is None else -hi, None if lo is None else -lo


def _cell_text(entry: dict | None, measure: Measure, first: bool) -> str:
    if entry is None:
        return "n/a"
    d = _digits(entry["value"], entry.get("ci_high"))
    text = f"{entry['value']:.{d}f}"
    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
        text += f" [{entry['ci_low']:.{d - 1}f}, {entry['ci_high']:.{d - 1}f}]"
    if first or entry.get("change") is None:
        return text
    if not entry["paired"]:
        return text + f"<br>Δ {entry['change']:+.{d}f} (values)"
    change, lo, hi = shown_change(entry, measure)
    interval = f" [{lo:+.{d - 1}f}, {hi:+.{d - 1}f}]" if lo is not None and hi is not None else ""
    mark = mark_text(entry, _kind(measure))  # in words: an arrow would read as the value's direction
    return text + f"<br>Δ {change:+.{d}f}{interval}" + (f" {mark}" if mark else "")


def comparison_measures(report) -> list[Measure]:
    """The measures of :data:`MEASURES` the report has for at least one column."""
    return [m for m in MEASURES if any(measure_entry(report, m, e) is not None for e in report.embeddings)]


def comparison_table(report) -> list[str]:
    """The comparison table: one row per column, one column per measure of :data:`MEASURES`.

    Parameters
    ----------
    report : Report
        An evaluation whose first column is the original.

    Returns
    -------
    list of str
        Markdown lines, then the note on how to read them (empty with fewer than two columns
        or none of the measures).
    """
    measures = comparison_measures(report)
    if len(report.embeddings) < 2 or not measures:
        return []
    ref = report.embeddings[0]
    chance = f"{chance_level(report):.2g}"
    lines = ["| column | " + " | ".join(m.label for m in measures) + " |",
             "| --- | " + " | ".join("---:" for _ in measures) + " |",
             "| fairer / better | " + " | ".join(chance if m.fairer == "chance" else m.fairer for m in measures) + " |"]
    for emb in report.embeddings:
        cells = [_cell_text(measure_entry(report, m, emb), m, emb == ref) for m in measures]
        lines.append(f"| {emb} | " + " | ".join(cells) + " |")
    level = report.params.get("bootstrap_level", 0.95)
    return lines + ["", f"Each cell: the value and its {level:.0%} interval (the tables below say how each is "
                        f"made), then Δ, the paired change from '{ref}' and its interval: for a bias, the change "
                        f"of its magnitude (negative: fairer); for quality, of the number. A word marks a change "
                        f"beyond the noise: fairer / less fair (at least the minimum share of the original's "
                        f"bias, given), small change (less), better / worse (quality). "
                        f"Residual bias (clustering, SVM, neighbour r) has analytic intervals "
                        f"over fixed words and no paired resampling: its Δ is the difference of the values. "
                        f"Mean |WEAT d| and the extrinsic |gap| are means over the tests of each one's "
                        f"magnitude; an absolute value near 0 can sit below its interval (a resample's "
                        f"magnitude is rarely smaller)."]


def unrecoverable_line(report, attribute: str = "gender") -> str | None:
    """The verdict's line: the columns after which ``attribute`` is no longer recoverable beyond
    the noise (the residual tests' own verdict), or that there are none, with the lowest numbers."""
    residual = next((m for m in report.metrics() if hasattr(metric_of(m), "recoverable_text")), None)
    if residual is None or len(report.embeddings) < 2:
        return None
    entries = {e: v for e in report.embeddings[1:] if (v := metric_of(residual).verdict(report, e)) is not None}
    if not entries:
        return None
    gone = [e for e, v in entries.items() if not v["recoverable"]]
    chance = f"{chance_level(report):.2g}"
    if gone:
        return (f"- **{attribute.capitalize()} no longer recoverable beyond the noise** (clustering and SVM "
                f"accuracy intervals reach chance, {chance}) after: {', '.join(gone)}; still recoverable after: "
                f"{', '.join(e for e in entries if e not in gone) or 'none'}.")
    lowest = min(entries, key=lambda e: (entries[e].get("cluster_accuracy") or 1.0))
    low = entries[lowest]
    return (f"- **{attribute.capitalize()} is still recoverable after every method** ({len(entries)} of "
            f"{len(entries)}): no method brings the clustering and SVM accuracy intervals down to chance "
            f"({chance}); the lowest, '{lowest}', still has clustering {_two(low.get('cluster_accuracy'))} and SVM "
            f"{_two(low.get('classification_accuracy'))}.")


def _two(value) -> str:
    return "n/a" if value is None else f"{value:.2f}"
