"""The first screen of a report: at most five plain sentences computed from the numbers, then
one summary table (one row per headline measure, one column per embedding).

The sentences answer, in order: is the first column (the original) biased -- which test
families are significant, of how many; for each other column, what changed beyond the
noise; whether the attribute is still recoverable (the residual tests); what it cost in
quality. Which rows are headline measures, and what counts as significant bias, comes from
the metrics' hooks (:attr:`~embdebias.metrics.base.Metric.headline`,
:meth:`~embdebias.metrics.base.Metric.evidence`), never from their names.

Sign convention (the same in every sentence and table): a change is the change of the bias
magnitude, negative when fairer; for quality rows, the change of the quality number.
"""

from __future__ import annotations

from ..metrics.residual import chance_level
from .model import metric_of


def attribute_name(report) -> str:
    """The protected attribute the report measures (its parameters'; gender by default)."""
    return str(report.params.get("attribute") or "gender")

#: Marks of the summary table's cells (a paired change beyond the noise).
MARKS = {("bias", "improved"): "▼ fairer", ("bias", "worse"): "▲ less fair",
         ("quality", "improved"): "▲ better", ("quality", "worse"): "▼ worse"}


def scored(report) -> bool:
    """Whether the report answers anything: a bias number holds a value (or, in a report of
    quality metrics only, any number does). An unscorable run has none."""
    bias = {m for m in report.metrics() if metric_of(m).kind != "quality"}
    return any(c is not None and c.value is not None for (m, _, _), per in report.cells.items()
               if m in bias or not bias for c in per.values())


def headline_rows(report) -> list[tuple[str, str, str, str]]:
    """``(metric, test, statistic, which way is fairer)`` of the summary table, in report order.

    A metric's :attr:`headline` entry ``(test, statistic, fairer)`` names its test, or "" for
    the metric's first test in the report, or "*" for every test; ``fairer`` "chance" stands for
    the residual accuracies' chance level (:func:`~embdebias.metrics.residual.chance_level`).
    """
    tests: dict = {}
    for m, t, s in report.rows:
        tests.setdefault(m, [])
        if t not in tests[m]:
            tests[m].append(t)
    out = []
    for metric in report.metrics():
        for test, stat, fairer in getattr(metric_of(metric), "headline", ()):
            chosen = tests[metric] if test == "*" else [test if test in tests[metric] else tests[metric][0]]
            out += [(metric, t, stat, fairer) for t in chosen if (metric, t, stat) in report.cells]
    return out


def _kind(metric: str) -> str:
    return "quality" if metric_of(metric).kind == "quality" else "bias"


def _label(report, metric: str, test: str, statistic: str) -> str:
    m = metric_of(metric)
    stat = report.labels.get(metric, {}).get(statistic, statistic)
    return f"{m.title or metric}, {test}: {stat}".replace("|", "\\|")


def _cell(report, metric: str, test: str, statistic: str, emb: str, by_key: dict) -> str:
    cell = report.cells[(metric, test, statistic)].get(emb)
    if cell is None or cell.value is None:
        return "n/a"
    text = f"{cell.value:.3f}"
    if cell.interval:
        text += f" [{cell.ci_low:.2f}, {cell.ci_high:.2f}]"
    c = by_key.get((emb, metric, test, statistic))
    mark = MARKS.get((_kind(metric), c["outcome"])) if c else None
    return text + (f" {mark}" if mark else "")


def summary_table(report) -> list[str]:
    """The summary table's Markdown lines (empty without headline rows)."""
    rows = headline_rows(report)
    if not rows:
        return []
    by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in report.comparisons}
    lines = ["| measure | fairer | " + " | ".join(report.embeddings) + " |",
             "| --- | --- | " + " | ".join(["---:"] * len(report.embeddings)) + " |"]
    for m, t, s, fairer in rows:
        cells = [_cell(report, m, t, s, e, by_key) for e in report.embeddings]
        fairer = f"{chance_level(report):.2g} (chance)" if fairer == "chance" else fairer
        lines.append(f"| {_label(report, m, t, s)} | {fairer} | " + " | ".join(cells) + " |")
    level = report.params.get("bootstrap_level", 0.95)
    lines += ["", f"[a, b]: {level:.0%} interval (see each table below for how). "
              + (f"A mark is a change from '{report.embeddings[0]}' beyond the noise (its paired-bootstrap "
                 "interval excludes 0): ▼ fairer / ▲ less fair for bias, ▲ better / ▼ worse for quality; "
                 "no mark: within the noise." if len(report.embeddings) > 1 else "")]
    return lines


# -- the sentences -------------------------------------------------------------------------------


def _biased_sentence(report) -> str | None:
    ref = report.embeddings[0]
    found = [(metric_of(m).title or m, ev) for m in report.metrics()
             if (ev := metric_of(m).evidence(report, ref)) is not None]
    about = "" if attribute_name(report) == "gender" else f" by {attribute_name(report)}"
    if not found:
        if not any(_kind(m) == "bias" for m in report.metrics()):
            return None
        return (f"**Is '{ref}' biased{about}? Not tested**: no test family in this report tests bias for "
                f"significance (as WEAT's permutation test does); the bias numbers below give its size, with "
                f"intervals, but not whether it exceeds chance.")
    yes = [f"{title} ({ev['text']})" for title, ev in found if ev["significant"]]
    no = [f"{title} ({ev['text']})" for title, ev in found if not ev["significant"]]
    head = (f"**Is '{ref}' biased{about}? {'Yes' if yes else 'Not measurably'}**: "
            f"{len(yes)} of {len(found)} test families show significant bias")
    return head + (f" -- {'; '.join(yes)}" if yes else "") + (f"; not significant: {'; '.join(no)}" if no else "") \
        + "."


def _counts(comps: list[dict]) -> dict:
    out = {"improved": [], "worse": [], "no significant change": []}
    for c in comps:
        out.setdefault(c["outcome"], []).append(c)
    return out


def changed_text(report, emb: str) -> str | None:
    """What changed beyond the noise in column ``emb``: ``fairer beyond the noise on X of N bias
    numbers and less fair on Y (families)`` (None without comparable bias numbers)."""
    comps = [c for c in report.comparisons if c["embedding"] == emb and _kind(c["metric"]) == "bias"
             and c["outcome"] != "not comparable"]
    if not comps:
        return None
    n = _counts(comps)
    fam = sorted({metric_of(c["metric"]).title for c in n["worse"]})
    return (f"fairer beyond the noise on {len(n['improved'])} of {len(comps)} bias numbers "
            f"and less fair on {len(n['worse'])}" + (f" ({', '.join(fam)})" if fam else ""))


def recoverable_text(report, emb: str) -> str | None:
    """``'emb': yes (clustering 0.91, SVM 0.96; 0.5 is chance)``: whether the attribute is still
    recoverable in ``emb`` by the residual tests' own verdict, chance being 1/k of k groups; or None."""
    metric = next((m for m in report.metrics() if hasattr(metric_of(m), "recoverable_text")), None)
    return None if metric is None else metric_of(metric).recoverable_text(report, emb)


def column_verdict(report, emb: str) -> str:
    """One verdict line's text for column ``emb``: what changed beyond the noise, and whether the
    attribute is still recoverable (the line of each attribute and method of a run of several)."""
    parts = [t for t in (changed_text(report, emb), recoverable_text(report, emb)) if t]
    if len(parts) == 2:
        parts[1] = f"{attribute_name(report)} still recoverable: " + parts[1].split(": ", 1)[1]
    return "; ".join(parts) or "nothing compared"


def _changed_sentence(report) -> str | None:
    parts = [f"'{emb}' is {text}" for emb in report.embeddings[1:] if (text := changed_text(report, emb))]
    if not parts:
        return None
    return "**Did debiasing work?** " + "; ".join(parts) + " (the rest: within the noise)."


def _recoverable_sentence(report) -> str | None:
    if len(report.embeddings) < 2:
        return None
    parts = [t for emb in report.embeddings[1:] if (t := recoverable_text(report, emb))]
    return (f"**Is {attribute_name(report)} still recoverable?** " + "; ".join(parts) + ".") if parts else None


def _quality_sentence(report) -> str | None:
    rows = [(m, t, s) for m, t, s, _ in headline_rows(report) if _kind(m) == "quality"]
    if not rows:
        return None
    ref = report.embeddings[0]
    if len(report.embeddings) == 1:
        vals = [f"{_short(report, m, t, s)} {v:.3f}" for m, t, s in rows
                if (v := report.value(m, t, s, ref)) is not None]
        return f"**Quality**: {', '.join(vals)}." if vals else None
    by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in report.comparisons}
    parts = [f"'{emb}': " + ", ".join(items) for emb in report.embeddings[1:]
             if (items := _quality_changes(report, emb, rows, by_key))]
    return ("**What did it cost?** " + "; ".join(parts) + ".") if parts else None


def _quality_changes(report, emb: str, rows: list, by_key: dict) -> list[str]:
    items = []
    for m, t, s in rows:
        c = by_key.get((emb, m, t, s))
        if c is None or c["value"] is None or c["reference_value"] is None:
            continue
        word = {"improved": "better", "worse": "worse"}.get(c["outcome"], "within the noise")
        items.append(f"{_short(report, m, t, s)} {c['reference_value']:.3f} -> {c['value']:.3f} ({word})")
    return items


def _short(report, metric: str, test: str, statistic: str) -> str:
    stat = report.labels.get(metric, {}).get(statistic, statistic)
    return f"{test} {stat}"


def opening_sentences(report) -> list[str]:
    """At most five sentences, each computed from the report's numbers."""
    if not scored(report):
        return [unscorable_line(report)]
    found = [s for s in (_biased_sentence(report), _changed_sentence(report), _recoverable_sentence(report),
                         _quality_sentence(report)) if s]
    return found[:5]


def unscorable_line(report) -> str:
    """The first line of a report in which nothing (no bias number) could be scored."""
    reasons = list(dict.fromkeys(f["reason"] for f in report.failures))[:3]
    quality = any(c is not None and c.value is not None for (m, _, _), per in report.cells.items()
                  if metric_of(m).kind == "quality" for c in per.values())
    return ("**Nothing could be scored**: every bias test failed on every embedding"
            + (" (only the quality numbers below were measured)" if quality else "")
            + (f"; first reasons: {'; '.join(reasons)}" if reasons else "") + ".")


def first_screen(report) -> list[str]:
    """The opening sentences, then the summary table (Markdown lines)."""
    lines = []
    for s in opening_sentences(report):
        lines += [s, ""]
    if scored(report):
        table = summary_table(report)
        if table:
            lines += ["### Summary", ""] + table + [""]
    return lines
