"""The report's section "How far to trust these numbers" (issue 34), from :attr:`Report.trust
<embdebias.report.model.Report.trust>` and the validity rows: the seed-word bands, Cronbach's alpha
across the base pairs, test-retest reliability, the agreement between metric families, and
validity against human norms, each with one sentence about this run.

One renderer, :func:`trust_lines`, called in one place by :func:`embdebias.report.markdown.to_markdown`.
"""

from __future__ import annotations

import math

from ..metrics.trust import WORD_MEASURES
from .model import metric_of

#: Cronbach's alpha and ICC read as in the psychometric literature Du et al. (2021) follow.
GOOD, ACCEPTABLE = 0.9, 0.7
#: Rows of the band table shown (the widest bands first); the JSON report holds all of them.
SHOWN_BANDS = 12


def _num(value, digits: int = 2) -> str:
    return "n/a" if value is None or (isinstance(value, float) and not math.isfinite(value)) else f"{value:.{digits}f}"


def _row_name(band: dict) -> str:
    title = metric_of(band["metric"]).title or band["metric"]
    test = "" if band["test"] == band["metric"] else f" {band['test']}"
    return f"{title}{test} ({band['statistic']})"


def _width(band: dict) -> float:
    lo, hi = band.get("loo_low"), band.get("loo_high")
    return hi - lo if lo is not None and hi is not None else -1.0


def sensitivity_lines(report) -> list[str]:
    """The seed-word bands of the reference column: a sentence on the widest, a table of the widest."""
    bands = [b for b in report.trust.get("sensitivity", []) if b["embedding"] == report.embeddings[0]]
    if not bands:
        return ["**Seed words.** No word-set statistic was scored, so no seed-word band."]
    bands.sort(key=_width, reverse=True)
    top = bands[0]
    flips = [b for b in bands if b.get("sign_holds") is False]
    verdict = ("its sign holds for every leave-one-out set" if top.get("sign_holds")
               else "its sign changes when one word is left out" if top.get("sign_holds") is False else "")
    lines = [f"**Seed words.** On {report.embeddings[0]}, {_row_name(top)} moves between {_num(top['loo_low'])} "
             f"and {_num(top['loo_high'])} when one word is left out (the widest band of {len(bands)})"
             + (f"; {verdict}" if verdict else "") + f"; {len(flips)} of "
             f"{sum(b.get('sign_holds') is not None for b in bands)} statistics read against 0 change sign "
             "under some leave-one-out set.", "",
             "| statistic | value | bootstrap interval | leave-one-out range | half subsets (95 %) | "
             "words that move it most |", "| --- | --- | --- | --- | --- | --- |"]
    for b in bands[:SHOWN_BANDS]:
        cell = report.cells.get((b["metric"], b["test"], b["statistic"]), {}).get(b["embedding"])
        ci = f"[{_num(cell.ci_low)}, {_num(cell.ci_high)}]" if cell is not None and cell.interval else ""
        words = ", ".join(f"{w['word']} ({w['set']}, {w['shift']:+.2f})" for w in b["most_moving"])
        lines.append(f"| {_row_name(b)} | {_num(b['value'])} | {ci} | [{_num(b['loo_low'])}, {_num(b['loo_high'])}] "
                     f"| [{_num(b['half_low'])}, {_num(b['half_high'])}] | {words} |")
    if len(bands) > SHOWN_BANDS:
        lines.append(f"\n({len(bands) - SHOWN_BANDS} narrower bands in report.json's trust.sensitivity.)")
    return lines + [""]


def _grade(value) -> str:
    if value is None or not math.isfinite(value):
        return "undefined"
    value = round(value, 2)  # graded as shown
    return "good" if value >= GOOD else "acceptable" if value >= ACCEPTABLE else "poor"


def consistency_lines(report) -> list[str]:
    """Cronbach's alpha across the base pairs, per word measure, with its sentence."""
    c = report.trust.get("consistency")
    if not c:
        note = report.trust.get("consistency_note", "not computed")
        return [f"**Base pairs.** Internal consistency across base pairs not computed: {note}.", ""]
    measures = [m for m in WORD_MEASURES if m in c]
    alphas = {m: c[m]["alpha"] for m in measures}
    low = [_MEASURE_NAMES.get(m, m) for m, a in alphas.items() if _grade(a) == "poor"]
    sentence = ("the pairs tell the same story, so the direction-based numbers do not hang on one pair"
                if not low else f"the pairs disagree for {', '.join(low)}: a number along one direction "
                                 "depends on which pairs defined it")
    return [f"**Base pairs.** With each of the {len(c['pairs'])} definitional pairs as its own direction over "
            f"{c['n_words']} neutral words of {c['embedding']}, Cronbach's alpha is "
            + ", ".join(f"{_num(a)} ({_MEASURE_NAMES.get(m, m)}, {_grade(a)})" for m, a in alphas.items())
            + f": {sentence}.", ""]


#: A per-word measure's name where its key alone is ambiguous ("residual": also the residual tests).
_MEASURE_NAMES = {"residual": "residual direction"}


def reliability_lines(report) -> list[str]:
    """Test-retest reliability when the columns are embeddings of one corpus trained with different seeds."""
    rel = report.trust.get("reliability")
    if not rel:
        return ["**Training seeds.** Not measured in this run (one embedding per method): train the same corpus "
                "with several seeds (`embdebias train CORPUS --seeds 1,2,3 --out DIR`) and run "
                "`embdebias reliability` on them for each measure's test-retest ICC.", ""]
    if "note" in rel:
        return [f"**Training seeds.** Test-retest reliability not computed: {rel['note']}.", ""]
    measures = rel["measures"]
    parts = [f"{m} {_num(v['icc2'])} [{_num(v['ci_low'])}, {_num(v['ci_high'])}]" for m, v in measures.items()]
    poor = [m for m, v in measures.items() if _grade(v["icc2"]) == "poor"]
    said = (f"{', '.join(poor)} would move with another training seed as much as with the words"
            if poor else "every per-word measure is stable across training seeds")
    return [f"**Training seeds.** Over the {len(rel['embeddings'])} columns as embeddings of one corpus trained "
            f"with different seeds ({rel['n_words']} words), ICC(2,1): {'; '.join(parts)}: {said}.", ""]


def agreement_lines(report) -> list[str]:
    """Kendall's tau between the metric families' rankings of the columns, as a heat-map table."""
    agree = report.trust.get("agreement")
    words = report.trust.get("word_agreement")
    lines = []
    if not agree:
        lines.append(f"**Agreement between metrics.** Needs three or more columns and two metric families; this "
                     f"report has {len(report.embeddings)} column(s).")
    else:
        fams, tau = agree["families"], agree["tau"]
        pairs = [(tau[i][j], fams[i], fams[j]) for i in range(len(fams)) for j in range(i + 1, len(fams))
                 if tau[i][j] is not None]
        if pairs:
            lo, hi = min(pairs), max(pairs)
            lines.append(f"**Agreement between metrics.** Over the {len(agree['columns'])} columns, {hi[1]} and "
                         f"{hi[2]} rank them most alike (Kendall's tau {_num(hi[0])}), {lo[1]} and {lo[2]} least "
                         f"(tau {_num(lo[0])}); with so few columns a tau is coarse, the intervals say how coarse. "
                         + _FIGURE_SENTENCE)
        lines += ["", "| Kendall's tau [95 % interval] | " + " | ".join(fams) + " |",
                  "| --- |" + " --- |" * len(fams)]
        for i, fam in enumerate(fams):
            lines.append(f"| {fam} | " + " | ".join(
                _shade(tau[i][j]) + (f" [{_num(agree['ci_low'][i][j])}, {_num(agree['ci_high'][i][j])}]"
                                     if i != j and agree["ci_low"][i][j] is not None else "")
                for j in range(len(fams))) + " |")
    if words:
        names, m = words["measures"], words["matrix"]
        worst = min((m[i][j], names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names)))
        said = {n: _MEASURE_NAMES.get(n, n) for n in names}
        lines += ["", f"At word level (the neutral words of {report.embeddings[0]}), the per-word scores of "
                      f"{', '.join(said.values())} correlate at Spearman rho {_num(worst[0])} or more (lowest: "
                      f"{said[worst[1]]} and {said[worst[2]]})."]
    return lines + [""]


#: Where the heat map of the agreement is (one sentence of the section).
_FIGURE_SENTENCE = ("The heat map `agreement.png` of a run (in Python: `embdebias.report.figures.agreement_figure"
                    "(report)`) draws the table below with each tau's interval.")


def _shade(value) -> str:
    """A tau with a shade glyph, so the table reads as a heat map in plain text."""
    if value is None:
        return "n/a"
    glyph = "█" if value >= 0.6 else "▓" if value >= 0.2 else "▒" if value > -0.2 else "░"
    return f"{glyph} {value:.2f}"


def validity_lines(report) -> list[str]:
    """ValNorm (valence kept) and WAT (gender association removed) side by side per column."""
    rows = {m: (m, t, "r") for (m, t, s) in report.rows if m in ("valnorm", "wat") and s == "r"}
    if not rows:
        return ["**Validity against human norms.** Not measured: no lexicon was given (none is bundled, their "
                "licences forbid it); give your lexicon files (`embdebias run` or `embdebias score` with "
                "`--lexicon valnorm=FILE --lexicon wat=FILE`, or `options={'valnorm': {'lexicon': FILE}}` in "
                "Python).", ""]
    lines = ["**Validity against human norms.** " + _validity_sentence(report, rows), "",
             "| column | " + " | ".join(f"{metric_of(m).title} r" for m in rows) + " |",
             "| --- |" + " --- |" * len(rows)]
    for emb in report.embeddings:
        lines.append(f"| {emb} | " + " | ".join(_num(report.cells[k].get(emb).value if report.cells[k].get(emb)
                                                      else None) for k in rows.values()) + " |")
    return lines + [""]


def _validity_sentence(report, rows: dict) -> str:
    """Per debiased column: the valence agreement it keeps and the gender association it leaves,
    each against the reference column (the first), e.g. "hard keeps ValNorm r 0.62 of 0.64 and
    brings WAT r from 0.51 to 0.08"."""
    ref = report.embeddings[0]
    parts = [part for emb in report.embeddings[1:] if (part := _validity_change(report, rows, ref, emb))]
    if not parts:
        return f"On {ref}: " + ", ".join(f"{m} r {_num(report.value(*k, ref))}" for m, k in rows.items()) + "."
    return ("; ".join(parts) + ". A method that lowers the gender association but also the valence agreement "
            "has cost something the quality tests miss.")


def _validity_change(report, rows: dict, ref: str, emb: str) -> str:
    """One column's clause of :func:`_validity_sentence` ("" when neither metric scored both columns)."""
    said = []
    for m, key in sorted(rows.items(), key=lambda item: item[0] != "valnorm"):  # kept, then removed
        a, b = report.cells[key].get(ref), report.cells[key].get(emb)
        if a is None or b is None or a.value is None or b.value is None:
            continue
        title = (metric_of(m).title or m).split(" (")[0]  # "ValNorm", "WAT"
        said.append(f"keeps {title} r {_num(b.value)} of {_num(a.value)}" if m == "valnorm"
                    else f"brings {title} r from {_num(a.value)} to {_num(b.value)}")
    return f"{emb} " + " and ".join(said) if said else ""


def trust_lines(report) -> list[str]:
    """The section "How far to trust these numbers" (empty without :attr:`Report.trust`)."""
    if not report.trust:
        return []
    return (["### How far to trust these numbers\n"] + sensitivity_lines(report) + consistency_lines(report)
            + reliability_lines(report) + agreement_lines(report) + validity_lines(report))
