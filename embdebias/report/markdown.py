"""A :class:`~embdebias.report.model.Report` as Markdown: the verdict, then per metric its
data, how to read it and a table (rows = tests x statistics, columns = embeddings); and, for
notebooks, the table alone in HTML (:func:`to_html`).

Metric-specific display comes from the metrics' hooks (``format_cell``, ``folded``,
``notes``, ``verdict_text``), never from their names.
"""

from __future__ import annotations

import math
from html import escape

from ..metrics.base import N_SCORED
from .model import metric_of


def to_markdown(report, *, digits: int = 3, missing: bool = True, summary: bool = True) -> str:
    """See :meth:`Report.to_markdown <embdebias.report.model.Report.to_markdown>`."""
    from .summary import first_screen
    from .trust import trust_lines

    parts = (first_screen(report) if summary else []) + verdict_lines(report)
    noted = False  # the interval footnote once, under the first table with intervals
    for metric in report.metrics():
        parts += metric_section(report, metric, digits, interval_footnote=not noted)
        noted = noted or _has_intervals(report, metric)
    parts += trust_lines(report)
    if report.failures:
        parts.append("### Not scored\n")
        parts += [f"- {f['embedding']}, {f['metric']}/{f['unit']}: {f['reason']}" for f in report.failures]
        parts.append("")
    if missing and report.missing:
        parts += missing_lines(report)
    return "\n".join(parts)


def _has_intervals(report, metric: str) -> bool:
    return any(c.interval for (mm, _, _), per in report.cells.items() if mm == metric for c in per.values())


def metric_section(report, metric: str, digits: int, interval_footnote: bool = True) -> list[str]:
    m = metric_of(metric)
    parts = [f"### {m.title or metric}\n"]
    for label, text in (("Data", report.data.get(metric)), ("How to read", report.legends.get(metric))):
        if text:
            parts.append(f"{label}: {text}\n")
    parts.append(table(report, metric, digits) + "\n")
    if interval_footnote and _has_intervals(report, metric):
        parts.append(interval_note(report) + "\n")
    parts += m.notes(report, "table") + drop_notes(report, metric) + outside_notes(report, metric)
    for emb, results in report.details.items():  # listings, e.g. generated analogies
        for key, res in results.items():
            if key.startswith(metric + "/") and res.get("listing"):
                parts.append(f"- {emb}: {res['listing']}")
    return parts + [""]


def missing_lines(report) -> list[str]:
    """The out-of-vocabulary words, each word list once (its missing words, at most 20 shown) with
    the columns and the metrics/units that lost them; a list missing other words in another
    column or unit is its own line."""
    lost: dict = {}  # (list, words) -> ({column}, {metric/unit}), in first-seen order
    for emb, per in report.missing.items():
        for key, sets in per.items():
            for name, words in sets.items():
                columns, units = lost.setdefault((name, tuple(words)), ({}, {}))
                columns[emb] = units[key] = None
    parts = ["### Out-of-vocabulary words\n"]
    for (name, words), (columns, units) in lost.items():
        shown = ", ".join(words[:20]) + (f" ... ({len(words)} in all)" if len(words) > 20 else "")
        where = "every column" if len(columns) == len(report.embeddings) > 1 else ", ".join(columns)
        parts.append(f"- {name}: {shown} -- missing in {where}; lost to {', '.join(units)}")
    return parts + [""]


def interval_note(report) -> str:
    """The footnote of the intervals (once per report): how they are made and what † marks."""
    boot = report.params.get("bootstrap_resamples")
    ref = report.embeddings[0] if report.embeddings else ""
    dagger = (f"; † the change from '{ref}' is within the noise (paired bootstrap interval of the change "
              f"contains 0)" if len(report.embeddings) > 1 else "")
    return (f"[a, b] (in every table): {report.params.get('bootstrap_level', 0.95):.0%} interval, a bootstrap "
            f"over the words or lines{f' ({boot:,} resamples)' if boot else ''} unless 'How to read' says "
            f"otherwise{dagger}.")


def drop_notes(report, metric: str) -> list[str]:
    """One sentence for each large drop of the bias (at least half of the reference's, from a
    reference of at least 0.1, not already near 0) that is still within the noise: why a big
    change can be no significant change."""
    out = []
    for c in report.comparisons:
        ref, value = c.get("reference_value"), c.get("value")
        if c["metric"] != metric or c["outcome"] != "no significant change" or ref is None or value is None:
            continue
        if abs(ref) >= 0.1 and c["change"] < 0 and -c["change"] >= 0.5 * abs(ref):
            label = report.labels.get(metric, metric_of(metric).statistics).get(c["statistic"], c["statistic"])
            out.append(f"- Why '{c['embedding']}', {c['test']} {label} {ref:.3g} -> {value:.3g} is no significant "
                       f"change: the paired interval of the change of the bias [{c['ci_low']:.2f}, "
                       f"{c['ci_high']:.2f}] includes 0; redrawing the {c['n_items']} items (words or lines) "
                       f"moves the number that much, so the drop could come from the choice of words.")
    return out + ([""] if out else [])


def _shown_outside(report, key, cell, digits: int) -> bool:
    """Whether a cell's value lies outside its interval, and visibly so as printed."""
    d = decimals(report, *key, digits)
    value = round(cell.value, d)
    return (not cell.ci_low <= cell.value <= cell.ci_high
            and (value < round(cell.ci_low, d - 1) or value > round(cell.ci_high, d - 1)))


def outside_notes(report, metric: str, digits: int = 3) -> list[str]:
    """One sentence when values of ``metric`` lie (as printed) outside their own interval: why."""
    labels = report.labels.get(metric, metric_of(metric).statistics)
    found = [f"'{emb}' {t} {labels.get(s, s)} {c.value:.3g} [{c.ci_low:.2f}, {c.ci_high:.2f}]"
             for (m, t, s), per in report.cells.items() if m == metric
             for emb, c in per.items()
             if c.interval and isinstance(c.value, float) and _shown_outside(report, (m, t, s), c, digits)]
    if not found:
        return []
    listed = "; ".join(found[:4]) + (f"; and {len(found) - 4} more" if len(found) > 4 else "")
    which = "a value lies outside its" if len(found) == 1 else "values lie outside their"
    return [f"- Why {which} own interval ({listed}): the interval is the spread of the statistic over "
            f"resamples that repeat some items and drop others, and near a bound (a correlation near 1, a "
            f"magnitude near 0) such a resample can only move it away from the bound, so the resampled numbers "
            f"lie on one side of the value computed on every item.", ""]


def _compared_text(report, emb: str, metric: str, outcome: dict, by_key: dict) -> str:
    n = sum(len(v) for v in outcome.values())
    counts = ", ".join(f"{len(v)} {k}" for k, v in outcome.items() if v)
    worse = [by_key[(emb, metric, *item.split("/"))] for item in outcome["worse"]]
    detail = ", ".join(f"{w['test']} {report.labels.get(metric, {}).get(w['statistic'], w['statistic'])} "
                       f"{w['reference_value']:.3g} -> {w['value']:.3g}"
                       for w in worse if w["value"] is not None)
    return f"{metric_of(metric).title or metric}: {counts} of {n}" + (f" (worse: {detail})" if detail else "")


def verdict_lines(report) -> list[str]:
    verdict = report.verdict()
    if not verdict:
        return []
    by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in report.comparisons}
    lines = ["### Verdict", "",
             f"Each bias number of every column against '{report.embeddings[0]}', with a paired "
             f"bootstrap over the same words: what changed beyond the noise.", ""]
    for emb, per_metric in verdict.items():
        parts = []
        for metric, outcome in per_metric.items():
            m = metric_of(metric)
            own = m.verdict(report, emb)
            parts.append(m.verdict_text(own) if own is not None
                         else _compared_text(report, emb, metric, outcome, by_key))
        lines.append(f"- **{emb}**: " + "; ".join(parts) + ".")
    from .compare import unrecoverable_line
    from .summary import attribute_name, guard_lines

    line = unrecoverable_line(report, attribute_name(report))
    lines += [line] if line else []
    lines += guard_lines(report)
    for metric in report.metrics():
        lines += metric_of(metric).notes(report, "verdict")
    return lines + [""]



def table(report, metric: str, digits: int) -> str:
    labels = report.labels.get(metric, {})
    folded = set(metric_of(metric).folded)
    lines = ["| " + " | ".join(["test", "statistic", *report.embeddings]) + " |",
             "| " + " | ".join(["---", "---"] + ["---:"] * len(report.embeddings)) + " |"]
    last_test = None
    for m, t, s in report.rows:
        if m != metric or s in folded:
            continue
        cells = [cell_text(report, m, t, s, e, digits) for e in report.embeddings]
        label = str(labels.get(s, s)).replace("|", "\\|")
        lines.append("| " + " | ".join([t if t != last_test else "", label, *cells]) + " |")
        last_test = t
    return "\n".join(lines)


def cell_text(report, metric: str, test: str, statistic: str, embedding: str, digits: int) -> str:
    cell = report.cells[(metric, test, statistic)].get(embedding)
    v = None if cell is None else cell.value
    if v is None:
        return "n/a"
    if isinstance(v, (bool, int)) or statistic == N_SCORED:
        return str(int(v))
    same_test = {s: per[embedding].value for (m, t, s), per in report.cells.items()
                 if m == metric and t == test and per.get(embedding) is not None}
    text = metric_of(metric).format_cell(statistic, same_test, digits)
    if text is not None:
        return text
    digits = decimals(report, metric, test, statistic, digits)
    return f"{v:.{digits}f}" + interval_text(report, cell, metric, test, statistic, embedding, digits)


def decimals(report, metric: str, test: str, statistic: str, digits: int) -> int:
    """``digits`` decimals, more for a row whose values and intervals are all below 0.1,
    so that 0.0028 [0.001, 0.021] does not print as 0.003 [0.00, 0.02] (the interval
    keeps one decimal fewer than the value, as in every row)."""
    numbers = [v for c in report.cells.get((metric, test, statistic), {}).values() for v in c]
    largest = max((abs(c) for c in numbers if isinstance(c, float)), default=0.0)
    if not 0.0 < largest < 0.1:
        return digits
    return min(digits + int(-math.floor(math.log10(largest))) - 1, digits + 3)


def interval_text(report, cell, metric: str, test: str, statistic: str, embedding: str, digits: int) -> str:
    lo, hi = cell.ci_low, cell.ci_high
    text = f" [{lo:.{digits - 1}f}, {hi:.{digits - 1}f}]" if lo is not None and hi is not None else ""
    flat = any(c["outcome"] == "no significant change" and c["embedding"] == embedding
               and (c["metric"], c["test"], c["statistic"]) == (metric, test, statistic)
               for c in report.comparisons)
    return text + (" †" if flat else "")


def to_html(report) -> str:
    """One HTML table: a row per (metric, test, statistic), a column per embedding, each cell
    as the Markdown report writes it (value and interval; folded statistics in their cell)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in ("metric", "test", "statistic", *report.embeddings))
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(str(k))}</td>" for k in key)
        + "".join(f"<td>{escape(cell_text(report, *key, e, 3))}</td>" for e in report.embeddings) + "</tr>"
        for key in report.rows if key[2] not in metric_of(key[0]).folded)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
