"""Paper 004's Tables 1-4 (Fersini et al.), ours beside theirs, for three embedding families.

Fersini et al. report WEAT (Table 1), RNSB (Table 2), ECT (Table 3) and BAT (Table 4)
for the original (o), soft- (s) and hard-debiased (h) Word2Vec GoogleNews, fastText
(wiki-news) and GloVe Common Crawl embeddings, all 300-dimensional. :func:`tables`
lays out our numbers for three finished ``run`` directories (one per family) in the same
shape, each cell ``ours / paper``.

The paper's numbers below are transcribed from its text (``../shared/papers/004_*``).
Our RNSB per test is the one whose classifier is trained on the test's attribute sets
(the WEFE convention; n/a when a set has fewer than 10 words in the vocabulary); the
paper's ECT rows "Positive words" and "Negative words" have no bundled counterpart
(n/a on our side); "Arts" is the arts set of the science-arts test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

FAMILIES = ("word2vec", "fasttext", "glove")
COLUMNS = ("original", "soft", "hard")

#: {table: [(paper row, our key, {family: (o, s, h)})]}
PAPER = {
    "WEAT effect size (Table 1)": [
        ("Career-Family", "gender_career_family", {"word2vec": (0.35, -0.12, 0.03), "fasttext": (0.38, 0.03, 0.03), "glove": (0.41, -0.10, 0.01)}),
        ("Math-Arts", "gender_math_arts", {"word2vec": (0.71, -0.20, -0.09), "fasttext": (0.66, 0.19, 0.01), "glove": (0.38, -0.01, -0.03)}),
        ("Science-Arts", "gender_science_arts", {"word2vec": (0.90, -0.01, 0.00), "fasttext": (0.89, 0.29, 0.09), "glove": (1.06, -0.07, -0.06)}),
        ("Intel.-Appearance", "gender_intelligence_appearance", {"word2vec": (1.18, -0.12, -0.21), "fasttext": (0.94, 0.16, -0.14), "glove": (0.96, 0.04, -0.09)}),
        ("Intel.-Sensitive", "gender_intelligence_sensitivity", {"word2vec": (0.91, 0.21, -0.07), "fasttext": (0.45, 0.12, -0.06), "glove": (0.69, 0.03, -0.07)}),
        ("Pos-Neg words", "gender_positive_negative", {"word2vec": (-0.40, -0.30, -0.18), "fasttext": (-0.32, -0.27, -0.13), "glove": (-0.42, -0.23, -0.05)}),
        ("Man-Woman roles", "gender_man_roles_woman_roles", {"word2vec": (1.83, 0.97, 0.74), "fasttext": (1.81, 1.06, 0.78), "glove": (1.78, 0.87, 0.82)}),
    ],
    "RNSB (Table 2)": [
        ("Career-Family", "gender_career_family", {"word2vec": (.0059, .0057, .0065), "fasttext": (.0026, .0022, .0031), "glove": (.0075, .0047, .0036)}),
        ("Math-Arts", "gender_math_arts", {"word2vec": (.0008, .0006, .0007), "fasttext": (.0008, .0006, .0005), "glove": (.0012, .0011, .0010)}),
        ("Science-Arts", "gender_science_arts", {"word2vec": (.0005, .0006, .0003), "fasttext": (.0005, .0005, .0004), "glove": (.0006, .0006, .0004)}),
        ("Intel.-Appearance", "gender_intelligence_appearance", {"word2vec": (.0069, .0035, .0037), "fasttext": (.0062, .0035, .0042), "glove": (.0100, .0059, .0048)}),
        ("Intel.-Sensitive", "gender_intelligence_sensitivity", {"word2vec": (.0022, .0019, .0016), "fasttext": (.0021, .0014, .0020), "glove": (.0024, .0016, .0018)}),
        ("Pos-Neg words", "gender_positive_negative", {"word2vec": (.0204, .0165, .0134), "fasttext": (.0499, .0454, .0404), "glove": (.0339, .0324, .0293)}),
        ("Man-Woman roles", "gender_man_roles_woman_roles", {"word2vec": (.0076, .0011, .0012), "fasttext": (.0029, .0006, .0003), "glove": (.0051, .0008, .0005)}),
    ],
    "ECT (Table 3)": [
        ("Career", "career", {"word2vec": (.714, 1.00, 1.00), "fasttext": (.952, .929, .952), "glove": (.976, .976, 1.00)}),
        ("Family", "family", {"word2vec": (.762, .833, 1.00), "fasttext": (.952, .976, .976), "glove": (.905, .976, 1.00)}),
        ("Science", "science", {"word2vec": (.571, .857, 1.00), "fasttext": (.976, .976, 1.00), "glove": (.976, 1.00, 1.00)}),
        ("Arts", "arts, gender_science_arts", {"word2vec": (.810, .952, .976), "fasttext": (.833, .929, 1.00), "glove": (.929, .952, .952)}),
        ("Appearance", "appearance", {"word2vec": (.363, .879, .904), "fasttext": (.507, .833, .858), "glove": (.448, .952, .965)}),
        ("Intelligence", "intelligence", {"word2vec": (.744, .976, .998), "fasttext": (.841, .943, .991), "glove": (.916, .990, .999)}),
        ("Pleasant", "pleasant", {"word2vec": (.733, .978, .983), "fasttext": (.943, .966, .989), "glove": (.938, .978, .997)}),
        ("Unpleasant", "unpleasant", {"word2vec": (.800, .962, .984), "fasttext": (.872, .912, .976), "glove": (.900, .976, .985)}),
        ("Positive words", None, {"word2vec": (.771, .972, .994), "fasttext": (.925, .982, .997), "glove": (.936, .992, .999)}),
        ("Negative words", None, {"word2vec": (.791, .964, .993), "fasttext": (.939, .981, .997), "glove": (.954, .992, .999)}),
        ("Man roles", "man_roles", {"word2vec": (.972, .986, .993), "fasttext": (.979, .972, 1.00), "glove": (.958, .958, .993)}),
        ("Woman roles", "woman_roles", {"word2vec": (.747, .956, .879), "fasttext": (.780, .885, 1.01), "glove": (.511, .923, .736)}),
    ],
    "BAT (Table 4)": [
        ("Definition", ("all", "definition"), {"word2vec": (.826, .823, .795), "fasttext": (.911, .777, .820), "glove": (.835, .770, .809)}),
        ("Stereotype", ("all", "stereotype"), {"word2vec": (.134, .102, .116), "fasttext": (.065, .048, .061), "glove": (.115, .077, .079)}),
        ("None", ("all", "none"), {"word2vec": (.039, .075, .089), "fasttext": (.023, .175, .119), "glove": (.050, .152, .111)}),
        ("Sub-Definition", ("sub", "definition"), {"word2vec": (.600, .700, .500), "fasttext": (.825, .500, .700), "glove": (.675, .525, .500)}),
        ("Sub-Stereotype", ("sub", "stereotype"), {"word2vec": (.300, .200, .275), "fasttext": (.125, .125, .100), "glove": (.275, .125, .225)}),
        ("Sub-None", ("sub", "none"), {"word2vec": (.100, .100, .225), "fasttext": (.050, .375, .200), "glove": (.050, .350, .275)}),
    ],
}


def _fmt(v, digits: int) -> str:
    return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}f}"


def family_values(out_dir, source, *, random_state: int = 0, rnsb_runs: int = 10, lists: str = "published",
                  max_missing: float = 0.2) -> dict:
    """Our numbers of one finished run: ``{table: {our key: {column: value}}}``."""
    from embdebias import wordlists
    from embdebias.report import Report

    from reproduce import _load_run, ect_values, rnsb_values

    meta, embs = _load_run(Path(out_dir), source, None)
    report = Report.from_dict(meta["evaluation"])
    tests = wordlists.weat_tests("gender")
    tables = list(PAPER)
    rnsb = rnsb_values(embs, tests, random_state=random_state, n_runs=rnsb_runs, max_missing=max_missing)
    return {
        tables[0]: {t.id: {c: report.values.get(("weat", t.id, "effect_size"), {}).get(c) for c in COLUMNS}
                    for t in tests},
        tables[1]: {t.id: rnsb[t.id]["ab"] for t in tests},
        tables[2]: {name.rsplit(" (", 1)[0]: v for name, _, v in ect_values(embs, tests, lists, max_missing)},
        tables[3]: {(test, stat): {c: report.values.get(("bat", test, stat), {}).get(c) for c in COLUMNS}
                    for test in ("all", "sub") for stat in ("definition", "stereotype", "none")},
        "embedding": meta["embedding"],
    }


def tables(values: dict) -> str:
    """Markdown: each of paper 004's tables with ``ours / paper`` cells per family and column.

    ``values``: ``{family: family_values(...)}`` for some of :data:`FAMILIES`.
    """
    fams = [f for f in FAMILIES if f in values]
    header = ["row"] + [f"{f} {c[0]}" for f in fams for c in COLUMNS]
    parts = []
    for table, rows in PAPER.items():
        digits = 4 if table.startswith("RNSB") else 3 if not table.startswith("WEAT") else 2
        lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
        for label, key, paper in rows:
            cells = []
            for f in fams:
                ours = values[f][table].get(key, {}) if key is not None else {}
                cells += [f"{_fmt(ours.get(c), digits)} / {_fmt(p, digits)}" for c, p in zip(COLUMNS, paper[f])]
            lines.append("| " + " | ".join([label, *cells]) + " |")
        parts += [f"### {table}: ours / paper", "", *lines, ""]
    described = "; ".join(f"{f}: {values[f]['embedding']['name']} ({values[f]['embedding']['words']:,} words x "
                          f"{values[f]['embedding']['dim']})" for f in fams)
    parts += [f"Ours: {described}. Paper 004: GoogleNews word2vec (3M x 300), fastText wiki-news "
              f"(1M x 300), GloVe Common Crawl (2.2M x 300).", ""]
    return "\n".join(parts)


def write_json(values: dict, path) -> None:
    """The numbers behind :func:`tables`, keys made JSON-safe."""
    def clean(obj):
        if isinstance(obj, dict):
            return {" / ".join(k) if isinstance(k, tuple) else str(k): clean(v) for k, v in obj.items()}
        return obj
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(clean(values), indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
