"""``report.md`` of ``embdebias run``: the evaluation tables, the word lists, then how the run went.

Everything comes from the run's metadata (what ``report.json`` holds beside the
evaluation). The lines about each method's fit come from its estimator class
(:meth:`~embdebias.debias._base.Debiaser.report_lines`), found through the
:data:`~embdebias.debias.DEBIASERS` table: no method is named here.
"""

from __future__ import annotations

from .._format import format_scalar
from ..debias.table import DEBIASERS, DEFAULT_METHODS, column_order, run_order


def _methods(meta: dict) -> list[str]:
    """The run's methods in column order (a report without the list: hard and soft)."""
    return column_order(meta["parameters"].get("methods") or DEFAULT_METHODS)


def render_report(meta: dict, evaluation: dict, command: list[str]) -> str:
    """``report.md``: the evaluation tables, the word lists, then how the run can be reproduced
    (``command``, the ``embdebias run`` command line that repeats it)."""
    from .model import Report

    from .summary import first_screen

    report = Report.from_dict(evaluation)
    lines = [f"# embdebias report: {meta['embedding']['name']}{_attribute_title(meta)}", "", *first_screen(report),
             *_comparison_lines(report), *certificate_lines(report),
             f"{meta['embedding']['words']:,} words x {meta['embedding']['dim']} dimensions; "
             + _columns_sentence(_methods(meta)) + _attribute_sentence(meta), "", *_figure_lines(meta)]
    lines.append(report.to_markdown(summary=False))
    lines += _lists_section(meta)
    lines += ["", "## Run", ""] + _run_lines(meta) + [f"- reproduce: `{' '.join(command)}`"]
    return "\n".join(lines) + "\n"


def _attribute_title(meta: dict) -> str:
    """`` -- religion (christian, jewish, muslim)`` for a run of another attribute than gender."""
    attr = meta.get("attribute")
    return f" -- {attr['name']} ({', '.join(attr['groups'])})" if attr else ""


def _attribute_sentence(meta: dict) -> str:
    """`` Attribute: religion, 3 groups (...), from FILE: description`` (another attribute than gender)."""
    attr = meta.get("attribute")
    if not attr:
        return ""
    k = len(attr["groups"])
    binary = [name for name, spec in DEBIASERS.items() if not spec.handles(k)]
    return (f" Attribute: {attr['name']}, {k} groups ({', '.join(attr['groups'])}), from "
            f"`{attr['path']}`" + (f": {attr['description']}" if attr.get("description") else ".")
            + (f" Not run, binary by construction ({k} groups): {', '.join(binary)}." if binary else ""))


def render_attributes_report(embedding: str, summaries: dict) -> str:
    """``report.md`` of a run of several attributes: one verdict line per attribute and method,
    then one section per attribute (its first screen and methods compared, and a link to its
    full report). ``summaries``: ``{attribute: its report.json}``."""
    from .model import Report
    from .summary import column_verdict, first_screen

    reports = {name: Report.from_dict(s["evaluation"]) for name, s in summaries.items()}
    lines = [f"# embdebias report: {embedding} -- {len(reports)} attributes ({', '.join(reports)})", "",
             "Each attribute was audited and debiased on its own (its subspace from its defining sets, its "
             "methods given its specific words and equalize sets); each section below is the opening of its "
             "own report, linked.", "", "### Verdict per attribute and method", ""]
    for name, report in reports.items():
        lines += [f"- **{name}, {emb}**: {column_verdict(report, emb)}." for emb in report.embeddings[1:]]
    for name, report in reports.items():
        groups = (summaries[name].get("attribute") or {}).get("groups") or report.params.get("groups") or []
        lines += ["", f"## {name}" + (f" ({', '.join(groups)})" if groups else ""), "",
                  *first_screen(report), *_comparison_lines(report), *certificate_lines(report),
                  f"Full report: [{name}/report.md]({name}/report.md)"]
    return "\n".join(lines) + "\n"


def _comparison_lines(report) -> list[str]:
    """The methods side by side (:func:`~embdebias.report.compare.comparison_table`)."""
    from .compare import comparison_table

    table = comparison_table(report)
    return ["### Methods compared", "", *table, ""] if table else []


def certificate_lines(report) -> list[str]:
    """The linear methods' certificates (:attr:`~embdebias.report.model.Report.certificates`) as a
    table: the largest absolute cross-covariance between each one's vectors and the attribute's
    labels, before, after the edit and after unit scaling, and whether it is linearly guarded."""
    from ..debias.certificate import CERTIFICATE_TOL

    certs = {e: c for e in report.embeddings if (c := report.certificates.get(e))}
    if not certs:
        return []
    ok = [c for c in certs.values() if "error" not in c]
    lines = ["### Linear guard (certificate)", ""]
    if ok:
        n, k = ok[0]["n_words"], ok[0]["n_groups"]
        lines += [f"On the {n:,} words labelled with the attribute's {k} groups (the projection labels' train and "
                  f"dev words, which LEACE, INLP and RLACE are fitted on; the other methods are fitted on their "
                  f"own word lists and shown on these), the largest absolute cross-covariance between a method's "
                  f"vectors and the one-hot labels: at most {CERTIFICATE_TOL:g} of the original's means no linear "
                  f"classifier predicts the group from them better than a constant, on these words "
                  f"(Belrose et al. 2023). It says nothing of nonlinear probes (the residual tests). "
                  f"*edited*: the method's edit in float64, before any unit scaling; *unit rows*: the same "
                  f"scaled to unit length; the verdict is for the rows the method outputs.", ""]
    lines += ["| method | before | edited | unit rows | linearly guarded? |", "| --- | ---: | ---: | ---: | --- |"]
    for emb, c in certs.items():
        if "error" in c:
            lines.append(f"| {emb} | n/a | n/a | n/a | no certificate: {c['error'].replace('|', '/')} |")
            continue
        edited = "-" if c["edited"] is None else f"{c['edited']:.2g}"
        which = "edited rows" if c["output"] == "edited" else "unit rows"
        lines.append(f"| {emb} | {c['before']:.2g} | {edited} | {c['normalized']:.2g} | "
                     f"{'yes' if c['guarded'] else 'no'} ({which}) |")
    return lines + [""]


def _figure_lines(meta: dict) -> list[str]:
    """Each figure of the run, linked, with its caption (or why it was not drawn)."""
    from .figures import RUN_FIGURES

    figures = meta.get("figures")
    if figures is None:  # a report of an older run: the occupation plot only
        return [("![occupations](occupations.png)" if not meta.get("plot_error")
                 else f"Occupation plot not drawn: {meta['plot_error']}"), ""]
    lines = []
    for n, (file, what) in enumerate(RUN_FIGURES.items(), 1):
        fig = figures.get(file) or {}
        if "caption" in fig:
            lines += [f"![{what}]({file})", "", f"*Figure {n}.* {fig['caption']}", ""]
        else:
            lines += [f"Figure {n} ({what}) not drawn: {fig.get('error', 'not made by this run')}", ""]
    return lines


def _columns_sentence(methods: list[str]) -> str:
    columns = ", ".join(DEBIASERS[m].column for m in methods)
    raw = [m for m in methods if _keeps_lengths(m)]
    unit = [m for m in methods if m not in raw]
    which = {1: "The debiased embedding is", 2: "Both debiased embeddings are"}.get(
        len(methods), f"All {len(methods)} debiased embeddings are")
    if raw and unit:
        which = f"{', '.join(DEBIASERS[m].column for m in unit)} {'is' if len(unit) == 1 else 'are'}"
    text = f"columns: original (as loaded), {columns}."
    if unit:
        text += f" {which} unit-normalized: every row has length 1 (zero rows stay zero)."
    if raw:
        text += (f" {', '.join(DEBIASERS[m].column for m in raw)}: rows as the eraser's affine edit leaves them, "
                 f"not rescaled (its linear guarantee is for those rows).")
    return text


def _keeps_lengths(method: str) -> bool:
    """Whether ``method``'s estimator leaves its rows unscaled by default (``normalize=False``)."""
    import inspect

    param = inspect.signature(DEBIASERS[method].estimator_class()).parameters.get("normalize")
    return param is not None and param.default is False


def _lists_section(meta: dict) -> list[str]:
    p = meta["parameters"]
    published = p.get("lists", "published") == "published"
    lines = ["", "## Word lists", "",
             f"List set: **{p.get('lists', 'published')}**"
             + (" (published lists: numbers comparable with the literature)." if published else
                " (the embdebias curated lists: numbers not comparable with published ones)."), ""]
    for role, info in (meta.get("lists") or {}).items():
        size = f", {info['size']:,} entries" if "size" in info else ""
        lines.append(f"- {role}: {info['name']} ({info['source']}{size})")
    if p.get("expand"):
        for name in _methods(meta):
            if DEBIASERS[name].expandable:
                lines.append(f"- {name} debias keeps the SVM expansion of the seed list instead (see Run)")
    return lines


def _run_lines(meta: dict) -> list[str]:
    """The "Run" section: parameters, subspace, expansion, each method's fit, timings, versions."""
    lines = [_parameters_line(meta).replace("the gender-specific list as given",
                                            f"the {meta['attribute']['name']}-specific words as given")
             if meta.get("attribute") else _parameters_line(meta), _subspace_line(meta)]
    if meta.get("expansion"):
        lines.append(_expansion_line(meta["expansion"]))
    for name in run_order(_methods(meta)):
        spec = DEBIASERS[name]
        lines += spec.estimator_class().report_lines(meta.get(spec.info_key) or {})
    lines += _shortfall_lines(meta) + _output_lines(meta)
    t = meta["timings_s"]
    lines.append("- timings (s): " + ", ".join(f"{k2} {v:.1f}" for k2, v in t.items())
                 + (f" (reused: {', '.join(meta['reused_steps'])})" if meta["reused_steps"] else ""))
    lines.append("- versions: " + ", ".join(f"{k2} {v}" for k2, v in meta["versions"].items()))
    return lines


def _output_lines(meta: dict) -> list[str]:
    """Which methods' vectors were written, and which were evaluated row by row without being
    written (``--save``), with the files of their fitted parameters."""
    outputs = meta.get("outputs") or {}
    methods = _methods(meta)
    written = [f"`{outputs[m]}`" for m in methods if outputs.get(m)]
    lazy = [m for m in methods if m in outputs and not outputs[m]]
    params = outputs.get("params") or {}
    if not lazy:
        return []
    return [f"- debiased vectors written: {', '.join(written) or 'none'}; evaluated row by row as the metrics "
            f"read them, not written (--save): {', '.join(lazy)} (their rows equal the vectors a transform "
            f"writes to float32 rounding, so a word on a classifier's boundary may fall the other way)"
            + (f"; fitted parameters: {', '.join(f'`{params[m]}`' for m in methods if m in params)} "
               f"(`embdebias debias --params FILE` writes a method's vectors from them)" if params else "")]


def _shortfall_lines(meta: dict) -> list[str]:
    """The words the methods' lists name that the vocabulary lacks, stated once (not as warnings
    when they are expected: the built-in embedding has no phrase tokens such as Catholic_priest)."""
    found = meta.get("shortfalls") or {}
    if not found:
        return []
    why = (f"expected on the built-in {meta['embedding']['name']}, whose vocabulary has no phrase tokens and "
           f"lacks some rare forms; the methods use the rest" if meta.get("expected_shortfalls")
           else "each also warned of when the run fitted it; the methods use the rest")
    return [f"- words of the methods' lists not in the vocabulary ({why}):"] + [
        f"  - {name}: {'; '.join(messages)}" for name, messages in found.items()]


def _parameters_line(meta: dict) -> str:
    """The subspace's dimension, the methods' own parameters, the expansion, limit and seed."""
    p = meta["parameters"]
    own = [param.report_name for name in _methods(meta) for param in DEBIASERS[name].params]
    return (f"- parameters: k = {p['n_components']}, "
            + "".join(f"{name} = {p[name]}, " for name in dict.fromkeys(own) if name in p)
            + (f"SVM expansion on {p['n_train']:,} training words, " if p.get("expand") else
               "no SVM expansion (the gender-specific list as given), ")
            + f"limit = {p['limit']}, seed = {meta['seeds']['random_state']}" + _methods_note(p))


def _subspace_line(meta: dict) -> str:
    """The definitional pairs used, the explained variance, missing and lower-cased words."""
    p, sub = meta["parameters"], meta["subspace"]
    ratios = sub["explained_variance_ratio"][:max(p["n_components"], 3)]
    attr = meta.get("attribute")
    if attr:
        return (f"- {attr['name']} subspace: {len(p['definitional_pairs'])} defining sets of {len(attr['groups'])} "
                f"groups ({', '.join(attr['groups'])}; `{attr['path']}`), explained variance of the first "
                f"components {', '.join(f'{r:.3f}' for r in ratios)}"
                + (f"; missing: {', '.join(sub['missing_words'])}" if sub["missing_words"] else ""))
    return (f"- bias subspace: {len(p['definitional_pairs'])} definitional pairs, explained variance of the "
            f"first components {', '.join(f'{r:.3f}' for r in ratios)}"
            + (f"; missing: {', '.join(sub['missing_words'])}" if sub["missing_words"] else "")
            + (f"; lower-cased: {', '.join(f'{a}->{b}' for a, b in sub['case_mapped'].items())}"
               if sub.get("case_mapped") else ""))


def _methods_note(p: dict) -> str:
    """``, methods = ...`` when the run's methods are not the default ones."""
    methods = tuple(p.get("methods") or DEFAULT_METHODS)
    return "" if methods == DEFAULT_METHODS else f", methods = {', '.join(methods)}"


def _expansion_line(exp: dict) -> str:
    """The report line of the SVM expansion: its figures, missing seeds, added words."""
    shown = {k: v for k, v in exp.items() if not isinstance(v, (list, dict))}
    line = "- SVM expansion: " + ", ".join(f"{k} = {format_scalar(v)}" for k, v in shown.items())
    if exp.get("seed_missing"):
        line += f"; seeds not in the vocabulary: {', '.join(exp['seed_missing'])}"
    added = exp.get("added_words") or []
    if added:
        line += f"; added: {', '.join(added[:50])}" + (
            f" and {len(added) - 50} more" if len(added) > 50 else "")
    return line
