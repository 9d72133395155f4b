"""The first screen of a report: at most five plain sentences computed from the numbers, then
one summary table (one row per headline measure, one column per embedding).

The sentences answer, in order: is the first column (the original) biased -- which test
families are significant, of how many (every family with a test: a permutation test, or an
interval that excludes the fair value); which method removed the most bias -- the columns
ranked by the median over the families of the share of the original's bias removed, with
how many numbers are fairer (beyond the noise AND at least the metric's minimum share),
small changes (beyond the noise, smaller) or less fair; whether the attribute is still
recoverable (the residual tests); what it cost -- the worst quality test kept, with its
interval, and every other loss beyond the noise named. Which rows are headline measures, and what
counts as significant bias, comes from
the metrics' hooks (:attr:`~embdebias.metrics.base.Metric.headline`,
:meth:`~embdebias.metrics.base.Metric.evidence`), never from their names.

Sign convention (the same in every sentence and table): a change is the change of the bias
magnitude, negative when fairer; for quality rows, the change of the quality number.
"""

from __future__ import annotations

import numpy as np

from ..debias.certificate import CERTIFICATE_TOL
from ..metrics.base import chance_level
from .model import metric_of


def attribute_name(report) -> str:
    """The protected attribute the report measures (its parameters'; gender by default)."""
    return str(report.params.get("attribute") or "gender")


#: The words of a summary cell's change (a paired change beyond the noise), by kind and outcome:
#: words, never arrows, which would read as the value going up or down.
MARKS = {("bias", "improved"): "fairer", ("bias", "worse"): "less fair", ("bias", "small change"): "small change",
         ("quality", "improved"): "better", ("quality", "worse"): "worse"}


def scored(report) -> bool:
    """Whether the report answers anything: a bias number holds a value (or, in a report of
    quality metrics only, any number does). An unscorable run has none."""
    bias = {m for m in report.metrics() if metric_of(m).kind != "quality"}
    return any(c is not None and c.value is not None for (m, _, _), per in report.cells.items()
               if m in bias or not bias for c in per.values())


def _tests_of(report) -> dict:
    tests: dict = {}
    for m, t, s in report.rows:
        tests.setdefault(m, [])
        if t not in tests[m]:
            tests[m].append(t)
    return tests


def informative_test(report, metric: str, statistic: str, tests: list) -> str:
    """The test a family's summary row shows: the one with the smallest p-value in the first column
    (a metric with a permutation test), else the largest bias (distance from the fair value), else
    the first; ties keep report order."""
    ref, m = report.embeddings[0], metric_of(metric)

    def value(test, stat):
        cell = report.cells.get((metric, test, stat), {}).get(ref)
        return None if cell is None else cell.value

    has = [t for t in tests if value(t, statistic) is not None]
    if not has:
        return tests[0]
    pvals = {t: value(t, "p_value") for t in has}
    size = {t: abs(m.bias_magnitude(statistic, value(t, statistic), chance_level(report))
                   if m.fair_value(statistic) is not None else value(t, statistic)) for t in has}
    if any(p is not None for p in pvals.values()):
        return min(has, key=lambda t: (1.0 if pvals[t] is None else pvals[t], -size[t]))
    return max(has, key=lambda t: size[t])


def headline_rows(report) -> list[tuple[str, str, str, str]]:
    """``(metric, test, statistic, which way is fairer)`` of the summary table, in report order.

    A metric's :attr:`headline` entry ``(test, statistic, fairer)`` names its test, or "" for
    the family's most informative test (:func:`informative_test`: its most significant, or its
    largest bias), or "*" for every test; ``fairer`` "chance" stands for the residual
    accuracies' chance level (:func:`~embdebias.metrics.residual.chance_level`).
    """
    tests = _tests_of(report)
    out = []
    for metric in report.metrics():
        for test, stat, fairer in getattr(metric_of(metric), "headline", ()):
            if test == "*":
                chosen = tests[metric]
            elif test in tests[metric]:
                chosen = [test]
            else:
                chosen = [informative_test(report, metric, stat, [t for t in tests[metric]
                                                                   if (metric, t, stat) in report.cells]
                                           or tests[metric])]
            out += [(metric, t, stat, fairer) for t in chosen if (metric, t, stat) in report.cells]
    return out


def stat_kind(metric: str, statistic: str) -> str:
    """"quality" for a quality number (:meth:`~embdebias.metrics.Metric.is_quality`), else "bias"."""
    return "quality" if metric_of(metric).is_quality(statistic) else "bias"


def _kind(metric: str) -> str:
    return "quality" if metric_of(metric).kind == "quality" else "bias"


def _label(report, metric: str, test: str, statistic: str) -> str:
    m = metric_of(metric)
    stat = report.labels.get(metric, {}).get(statistic, statistic)
    n = len({t for mm, t, s in report.rows if mm == metric and s == statistic})
    chosen = any(h[0] == "" and h[1] == statistic for h in m.headline)
    which = f" (most informative of {n} tests)" if n > 1 and chosen else ""
    return f"{m.title or metric}, {test}: {stat}{which}".replace("|", "\\|")


def percent(share) -> str:
    """A share as a whole percentage (``0.981`` -> ``"98 %"``)."""
    return f"{100 * share:.0f} %"


def mark_text(comparison: dict | None, kind: str) -> str | None:
    """A cell's mark: its change in words, with the share of the bias removed (bias numbers)."""
    if comparison is None:
        return None
    word = MARKS.get((kind, comparison["outcome"]))
    share = comparison.get("share")
    if word is None or kind == "quality" or share is None or share != share:
        return word
    return f"{word}, {percent(share)} removed" if share >= 0 else f"{word}, {percent(-share)} added"


def _cell(report, metric: str, test: str, statistic: str, emb: str, by_key: dict) -> str:
    cell = report.cells[(metric, test, statistic)].get(emb)
    if cell is None or cell.value is None:
        return "n/a"
    text = f"{cell.value:.3f}"
    if cell.interval:
        text += f" [{cell.ci_low:.2f}, {cell.ci_high:.2f}]"
    mark = mark_text(by_key.get((emb, metric, test, statistic)), stat_kind(metric, statistic))
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
              + (f"A word after a value is its change from '{report.embeddings[0]}' beyond the noise (the "
                 f"paired-bootstrap interval excludes 0): *fairer* / *less fair* when it also removes / adds "
                 f"at least {min_share_text(report)} of the original's bias (the share is given), *small change* "
                 "when it is smaller; *better* / *worse* for a quality number. No word: within the noise. "
                 "A family's row is its most significant test (smallest p-value) or, without a test, its "
                 "largest bias." if len(report.embeddings) > 1 else "")]
    return lines


def min_share_text(report) -> str:
    """The report's minimum share as words: ``"10 %"``, or ``"10-25 % (by family)"``."""
    shares = sorted(set((report.params.get("min_share") or {}).values()))
    if not shares:
        return "the stated share"
    if len(shares) == 1:
        return percent(shares[0])
    return f"{100 * shares[0]:.0f}-{percent(shares[-1])} (by family, see the p-values page)"


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
    out = {"improved": [], "worse": [], "small change": [], "no significant change": []}
    for c in comps:
        out.setdefault(c["outcome"], []).append(c)
    return out


def _bias_comparisons(report, emb: str) -> list[dict]:
    return [c for c in report.comparisons if c["embedding"] == emb and stat_kind(c["metric"], c["statistic"]) == "bias"
            and c["outcome"] != "not comparable"]


def bias_removed(report, emb: str) -> dict | None:
    """How much of the original's bias column ``emb`` removed: ``{"median", "families": {title:
    median share}, "counts": {outcome: n}, "n"}``, the median over the families of each family's
    median share over its bias numbers (None without a share)."""
    comps = _bias_comparisons(report, emb)
    per: dict = {}
    for c in comps:
        share = c.get("share")
        if share is not None and share == share:
            per.setdefault(metric_of(c["metric"]).title or c["metric"], []).append(share)
    if not per:
        return None
    families = {f: float(np.median(v)) for f, v in per.items()}
    return {"median": float(np.median(list(families.values()))), "families": families,
            "counts": {k: len(v) for k, v in _counts(comps).items()}, "n": len(comps)}


def changed_text(report, emb: str) -> str | None:
    """What changed in column ``emb``: the median share of bias removed over the families, and how
    many bias numbers are fairer (beyond the noise and at least the minimum share), small changes,
    less fair; "its changes are small" when none is fairer (None without comparable bias numbers)."""
    comps = _bias_comparisons(report, emb)
    if not comps:
        return None
    n = _counts(comps)
    removed = bias_removed(report, emb)
    fam = sorted({metric_of(c["metric"]).title for c in n["worse"]})
    head = (f"removed a median {percent(removed['median'])} of the bias over {len(removed['families'])} families"
            if removed else "changed")
    floor = min((report.params.get("min_share") or {}).values(), default=0.0)
    if removed and removed["median"] < floor:  # the method as a whole: under the smallest minimum share
        small = f" -- its changes are small (under the {percent(floor)} minimum)"
    elif not n["improved"]:
        small = " -- its changes are small" if n["small change"] else " -- no change beyond the noise"
    else:
        small = ""
    return (f"{head}{small} (fairer on {len(n['improved'])} of {len(comps)} bias numbers, small changes on "
            f"{len(n['small change'])}, less fair on {len(n['worse'])}" + (f": {', '.join(fam)}" if fam else "") + ")")


def recoverable_text(report, emb: str) -> str | None:
    """``'emb': yes (clustering 0.91, SVM 0.96; 0.5 is chance)``: whether the attribute is still
    recoverable in ``emb`` by the residual tests' own verdict, chance being 1/k of k groups; or None."""
    metric = next((m for m in report.metrics() if hasattr(metric_of(m), "recoverable_text")), None)
    return None if metric is None else metric_of(metric).recoverable_text(report, emb)


def guard_text(report, emb: str) -> str | None:
    """Whether column ``emb`` is linearly guarded on the attribute's labelled words, by its run
    certificate (:attr:`~embdebias.report.model.Report.certificates`; None for a method without
    one: not a linear edit, or a report without certificates)::

        linearly guarded (certificate 1e-15 on 10,495 labelled words; 0.28 before)
        not linearly guarded (certificate 0.0091 on 10,495 labelled words; 0.28 before)

    The figure is that of the vectors as the method outputs them (unit rows for a method that
    scales them; the edit itself for an eraser that does not); "guarded" means at most
    :data:`~embdebias.debias.certificate.CERTIFICATE_TOL` of the figure before.
    """
    cert = (getattr(report, "certificates", None) or {}).get(emb)
    if not cert:
        return None
    if "error" in cert:
        return "no certificate (the attribute's words could not be labelled)"
    shown = cert[cert["output"]]
    where = f"on {cert['n_words']:,} labelled words; {cert['before']:.2g} before"
    if cert["guarded"]:
        return f"linearly guarded (certificate {shown:.1g} {where})"
    scaled = cert["output"] == "normalized" and cert.get("edited") is not None \
        and cert["edited"] <= CERTIFICATE_TOL * cert["before"]  # the edit is guarded, its unit scaling is not
    return (f"not linearly guarded (certificate {shown:.2g} {where}"
            + (f"; {cert['edited']:.1g} before the rows were scaled to unit length" if scaled else "") + ")")


def guard_lines(report) -> list[str]:
    """The verdict's line on the linear guard: the columns whose certificate holds, and the linear
    ones whose does not (none without certificates)."""
    certs = {e: c for e in report.embeddings[1:] if (c := (report.certificates or {}).get(e)) and "error" not in c}
    if not certs:
        return []
    guarded = [e for e, c in certs.items() if c["guarded"]]
    return [f"- **Linearly guarded** (certificate, on the {next(iter(certs.values()))['n_words']:,} labelled "
            f"words: no linear classifier beats a constant) after: {', '.join(guarded) or 'none'}; not after: "
            f"{', '.join(e for e in certs if e not in guarded) or 'none'}. Guarded is not unrecoverable: "
            f"the nonlinear probes above say whether the attribute is still there."]


def column_verdict(report, emb: str) -> str:
    """One verdict line's text for column ``emb``: what changed beyond the noise, whether the
    attribute is still recoverable by the residual tests' nonlinear probes, and whether the
    method is linearly guarded (:func:`guard_text`; the line of each attribute and method of a
    run of several)."""
    changed, recovered, guard = changed_text(report, emb), recoverable_text(report, emb), guard_text(report, emb)
    if recovered and (changed or guard):
        recovered = f"{attribute_name(report)} still recoverable: " + recovered.split(": ", 1)[1]
    return "; ".join(t for t in (changed, recovered, guard) if t) or "nothing compared"


def ranked_methods(report) -> list[str]:
    """The columns after the first, most bias removed first (:func:`bias_removed`'s median; a
    column without one last, in report order)."""
    removed = {e: bias_removed(report, e) for e in report.embeddings[1:]}
    return sorted(report.embeddings[1:], key=lambda e: -removed[e]["median"] if removed[e] else float("inf"))


def _changed_sentence(report) -> str | None:
    parts = [f"'{emb}' {text}" for emb in ranked_methods(report) if (text := changed_text(report, emb))]
    if not parts:
        return None
    return (f"**Which removed the most bias?** (fairer: beyond the noise and at least {min_share_text(report)} "
            "of the original's bias removed) " + "; ".join(parts) + ".")


def _recoverable_sentence(report) -> str | None:
    """Per column, whether the residual tests' nonlinear probes (clustering, RBF SVM) still recover
    the attribute and, for a linear method, whether it is linearly guarded (its certificate): a
    guarded method is not thereby a fix, nor is one whose probes are at chance but not guarded."""
    if len(report.embeddings) < 2:
        return None
    parts = [t for emb in report.embeddings[1:] if (t := _recoverable_part(report, emb))]
    if not parts:
        return None
    head = f"**Is {attribute_name(report)} still recoverable?** "
    if any(guard_text(report, e) for e in report.embeddings[1:]):
        head += ("Linear guard (certificate: no linear classifier beats a constant on the labelled words) "
                 "and the nonlinear probes (clustering, RBF SVM), per method: ")
    return head + "; ".join(parts) + "."


def _recoverable_part(report, emb: str) -> str | None:
    recovered, guard = recoverable_text(report, emb), guard_text(report, emb)
    if guard is None:
        return recovered
    probes = f"; by the nonlinear probes: {recovered.split(': ', 1)[1]}" if recovered else ""
    return f"'{emb}': {guard}{probes}"


def _quality_sentence(report) -> str | None:
    rows = [(m, t, s) for m, t, s, _ in headline_rows(report) if stat_kind(m, s) == "quality"]
    if not rows:
        return None
    ref = report.embeddings[0]
    if len(report.embeddings) == 1:
        vals = [f"{_short(report, m, t, s)} {v:.3f}" for m, t, s in rows
                if (v := report.value(m, t, s, ref)) is not None]
        return f"**Quality**: {', '.join(vals)}." if vals else None
    parts = [f"'{emb}': {text}" for emb in ranked_methods(report) if (text := worst_loss_text(report, emb))]
    return ("**What did it cost?** The worst quality test kept: " + "; ".join(parts) + ".") if parts else None


def quality_losses(report, emb: str) -> list[dict]:
    """Every quality number of ``emb`` compared with the first column, worst relative change first:
    ``{"label", "reference_value", "value", "relative", "low", "high", "outcome"}`` (``relative``:
    the change as a share of the original's number, its interval the paired change's over the
    original's number)."""
    out = []
    for c in report.comparisons:
        # the quality tests (similarity, analogy): a bias metric's own quality number (BAT's
        # Definition) is shown in its row, not taken for the embedding's quality
        if c["embedding"] != emb or metric_of(c["metric"]).kind != "quality":
            continue
        ref, value = c["reference_value"], c["value"]
        if ref is None or value is None or not ref:
            continue
        # the comparison's change is of the bias magnitude (-value for a higher-is-better number)
        low = None if c["ci_high"] is None else -c["ci_high"] / abs(ref)
        high = None if c["ci_low"] is None else -c["ci_low"] / abs(ref)
        out.append({"label": _short(report, c["metric"], c["test"], c["statistic"]), "reference_value": ref,
                    "value": value, "relative": (value - ref) / abs(ref), "low": low, "high": high,
                    "outcome": c["outcome"]})
    return sorted(out, key=lambda q: q["relative"])


def worst_loss_text(report, emb: str) -> str | None:
    """``analogy accuracy 0.497 -> 0.408 (-18 % [-20, -16], worse beyond the noise)``: the worst quality
    test of ``emb``, and any other loss beyond the noise named."""
    losses = quality_losses(report, emb)
    if not losses:
        return None
    w = losses[0]
    interval = f" [{100 * w['low']:+.0f}, {100 * w['high']:+.0f}]" if w["low"] is not None and \
        w["high"] is not None and w["low"] == w["low"] else ""
    word = {"worse": "a loss beyond the noise", "improved": "better beyond the noise"}.get(w["outcome"],
                                                                                          "within the noise")
    digits = 1 if abs(w["relative"]) < 0.01 else 0
    text = (f"{w['label']} {w['reference_value']:.3f} -> {w['value']:.3f} "
            f"({100 * w['relative']:+.{digits}f} %{interval}, {word})")
    others = [q["label"] for q in losses[1:] if q["outcome"] == "worse"]
    return text + (f"; also worse beyond the noise: {', '.join(others)}" if others else "")


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
