"""MAC, RND and RIPA of embdebias against WEFE 1.0.1, on GloVe 6B 50d, per bundled attribute.

Fidelity, not speed: for every attribute (``--attributes``, default gender, race and
religion, each a bundled name or a JSON path) the same queries go to both tools:

* **MAC**: the groups' words against all the attribute's stereotype sets at once, and
  against its neutral words (WEFE ``MAC().run_query``);
* **RND**: each pair of groups against each attribute set (stereotype sets and neutral
  words), unit-normalized vectors and Euclidean distance (WEFE ``RND().run_query(...,
  normalize=True, distance="norm")``), and with the cosine variant, whose WEFE value
  (``distance="cos"``: a difference of cosine *similarities*) is compared with the
  negative of ours (a difference of cosine *distances*);
* **RIPA**: each pair of groups, the pairs being the attribute's defining sets restricted
  to the two groups, against each attribute set (WEFE ``RIPA().run_query``, raw vectors).

Same sets for both: every word lower-cased (GloVe 6B is), words not in the vocabulary
dropped before either tool sees them (the table counts them), and for RIPA only the pairs
whose two words are both present and appear in no earlier pair of the query: WEFE keys a
set's vectors by word, so a repeated word (race's "caucasian" in two defining sets)
would shift its pairs, and a missing word would shift every later pair. Vectors are
handed to WEFE in float64 so that the comparison is of the formulas, not of float32
rounding.

WEFE pins numpy < 2, so it runs in a scratch venv (``--wefe-python``, default
``/tmp/wefe/bin/python``: ``python -m venv /tmp/wefe && /tmp/wefe/bin/pip install
wefe==1.0.1``); this file is also its runner (``--wefe-side DIR``, which imports nothing
of embdebias). Without that Python the WEFE columns are empty and the table says so.

Usage::

    python benchmarks/bench_attributes.py --out benchmarks/results/attributes.md
    python benchmarks/bench_attributes.py --attributes gender --tolerance 1e-6
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import subprocess
import sys
import tempfile
from itertools import combinations
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_WEFE_PYTHON = "/tmp/wefe/bin/python"


# -- the WEFE side (runs in the scratch venv; numpy, gensim and wefe only) ---------------------------


def wefe_side(directory: str) -> None:
    """Run every query of ``DIR/queries.json`` with WEFE on ``DIR/vectors.npy`` + ``words.txt``;
    write ``DIR/wefe.json`` (one value per query, and WEFE's version)."""
    import wefe
    from gensim.models import KeyedVectors
    from wefe.metrics import MAC, RIPA, RND
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    d = Path(directory)
    vectors = np.load(d / "vectors.npy")
    words = (d / "words.txt").read_text(encoding="utf-8").split("\n")
    kv = KeyedVectors(vectors.shape[1], dtype=np.float64)
    kv.add_vectors(words, vectors)
    model = WordEmbeddingModel(kv, "glove")
    out = []
    for q in json.loads((d / "queries.json").read_text(encoding="utf-8")):
        query = Query(q["targets"], q["attributes"],
                      [f"t{i}" for i in range(len(q["targets"]))], [f"a{i}" for i in range(len(q["attributes"]))])
        if q["metric"] == "MAC":
            res = MAC().run_query(query, model)
        elif q["metric"] == "RIPA":
            res = RIPA().run_query(query, model)
        else:
            res = RND().run_query(query, model, normalize=True, distance="norm" if q["metric"] == "RND" else "cos")
        out.append(float(res["result"]))
    (d / "wefe.json").write_text(json.dumps({"version": wefe.__version__, "values": out}), encoding="utf-8")


# -- our side ------------------------------------------------------------------------------------------


def present(words, vocab: set) -> tuple[list, int]:
    """``(lower-cased words in the vocabulary, first occurrence kept; how many were dropped)``."""
    low = list(dict.fromkeys(w.lower() for w in words))
    kept = [w for w in low if w in vocab]
    return kept, len(low) - len(kept)


def ripa_pairs(sets, i: int, j: int, vocab: set) -> tuple[list, list, int]:
    """The two columns of the defining sets' pairs (i, j) both tools can use: both words present,
    neither seen in an earlier pair (see the module docstring); and how many pairs were dropped."""
    xs, ys, seen = [], [], set()
    for s in sets:
        x, y = s[i].lower(), s[j].lower()
        if x in vocab and y in vocab and x not in seen and y not in seen:
            xs.append(x)
            ys.append(y)
        seen.update((x, y))
    return xs, ys, len(sets) - len(xs)


def attribute_queries(attr, vocab: set) -> list[dict]:
    """Every query of one attribute, with the words each set lost."""
    groups = {g: present(attr.group_words[g], vocab) for g in attr.groups}
    sets = {name: present(words, vocab) for name, words in attr.attribute_sets.items()}
    if attr.neutral_words:
        sets["neutral words"] = present(attr.neutral_words, vocab)
    lost_groups = sum(n for _, n in groups.values())
    group_words = [w for w, _ in groups.values()]
    qs = []
    stereo = {n: v for n, v in sets.items() if n != "neutral words"}
    if stereo:
        qs.append(query(attr, "MAC", "groups x stereotype sets", group_words, [w for w, _ in stereo.values()],
                        lost_groups + sum(n for _, n in stereo.values())))
    if "neutral words" in sets:
        qs.append(query(attr, "MAC", "groups x neutral words", group_words, [sets["neutral words"][0]],
                        lost_groups + sets["neutral words"][1]))
    for i, j in combinations(range(attr.k), 2):
        qs += pair_queries(attr, i, j, groups, sets, vocab)
    return qs


def query(attr, metric: str, name: str, targets: list, attributes: list, dropped: int) -> dict:
    return {"attribute": attr.name, "metric": metric, "query": name, "targets": targets, "attributes": attributes,
            "dropped": dropped}


def pair_queries(attr, i: int, j: int, groups: dict, sets: dict, vocab: set) -> list[dict]:
    """The RND and RIPA queries of the groups ``i`` and ``j`` against every attribute set."""
    gi, gj = attr.groups[i], attr.groups[j]
    xs, ys, lost_pairs = ripa_pairs(attr.defining_sets, i, j, vocab)
    out = []
    for name, (words, lost) in sets.items():
        for metric in ("RND", "RND cos"):
            out.append(query(attr, metric, f"{gi} vs {gj} x {name}", [groups[gi][0], groups[gj][0]], [words],
                             groups[gi][1] + groups[gj][1] + lost))
        out.append(query(attr, "RIPA", f"{gi} vs {gj} pairs x {name}", [xs, ys], [words], lost + lost_pairs))
    return out


def ours(emb, q: dict) -> float:
    """Our value of a query, on the same (already filtered) sets, in WEFE's convention."""
    from embdebias.metrics import mac, ripa, rnd

    common = dict(max_missing=0.0, lowercase=False)
    if q["metric"] == "MAC":
        return mac(emb, q["targets"], q["attributes"], **common).value
    if q["metric"] == "RIPA":
        return ripa(emb, q["targets"], q["attributes"], **common).value
    if q["metric"] == "RND":
        return rnd(emb, q["targets"], q["attributes"], **common).value
    return -rnd(emb, q["targets"], q["attributes"], distance="cosine", **common).value  # WEFE's "cos" sign


def run_wefe(emb, queries: list, python: str) -> tuple[list | None, str]:
    """WEFE's values of the queries (None when its Python is missing or fails) and a note."""
    if not Path(python).exists():
        return None, f"WEFE not run: {python} does not exist"
    words = sorted({w for q in queries for s in q["targets"] + q["attributes"] for w in s})
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        np.save(d / "vectors.npy", emb[words].astype(np.float64))
        (d / "words.txt").write_text("\n".join(words), encoding="utf-8")
        (d / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
        proc = subprocess.run([python, str(Path(__file__).resolve()), "--wefe-side", tmp],
                              capture_output=True, text=True)
        if proc.returncode:
            return None, f"WEFE failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else '?'}"
        data = json.loads((d / "wefe.json").read_text(encoding="utf-8"))
    return data["values"], f"WEFE {data['version']} ({python})"


def table(rows: list, tolerance: float) -> list[str]:
    """The per-query table and the largest difference per attribute and metric."""
    out = ["| attribute | metric | query | words dropped | embdebias | WEFE | abs diff |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        wefe = "n/a" if r["wefe"] is None else f"{r['wefe']:.9f}"
        diff = "n/a" if r["diff"] is None else f"{r['diff']:.1e}"
        out.append(f"| {r['attribute']} | {r['metric']} | {r['query']} | {r['dropped']} | {r['ours']:.9f} | "
                   f"{wefe} | {diff} |")
    out += ["", "Largest difference per attribute and metric:", "",
            f"| attribute | metric | queries | max abs diff | within {tolerance:g} |", "|---|---|---|---|---|"]
    keys = list(dict.fromkeys((r["attribute"], r["metric"]) for r in rows))
    for attribute, metric in keys:
        diffs = [r["diff"] for r in rows if (r["attribute"], r["metric"]) == (attribute, metric)]
        known = [d for d in diffs if d is not None]
        worst = max(known) if known else None
        ok = "n/a" if worst is None else ("yes" if worst <= tolerance else "NO")
        out.append(f"| {attribute} | {metric} | {len(diffs)} | {'n/a' if worst is None else f'{worst:.1e}'} | {ok} |")
    return out


def markdown(rows: list, note: str, emb, args) -> list[str]:
    """The lines of ``attributes.md``."""
    worst = max((r["diff"] for r in rows if r["diff"] is not None), default=None)
    return [
        "# MAC, RND and RIPA: embdebias against WEFE 1.0.1 (issue 23, item 6)", "",
        f"Written by `python benchmarks/bench_attributes.py --attributes {args.attributes}"
        f"{' --out ' + args.out if args.out else ''}` on "
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC (Python {platform.python_version()}, "
        f"numpy {np.__version__}); {note}. Embedding: {emb.name}, {len(emb):,} x {emb.dim}.", "",
        "Conventions (see the module docstring and `docs/user_guide/metrics/`): MAC is a mean cosine *distance* "
        "in both tools (WEFE and Manzini et al. name it a similarity); RND on unit vectors with Euclidean "
        "distance, the mean over the attribute words (WEFE's and Garg et al.'s code; the paper prints a sum); "
        "'RND cos' compares WEFE's `distance=\"cos\"` with the *negative* of our `distance=\"cosine\"` (WEFE "
        "subtracts cosine similarities, we cosine distances); RIPA on raw vectors, the mean over the attribute "
        "words of the mean over the pairs of w . unit(x - y). Both tools get the same lower-cased, "
        "in-vocabulary sets ('words dropped' counts what was removed first, pairs for RIPA), WEFE in float64.",
        "", f"Largest |embdebias - WEFE| over all {len(rows)} queries: "
        + ("n/a" if worst is None else f"{worst:.1e} ({'within' if worst <= args.tolerance else 'OVER'} "
                                       f"the tolerance {args.tolerance:g})."), "",
    ] + table(rows, args.tolerance) + [
        "", "The rest of issue 23's fidelity table, each written by its own script:", "",
        "- multiclass hard debias against WEFE's `MulticlassHardDebias` (both neutralize modes): "
        "`attributes_debias.md` (`python benchmarks/bench_attributes_debias.py`);",
        "- the two-sided WEAT p-value against the enumeration of every partition, and the factual association "
        "on GloVe 6B 50d beside word2vec: `attributes_factual.md` (`python benchmarks/bench_factual.py`).", ""]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--attributes", default="gender,race,religion",
                   help="comma-separated bundled attribute names or JSON paths")
    p.add_argument("--wefe-python", default=DEFAULT_WEFE_PYTHON)
    p.add_argument("--tolerance", type=float, default=1e-6)
    p.add_argument("--out", help="write the Markdown here (default: print it)")
    p.add_argument("--wefe-side", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.wefe_side:
        wefe_side(args.wefe_side)
        return 0
    sys.path.insert(0, str(REPO))
    from embdebias import load_default
    from embdebias.data.attributes import load_attribute

    emb = load_default()
    vocab = set(emb.words)
    queries = []
    for name in [a.strip() for a in args.attributes.split(",") if a.strip()]:
        queries += attribute_queries(load_attribute(name), vocab)
    values, note = run_wefe(emb, queries, args.wefe_python)
    rows = []
    for k, q in enumerate(queries):
        mine = ours(emb, q)
        theirs = None if values is None else values[k]
        rows.append({**q, "ours": mine, "wefe": theirs, "diff": None if theirs is None else abs(mine - theirs)})
    lines = markdown(rows, note, emb, args)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    worst = max((r["diff"] for r in rows if r["diff"] is not None), default=None)
    return 0 if worst is None or worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
