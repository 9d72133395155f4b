"""The bias card of a run: ``report.card.json`` (valid against ``docs/_static/bias-card.schema.json``)
and ``report.card.md``, a Markdown block to paste into a model card.

Everything comes from the run's ``report.json``: the embedding and its content fingerprint,
the attribute and its groups, the word lists, the methods, each headline measure of the report's
summary table (:func:`~embdebias.report.summary.headline_rows`) with its interval for every
column and, for a debiased column, its paired change and whether it is beyond the noise; the
verdict line of each method (:func:`~embdebias.report.summary.column_verdict`); each linear method's
certificate (:attr:`~embdebias.report.model.Report.certificates`: whether it is linearly guarded on the
attribute's labelled words); the quality kept
(the headline quality measures' changes); the toolkit version; the command that repeats the run.
No number is computed here that the report does not hold.

The card names no machine path: the input of a run of a user's file is its file name only, and so
is every absolute path in the command (its input, a list file; ``report.json`` keeps the full
paths); the command's out-dir is ``DIR``.
"""

from __future__ import annotations

import json
from pathlib import Path

from .rundir import read_run, run_command

__all__ = ["card_dict", "card_markdown", "write_card", "read_run", "run_command", "CARD_JSON", "CARD_MD"]

#: The version of the card's layout (the schema's ``card_version``).
CARD_VERSION = 1
#: The files of a run that hold its card.
CARD_JSON, CARD_MD = "report.card.json", "report.card.md"


def _source_name(meta: dict) -> str:
    source = str((meta.get("input") or {}).get("source") or meta["embedding"]["name"])
    return Path(source).name


def _entry(report, key, emb: str, by_key: dict) -> dict:
    from .summary import mark_text, stat_kind

    cell = report.cells[key].get(emb)
    out = {"value": None if cell is None else cell.value, "ci_low": None if cell is None else cell.ci_low,
           "ci_high": None if cell is None else cell.ci_high}
    c = by_key.get((emb, *key))
    if c is not None:
        out.update(change=c["change"], change_ci_low=c["ci_low"], change_ci_high=c["ci_high"],
                   outcome=c["outcome"], mark=mark_text(c, stat_kind(key[0], key[2])))
    return out


def card_dict(meta: dict, command: list[str]) -> dict:
    """The bias card of a run (see the module's docstring) from its ``report.json`` (``meta``)."""
    from ..debias.table import DEFAULT_METHODS, column_order
    from .model import Report, metric_of
    from .summary import attribute_name, column_verdict, headline_rows, opening_sentences

    report = Report.from_dict(meta["evaluation"])
    by_key = {(c["embedding"], c["metric"], c["test"], c["statistic"]): c for c in report.comparisons}
    headline = []
    for m, t, s, fairer in headline_rows(report):
        headline.append({"measure": f"{metric_of(m).title or m}, {t}: {report.labels.get(m, {}).get(s, s)}",
                         "metric": m, "test": t, "statistic": s, "fairer": str(fairer),
                         "kind": "quality" if metric_of(m).kind == "quality" else "bias",
                         "columns": {e: _entry(report, (m, t, s), e, by_key) for e in report.embeddings}})
    attr = meta.get("attribute") or {}
    p = meta["parameters"]
    emb = meta["embedding"]
    return {
        "card_version": CARD_VERSION,
        "toolkit": {"name": "embdebias", "version": meta["versions"].get("embdebias")},
        "embedding": {"name": emb["name"], "source": _source_name(meta), "words": emb["words"], "dim": emb["dim"],
                      "fingerprint": emb.get("fingerprint")},
        "attribute": {"name": attr.get("name") or attribute_name(report),
                      "groups": list(attr.get("groups") or p.get("groups") or ["female", "male"])},
        "word_lists": {"set": p.get("lists", "published"),
                       "lists": [{"role": role, "name": info.get("name"), "source": info.get("source"),
                                  "size": info.get("size")} for role, info in (meta.get("lists") or {}).items()]},
        "methods": column_order(p.get("methods") or DEFAULT_METHODS),
        "columns": list(report.embeddings),
        "interval_level": report.params.get("bootstrap_level", 0.95),
        "opening": opening_sentences(report),
        "headline": headline,
        "verdict": {e: column_verdict(report, e) for e in report.embeddings[1:]},
        "linear_guard": {e: dict(c) for e in report.embeddings[1:]
                         if (c := report.certificates.get(e)) and "error" not in c},
        "quality_kept": {e: [{"measure": h["measure"], "original": h["columns"][report.embeddings[0]]["value"],
                              "value": h["columns"][e]["value"], "outcome": h["columns"][e].get("outcome")}
                             for h in headline if h["kind"] == "quality"] for e in report.embeddings[1:]},
        "command": " ".join(Path(word).name if Path(word).is_absolute() else word for word in command),
    }


def _number(entry: dict) -> str:
    if entry.get("value") is None:
        return "n/a"
    text = f"{entry['value']:.3f}"
    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
        text += f" [{entry['ci_low']:.2f}, {entry['ci_high']:.2f}]"
    # the summary table's words (fairer with the share removed, small change, less fair; better or
    # worse for a quality number), so a card never calls a small change a win
    return text + (f" ({entry['mark']})" if entry.get("mark") else "")


def card_markdown(card: dict) -> str:
    """``report.card.md``: the card as a Markdown block for a model card."""
    emb, attr = card["embedding"], card["attribute"]
    lines = [f"### Bias card: {emb['name']} ({attr['name']})", "",
             f"- **Embedding**: {emb['name']}" + (f" (`{emb['source']}`)" if emb["source"] != emb["name"] else "")
             + f", {emb['words']:,} words x {emb['dim']} dimensions"
             + (f"; fingerprint `{emb['fingerprint']}`" if emb.get("fingerprint") else ""),
             f"- **Attribute**: {attr['name']} ({', '.join(attr['groups'])})",
             f"- **Word lists** ({card['word_lists']['set']}): "
             + "; ".join(f"{w['role']}: {w['name']}" + (f" ({w['size']:,})" if w.get("size") else "")
                         for w in card["word_lists"]["lists"]),
             f"- **Methods**: {', '.join(card['methods'])}",
             f"- **Toolkit**: embdebias {card['toolkit']['version']}",
             f"- **Command**: `{card['command']}`", ""]
    cols = card["columns"]
    lines += ["| measure | fairer | " + " | ".join(cols) + " |",
              "| --- | --- | " + " | ".join(["---:"] * len(cols)) + " |"]
    lines += [f"| {h['measure'].replace('|', '/')} | {h['fairer']} | "
              + " | ".join(_number(h["columns"][c]) for c in cols) + " |" for h in card["headline"]]
    lines += ["", f"[a, b]: {card['interval_level']:.0%} bootstrap interval.", ""]
    for col, text in card["verdict"].items():
        kept = card["quality_kept"].get(col) or []
        quality = "; quality " + ", ".join(
            f"{q['measure'].split(', ', 1)[-1]} {q['original']:.3f} -> {q['value']:.3f}"
            + (f" ({q['outcome']})" if q.get("outcome") else "")
            for q in kept if q["original"] is not None and q["value"] is not None) if kept else ""
        lines.append(f"- **Verdict, {col}**: {text}{quality}.")
    return "\n".join(lines) + "\n"


def write_card(run_dir, meta: dict | None = None, *, inputs=()) -> dict:
    """Write ``report.card.json`` and ``report.card.md`` into ``run_dir`` (atomically); the card."""
    from .._atomic import atomic_file

    run_dir = Path(run_dir)
    meta = read_run(run_dir) if meta is None else meta
    card = card_dict(meta, run_command(run_dir, meta))
    with atomic_file(run_dir / CARD_JSON, inputs=inputs) as tmp:
        tmp.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with atomic_file(run_dir / CARD_MD, inputs=inputs) as tmp:
        tmp.write_text(card_markdown(card), encoding="utf-8")
    return card
