"""Residual-bias audit (Gonen & Goldberg): time and peak memory, against a naive baseline.

Measures, in one invocation:

1. **synthetic, --rows x --dim** (default 3,000,000 x 300): an "original" and a
   "tested" native-format file written chunk by chunk (float32, memory-mapped; the
   tested one is the original with the ``he - she`` axis zeroed, like a hard debias
   that leaves gender in a second direction). ``residual_bias(original, tested)``
   with the paper's sizes runs in a fresh subprocess: wall time of the first call
   (cold: sklearn imported before, the vocabularies and pages not yet touched) and a
   second call, and peak resident memory above the subprocess's imports (``VmHWM``,
   and the sampled anonymous / file-backed split: the file part is pages of the two
   memory-mapped files, which the kernel can drop).
2. **the neighbour step against a naive baseline**, in the same subprocess on the
   same candidates: ours (blocked matrix products into a reused buffer, a partition of
   the values above a sampled bound) on all ``2 x n_classify`` queries against an unblocked full
   ``queries x candidates`` cosine matrix with a full ``argsort`` per row, run on
   ``--baseline-queries`` queries and scaled per query; the note gives the largest
   difference between the two on those queries and the memory the unblocked matrix
   and its argsort would need for every query.
3. **GloVe 6B 50d** (unless ``--skip-glove``): the audit of the original, soft-debiased
   (``SoftDebias(lam=0.2)``) and hard-debiased (``HardDebias()``) embedding with the
   published lists, each timed, with cluster / SVM accuracy and neighbour correlation.

Usage::

    python benchmarks/bench_residual.py                       # 3,000,000 x 300 (7 GiB of temporary files)
    python benchmarks/bench_residual.py --rows 200000 --dim 100 --skip-glove
    python benchmarks/bench_residual.py --workdir /big/disk --json residual.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from embdebias.io.native import NativeWriter  # noqa: E402


def synthetic_words(n: int) -> list[str]:
    """``he``, ``she``, then ``n - 2`` distinct lower-case alphabetic words (vectorized)."""
    letters = 1
    while 26**letters < n:
        letters += 1
    idx = np.arange(n - 2, dtype=np.int64)[:, None]
    codes = (idx // 26 ** np.arange(letters - 1, -1, -1)) % 26 + ord("a")
    body = np.ascontiguousarray(codes.astype(np.uint32)).view(f"<U{letters}").ravel()
    # 'he' and 'she' have fewer letters than the generated words, so they are not among them.
    return ["he", "she"] + ["x" + w for w in body.tolist()]


def write_pair(original: Path, tested: Path, rows: int, dim: int, seed: int = 0,
               chunk: int = 1 << 15) -> None:
    """Two native files: gender planted along e0 and e1; the tested one has e0 zeroed."""
    rng = np.random.default_rng(seed)
    words = synthetic_words(rows)
    with NativeWriter(original, words, (rows, dim)) as wo, NativeWriter(tested, words, (rows, dim)) as wt:
        for start in range(0, rows, chunk):
            stop = min(start + chunk, rows)
            block = rng.standard_normal((stop - start, dim), dtype=np.float32)
            gender = rng.uniform(-1, 1, stop - start).astype(np.float32)
            block[:, 0] += 4 * gender
            block[:, 1] += 4 * gender
            if start == 0:
                block[0, :], block[1, :] = 0, 0
                block[0, [0, 2]], block[1, [0, 2]] = (4, 4), (-4, 4)
            wo.append(block)
            block[2 if start == 0 else 0:, 0] = 0          # he and she keep their e0
            wt.append(block)


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
sys.path.insert(0, {root!r} + "/benchmarks")
from _measure import PeakSampler, peak_kb

import numpy as np
import sklearn.cluster, sklearn.svm
from embdebias.io import load
from embdebias.metrics import residual as R
from embdebias import wordlists

original, tested = load({original!r}), load({tested!r})
base = peak_kb()
with PeakSampler() as sampler:
    t0 = time.perf_counter()
    res = R.residual_bias(original, tested)
    first = time.perf_counter() - t0
peak = peak_kb()
t0 = time.perf_counter()
again = R.residual_bias(original, tested)
second = time.perf_counter() - t0
assert again.to_dict() == res.to_dict()

# The neighbour step alone, ours against an unblocked full sort, on the same candidates.
words, rows = R.candidate_words(original, 50_000, wordlists.gender_specific())
d, _ = R.male_direction(original, ("he", "she"))
bias = R.unit_block(original, rows) @ d.astype(np.float32)
trows = R.rows_by_word(original, tested, words.tolist(), rows)
cand = R.unit_block(tested, trows)
male = bias > 0
m, f = R.extremes(bias, 2_500)
queries = np.concatenate([m, f])
t0 = time.perf_counter()
ours = R.neighbour_fractions(cand, queries, male, 100)
ours_s = time.perf_counter() - t0
sub = queries[:{baseline_queries}]
t0 = time.perf_counter()
sims = cand[sub] @ cand.T
sims[np.arange(sub.size), sub] = -np.inf
top = np.argsort(-sims, axis=1)[:, :100]
naive = male[top].mean(axis=1)
naive_s = time.perf_counter() - t0
print(json.dumps({{
    "first_s": first, "second_s": second, "peak_kb": peak, "base_kb": base,
    "anon_kb": sampler.peak["RssAnon"] - sampler.base["RssAnon"],
    "file_kb": sampler.peak["RssFile"] - sampler.base["RssFile"],
    "cluster": res.cluster_accuracy, "svm": res.classification_accuracy,
    "corr": res.neighbour_correlation, "n_candidates": res.n_candidates,
    "n_queries": int(queries.size), "ours_nn_s": ours_s, "naive_nn_s": naive_s,
    "naive_queries": int(sub.size), "naive_max_diff": float(np.abs(naive - ours[:sub.size]).max()),
}}))
"""


def synthetic(rows: int, dim: int, workdir=None, baseline_queries: int = 500) -> list[dict]:
    """Rows 1 and 2 of the module docstring."""
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        original, tested = Path(tmp) / "original.embd", Path(tmp) / "tested.embd"
        t0 = time.perf_counter()
        write_pair(original, tested, rows, dim)
        write_s = time.perf_counter() - t0
        code = _CHILD.format(root=str(HERE.parent), original=str(original), tested=str(tested),
                             baseline_queries=int(baseline_queries))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"the measuring subprocess failed:\n{out.stderr[-3000:]}")
        r = json.loads(out.stdout.strip().splitlines()[-1])
    size = f"{rows:,} x {dim}"
    peak_mb = (r["peak_kb"] - r["base_kb"]) / 1024
    scaled = r["naive_nn_s"] * r["n_queries"] / r["naive_queries"]
    full_gb = r["n_queries"] * r["n_candidates"] * (4 + 8) / 2**30
    matrix_mb = rows * dim * 4 / 2**20
    return [
        {"benchmark": "residual_bias, native files (first call)", "size": size, "ours_s": r["first_s"],
         "peak_mb": peak_mb,
         "note": f"cluster {r['cluster']:.3f}, SVM {r['svm']:.3f}, neighbour corr {r['corr']:.3f}; "
                 f"{r['n_candidates']:,} candidates; peak RSS above imports {peak_mb:.0f} MiB, of which "
                 f"anonymous {r['anon_kb'] / 1024:.0f} MiB and mapped file pages {r['file_kb'] / 1024:.0f} MiB "
                 f"(one matrix is {matrix_mb:,.0f} MiB); files written in {write_s:.0f} s"},
        {"benchmark": "residual_bias, second call", "size": size, "ours_s": r["second_s"], "note": "same result"},
        {"benchmark": "neighbour step", "size": f"{r['n_queries']:,} x {r['n_candidates']:,} x {dim}",
         "ours_s": r["ours_nn_s"],
         "baseline": f"full matrix + argsort ({r['naive_queries']:,} queries, scaled)", "baseline_s": scaled,
         "ratio": scaled / r["ours_nn_s"],
         "note": f"max |diff| {r['naive_max_diff']:.1e}; unblocked for all queries: {full_gb:.1f} GiB "
                 f"(cosines + argsort indices)"},
    ]


def glove() -> list[dict]:
    """Row 3 of the module docstring: original / soft / hard GloVe 6B 50d."""
    import warnings

    import embdebias
    from embdebias.debias import HardDebias, SoftDebias
    from embdebias.metrics.residual import residual_bias

    emb = embdebias.load()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hard = HardDebias().fit(emb).transform(emb)
        soft = SoftDebias(lam=0.2).fit(emb).transform(emb)
    residual_bias(emb, emb.head(60_000), n_candidates=5_000, n_cluster=50, n_classify=250, n_train=100)  # imports
    rows = []
    for name, tested in (("original", emb), ("soft", soft), ("hard", hard)):
        t0 = time.perf_counter()
        res = residual_bias(emb, tested)
        secs = time.perf_counter() - t0
        rows.append({"benchmark": f"residual_bias, GloVe 6B 50d {name}", "size": f"{len(emb):,} x {emb.dim}",
                     "ours_s": secs, "cluster": res.cluster_accuracy, "svm": res.classification_accuracy,
                     "corr": res.neighbour_correlation,
                     "note": f"cluster {res.cluster_accuracy:.3f}, SVM {res.classification_accuracy:.3f}, "
                             f"neighbour corr {res.neighbour_correlation:.3f}"})
    return rows


def run(rows: int = 3_000_000, dim: int = 300, workdir=None, baseline_queries: int = 500,
        with_glove: bool = True) -> list[dict]:
    """Every row of the module docstring (for a runner)."""
    out = synthetic(rows, dim, workdir, baseline_queries)
    return out + (glove() if with_glove else [])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3_000_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--baseline-queries", type=int, default=500,
                    help="queries the unblocked baseline runs on (its time is scaled to all of them)")
    ap.add_argument("--workdir", default=None, help="where the two temporary files go (2 x rows x dim x 4 bytes)")
    ap.add_argument("--skip-glove", action="store_true", help="skip the GloVe 6B 50d original / soft / hard rows")
    ap.add_argument("--json", default=None, help="also write the rows to this file")
    args = ap.parse_args(argv)
    print(f"numpy {np.__version__}, {os.cpu_count()} CPU(s)")
    result = run(args.rows, args.dim, args.workdir, args.baseline_queries, not args.skip_glove)
    from _table import format_table, normalise

    print(format_table(normalise("residual", result)))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
