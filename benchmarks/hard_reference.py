"""Hard debias against Bolukbasi et al.'s algorithm, on a real embedding and the published lists.

Runs, in one invocation on the same input:

1. ``HardDebias()`` with its defaults (the published lists, ``case_variants=False``);
2. ``bolukbasi_hard_debias``: the per-word transcription of the authors' algorithm
   (``embdebias/debias/reference.py``) on the same lists;
3. ``HardDebias(case_variants=True)``, the opt-in that also protects case forms.

and prints the time of each, the largest difference between 1 and 2 over the whole
vocabulary (the acceptance bound is 1e-6), and how many rows 3 changes.

Usage::

    python benchmarks/hard_reference.py                  # the built-in GloVe 6B 50d
    python benchmarks/hard_reference.py vectors.bin --limit 200000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from embdebias import io, wordlists  # noqa: E402
from embdebias.debias import HardDebias  # noqa: E402
from embdebias.debias.reference import bolukbasi_hard_debias  # noqa: E402


def timed(func):
    t0 = time.perf_counter()
    out = func()
    return out, time.perf_counter() - t0


def run(source=None, limit=None, lists="published") -> dict:
    emb = io.load(source, limit=limit)
    emb = emb.with_vectors(np.asarray(emb.vectors))  # one read of the file for all three
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, t_ours = timed(lambda: HardDebias(lists=lists).fit(emb).transform(emb).vectors)
        variants, t_var = timed(lambda: HardDebias(lists=lists, case_variants=True).fit(emb).transform(emb).vectors)
    (ref, _), t_ref = timed(lambda: bolukbasi_hard_debias(
        emb.words.tolist(), emb.vectors, wordlists.definitional_pairs(lists),
        wordlists.gender_specific(lists), wordlists.equalize_pairs(lists)))
    diff = np.abs(ours - ref).max(axis=1)
    changed = np.abs(variants - ours).max(axis=1)
    order = np.argsort(-changed)[: int((changed > 1e-6).sum())]
    return {
        "embedding": emb.name, "shape": list(emb.shape), "lists": lists,
        "hard_s": t_ours, "reference_s": t_ref, "speedup": t_ref / t_ours,
        "max_abs_diff": float(diff.max()), "rows_over_1e-6": int((diff > 1e-6).sum()),
        "case_variants_s": t_var, "case_variants_rows_changed": int(order.size),
        "case_variants_max_change": float(changed.max()),
        "case_variants_most_changed": [emb.words[int(i)] for i in order[:15]],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", nargs="?", default=None, help="vector file (default: GloVe 6B 50d)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--lists", choices=wordlists.LIST_SETS, default="published")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    r = run(args.input, args.limit, args.lists)
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    print(f"{r['embedding']} {r['shape'][0]:,} x {r['shape'][1]}, {r['lists']} lists\n")
    print("| run | seconds | against the reference |")
    print("| --- | ---: | --- |")
    print(f"| HardDebias() | {r['hard_s']:.2f} | max abs diff {r['max_abs_diff']:.2e}, "
          f"{r['rows_over_1e-6']} rows over 1e-6 |")
    print(f"| bolukbasi_hard_debias (per word) | {r['reference_s']:.2f} | {r['speedup']:.1f}x slower |")
    print(f"| HardDebias(case_variants=True) | {r['case_variants_s']:.2f} | "
          f"{r['case_variants_rows_changed']} rows change, by up to {r['case_variants_max_change']:.3f} |")
    print(f"\nmost changed by case variants: {', '.join(r['case_variants_most_changed'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
