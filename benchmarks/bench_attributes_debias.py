"""Multiclass hard debias (Manzini et al. 2019) against WEFE 1.0.1's ``MulticlassHardDebias``.

Writes ``benchmarks/results/attributes_debias.md``. On GloVe 6B 50d (the built-in
default), for the bundled attributes race and religion, both tools get the same sets:

* the attribute's defining sets (WEFE's ``definitional_sets``) and a subspace of
  ``k - 1`` components (ours by default; WEFE's ``pca_args={"n_components": k - 1}``,
  its default being 10);
* the attribute's equalize sets (WEFE's ``equalize_sets``);
* which words are neutralized, in two configurations: ``all`` (our default, and WEFE's
  with ``target=None``): every word but the attribute's specific words (WEFE's
  ``ignore``; WEFE also never neutralizes the defining words, which are all among the
  specific words); ``neutral`` (Manzini et al.'s code): only the attribute's neutral
  words (WEFE's ``target``).

Reported: the largest absolute difference of any coordinate of any word after unit
normalization of both outputs, the number of words that differ by more than 1e-6, the
largest difference of the two subspaces' projection matrices, and the seconds of fit +
transform of each. One more row runs WEFE with its default 10 components, to show what
a configuration difference does.

A second table runs the four debiasers that handle ``k`` groups (hard, soft, inlp, rlace,
each with its defaults and ``attribute=``) and measures what is left: the held-out
accuracy of a fresh linear SVM telling the three groups' words apart (the labels and
test split of :func:`embdebias.debias._labels.attribute_labels`, chance 1/3), and the
mean absolute cosine of the attribute's neutral words with the attribute's subspace
(its first component and the norm of their part in all ``k - 1``). WEFE runs in a scratch venv (``--wefe-python``,
default ``/tmp/wefe/bin/python`` with ``wefe==1.0.1``), through ``wefe_runner.py``, which
imports WEFE and numpy only.

Usage::

    python benchmarks/bench_attributes_debias.py [--out PATH] [--wefe-python PATH] [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # bench_debiasers (its run_wefe), when imported from elsewhere (the tests)
ATTRIBUTES = ("race", "religion")
MODES = ("all", "neutral")
#: The debiasers of the second table (those that handle k groups).
LEAKAGE_METHODS = ("hard", "soft", "inlp", "rlace")
#: WEFE's default number of principal components of ``MulticlassHardDebias``.
WEFE_DEFAULT_COMPONENTS = 10


def run_wefe(python: str, emb, args: dict):
    """``(vectors, components, seconds)`` of WEFE's ``MulticlassHardDebias`` on ``emb`` (through
    ``wefe_runner.py`` in the scratch venv, as ``bench_debiasers.py`` runs WEFE), or None without it."""
    import numpy as np
    from bench_debiasers import run_wefe as run_wefe_method

    got = run_wefe_method(python, "multiclass-hard", emb, args)
    if got is None:
        return None
    vectors, info = got
    return vectors, np.asarray(info["components"]), info["seconds"]


def unit(x):
    import numpy as np

    x = np.asarray(x, dtype=np.float64)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n > 0, n, 1)


def ours(emb, attr, mode: str):
    """``(fitted HardDebias, output vectors, seconds)`` of our multiclass hard debias."""
    from embdebias.debias import HardDebias

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # words of the lists missing from a --limit vocabulary
        est = HardDebias(attribute=attr, neutralize=mode).fit(emb)
        out = est.transform(emb)
    return est, out.vectors, time.perf_counter() - t0


def wefe_args(attr, mode: str, n_components: int, present) -> dict:
    """WEFE's arguments for the same configuration (words absent from the vocabulary left out)."""
    return {"definitional_sets": [list(s) for s in attr.defining_sets if all(w in present for w in s)],
            "equalize_sets": [list(s) for s in attr.equalize_sets if all(w in present for w in s)],
            "n_components": n_components,
            "target": None if mode == "all" else [w for w in attr.neutral_words if w in present],
            "ignore": [w for w in attr.specific_words if w in present]}


def compare(emb, attr, mode: str, python: str, n_components: int | None = None) -> dict:
    """One row: ours against WEFE in ``mode`` (WEFE with ``n_components``, default ours)."""
    import numpy as np

    est, vectors, seconds = ours(emb, attr, mode)
    comps = est.subspace_.components_
    present = set(emb.words)
    wefe = run_wefe(python, emb, wefe_args(attr, mode, n_components or comps.shape[0], present))
    row = {"attribute": attr.name, "mode": mode, "components": n_components or comps.shape[0],
           "ours_s": seconds, "neutralized": "every word but the specific ones" if mode == "all"
           else f"{len(est.neutralized_words_)} neutral words"}
    if wefe is None:
        return row
    theirs, their_comps, their_seconds = wefe
    delta = np.abs(unit(vectors) - unit(theirs))
    k = min(len(comps), len(their_comps))
    row.update(max_delta=float(delta.max()), rows_over=int((delta.max(axis=1) > 1e-6).sum()),
               subspace_delta=float(np.abs(comps[:k].T @ comps[:k] - their_comps[:k].T @ their_comps[:k]).max()),
               wefe_s=their_seconds)
    return row


def leakage_rows(emb, name: str) -> list[dict]:
    """What each debiaser for ``k`` groups leaves of attribute ``name``: linear leakage and neutral words' projection."""
    import numpy as np

    import embdebias
    from embdebias.debias import _labels, make_debiaser
    from embdebias.debias.inlp import linear_accuracy
    from embdebias.subspace import BiasSubspace

    attr = embdebias.load_attribute(name)
    lab = _labels.attribute_labels(emb, attr)
    sub = BiasSubspace(attribute=attr).fit(emb)
    neutral = [w for w in attr.neutral_words if w in set(emb.words)]

    def measure(method, vectors, seconds):
        unit = vectors.normalize()  # the original as the debiased outputs are: unit rows
        (X, y), (Xt, yt) = (lab.split(unit, part, binary=True) for part in ("train", "test"))
        part = unit[neutral] @ sub.components_.T
        return {"attribute": name, "method": method, "leakage": linear_accuracy(X, y, Xt, yt),
                "first": float(np.abs(part[:, 0]).mean()), "norm": float(np.linalg.norm(part, axis=1).mean()),
                "seconds": seconds}

    rows = [measure("original", emb, 0.0)]
    for method in LEAKAGE_METHODS:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = make_debiaser(method, attribute=attr, **({"rank": attr.k - 1} if method == "rlace" else {}))
            out = est.fit(emb).transform(emb)
        rows.append(measure(method, out, time.perf_counter() - t0))
        print(rows[-1], flush=True)
    return rows


def leakage_table(rows) -> list[str]:
    lines = ["| attribute | embedding | held-out linear accuracy, 3 groups (chance 1/3) | neutral words: mean abs "
             "cos with component 1 | neutral words: mean norm of their part in the subspace | fit + transform (s) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {r['attribute']} | {r['method']} | {r['leakage']:.3f} | {r['first']:.4f} | {r['norm']:.4f} | "
              f"{r['seconds']:.1f} |" for r in rows]
    return lines


def table(rows, n_words: int) -> list[str]:
    lines = ["| attribute | neutralized (ours = WEFE) | components (ours / WEFE) | max abs difference | "
             "words differing by > 1e-6 | subspace: max abs difference of the projections | ours (s) | WEFE (s) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        wefe = "WEFE not run" if "max_delta" not in r else None
        lines.append(f"| {r['attribute']} | {r['neutralized']} | {r['ours_components']} / {r['components']} | "
                     + (f"{wefe} | | | {r['ours_s']:.2f} | |" if wefe else
                        f"{r['max_delta']:.2e} | {r['rows_over']:,} of {n_words:,} | {r['subspace_delta']:.2e} | "
                        f"{r['ours_s']:.2f} | {r['wefe_s']:.2f} |"))
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "attributes_debias.md"))
    ap.add_argument("--wefe-python", default="/tmp/wefe/bin/python")
    ap.add_argument("--limit", type=int, default=None, help="first N words only (a smoke run)")
    ap.add_argument("--no-leakage", action="store_true", help="skip the table of the k-group debiasers")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    import embdebias

    emb = embdebias.load(limit=args.limit)
    rows = []
    for name in ATTRIBUTES:
        attr = embdebias.load_attribute(name)
        for mode in MODES:
            rows.append(compare(emb, attr, mode, args.wefe_python))
            print(rows[-1], flush=True)
        rows.append(compare(emb, attr, "all", args.wefe_python, n_components=WEFE_DEFAULT_COMPONENTS))
        print(rows[-1], flush=True)
    for r in rows:
        r["ours_components"] = len(embdebias.load_attribute(r["attribute"]).groups) - 1
    leak = [] if args.no_leakage else [r for name in ATTRIBUTES for r in leakage_rows(emb, name)]
    text = "\n".join([
        "# Multiclass hard debias against WEFE 1.0.1's MulticlassHardDebias",
        "",
        f"Written by `python benchmarks/bench_attributes_debias.py` on {emb.name} "
        f"({len(emb):,} x {emb.dim}), race and religion as bundled (`wordlists/attributes/`). Both tools get "
        "the same defining sets, equalize sets, number of components and neutralized words; differences are "
        "measured after unit normalization of both outputs, over every word. The last row of each attribute "
        "leaves WEFE at its default of 10 components (ours: k - 1 = 2).",
        "",
        *table(rows, len(emb)),
        "",
        "Configurations: *every word but the specific ones* is our default (`HardDebias(attribute=...)`) and "
        "WEFE's (`transform(target=None, ignore=specific words)`); *N neutral words* is Manzini et al.'s mode "
        "(`neutralize=\"neutral\"`; WEFE's `target=`). WEFE equalizes from the unit vectors it read at fit "
        "time, we from the vectors after neutralize; the equalize words are all specific words, which "
        "neutralize leaves alone, so the two coincide here.",
        "",
        *(["## What the debiasers for k groups leave", "",
           "Each method with its defaults and `attribute=` (hard: every word but the specific ones neutralized, "
           "2 components; soft: lambda 0.2 on the 2-dimensional subspace; inlp: the 4-class published classifier "
           "(3 groups and neutral words), stopping at 0.55 - 1/2 + 1/3; rlace: rank k - 1 = 2 (its default, 1, "
           "is the binary case's k - 1), a softmax predictor). "
           "Leakage: a fresh LinearSVC trained on the unit output vectors of the training words of "
           "`_labels.attribute_labels` (the words nearest each group's direction on the original vectors) and "
           "scored on its test words. The neutral words are the attribute's `neutral_words`; the subspace is "
           "the original's.", "", *leakage_table(leak), ""] if leak else [])])
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
