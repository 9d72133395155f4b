"""Hard debias: chunked/vectorized implementation vs a per-word loop, and file-to-file memory.

Measures, in one invocation and on the same random data:

1. in memory: ``HardDebias.transform`` against ``hard_debias_per_word`` (a
   straightforward Python loop over the words, written from the paper), with the
   maximum difference between the two results;
2. file to file: a native-format input of ``--rows x --dim`` debiased into a native
   output by ``embdebias.debias.api.debias_file`` in a fresh subprocess, reporting
   wall time and peak resident memory (``VmHWM`` on Linux, else ``ru_maxrss``)
   above the subprocess's resident memory after its imports, next to the size of
   one matrix.

Usage::

    python benchmarks/bench_hard.py --rows 500000 --dim 300
    python benchmarks/bench_hard.py --rows 3000000 --dim 300 --workdir /big/disk
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from embdebias.debias import HardDebias  # noqa: E402
from embdebias.debias.reference import hard_debias_per_word  # noqa: E402
from embdebias.embedding import Embedding  # noqa: E402
from embdebias.io.native import NativeWriter  # noqa: E402
from embdebias import wordlists  # noqa: E402


def synthetic_words(n: int) -> list[str]:
    """The bundled gendered words first (so the lists apply), then filler words."""
    special = list(dict.fromkeys(
        [w for p in wordlists.definitional_pairs() for w in p]
        + [w for p in wordlists.equalize_pairs() for w in p]
        + wordlists.gender_specific() + wordlists.professions()))
    return special + [f"w{i}" for i in range(max(n - len(special), 0))][: n - len(special)]


def write_random_native(path: Path, rows: int, dim: int, seed: int = 0, chunk: int = 1 << 16) -> None:
    """A random native-format embedding, generated chunk by chunk (bounded memory)."""
    rng = np.random.default_rng(seed)
    words = synthetic_words(rows)
    with NativeWriter(path, words, (rows, dim)) as w:
        for start in range(0, rows, chunk):
            stop = min(start + chunk, rows)
            w.append(rng.standard_normal((stop - start, dim), dtype=np.float32))


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})

sys.path.insert(0, {root!r} + "/benchmarks")
from _measure import PeakSampler, peak_kb

from embdebias.debias.api import debias_file
import embdebias.io, embdebias.debias.hard, numpy
base = peak_kb()
with PeakSampler() as sampler:
    t0 = time.perf_counter()
    out, _ = debias_file({src!r}, {dst!r}, method="hard")
    secs = time.perf_counter() - t0
peak = peak_kb()
print(json.dumps({{"seconds": secs, "peak_kb": peak, "base_kb": base,
                  "anon_kb": sampler.peak["RssAnon"] - sampler.base["RssAnon"],
                  "file_kb": sampler.peak["RssFile"] - sampler.base["RssFile"]}}))
"""


def file_to_file(rows: int, dim: int, workdir: Path) -> dict:
    src = workdir / f"bench_hard_{rows}x{dim}.embd"
    dst = workdir / f"bench_hard_{rows}x{dim}.out.embd"
    write_random_native(src, rows, dim)
    code = _CHILD.format(root=str(HERE.parent), src=str(src), dst=str(dst))
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def in_memory(rows: int, dim: int, baseline_rows: int, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    words = synthetic_words(rows)
    emb = Embedding(words, rng.standard_normal((rows, dim), dtype=np.float32))
    hd = HardDebias().fit(emb)
    t0 = time.perf_counter()
    hd.transform(emb)
    t_fast = time.perf_counter() - t0

    # The per-word baseline on the first baseline_rows words, scaled per word.
    nb = min(baseline_rows, rows)
    t0 = time.perf_counter()
    ref = hard_debias_per_word(words[:nb], emb.vectors[:nb], hd.subspace_.components_,
                               hd.gender_specific_, hd.equalize_pairs_)
    t_ref = time.perf_counter() - t0
    small = hd.transform(emb.head(nb))
    return {"rows": rows, "dim": dim, "vectorized_s": t_fast, "per_word_rows": nb, "per_word_s": t_ref,
            "per_word_s_scaled": t_ref * rows / nb,
            "max_abs_diff": float(np.abs(small.vectors - ref).max())}


def run(rows: int = 500_000, dim: int = 300, workdir=None, baseline_rows: int = 100_000) -> list[dict]:
    """Run both measurements and return result rows (used by benchmarks/run_all.py)."""
    mem = in_memory(rows, dim, baseline_rows)
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        f2f = file_to_file(rows, dim, Path(tmp))
    matrix_mb = rows * dim * 4 / 2**20
    peak_mb = (f2f["peak_kb"] - f2f["base_kb"]) / 1024
    return [
        {"benchmark": "hard debias, in memory", "size": f"{rows:,} x {dim}",
         "ours_s": mem["vectorized_s"], "baseline": f"per-word loop ({mem['per_word_rows']:,} rows, scaled)",
         "baseline_s": mem["per_word_s_scaled"], "ratio": mem["per_word_s_scaled"] / mem["vectorized_s"],
         "note": f"max |diff| vs per-word {mem['max_abs_diff']:.1e}"},
        {"benchmark": "hard debias, native file -> native file", "size": f"{rows:,} x {dim}",
         "ours_s": f2f["seconds"], "baseline": "", "baseline_s": None, "ratio": None,
         "peak_mb": peak_mb,
         "note": f"peak RSS above imports {peak_mb:.0f} MB = {peak_mb / matrix_mb:.2f}x the "
                 f"{matrix_mb:.0f} MB matrix, of which anonymous {f2f['anon_kb'] / 1024:.0f} MB "
                 f"({f2f['anon_kb'] / 1024 / matrix_mb:.2f}x) and pages of the two memory-mapped "
                 f"files {f2f['file_kb'] / 1024:.0f} MB (reclaimable)"},
    ]


def print_rows(rows: list[dict]) -> None:
    from _table import format_table, normalise  # benchmarks/ is on sys.path when run as a script

    print(format_table(normalise("hard", rows)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=500_000)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--baseline-rows", type=int, default=100_000,
                    help="rows for the per-word baseline (its time is scaled to --rows)")
    ap.add_argument("--workdir", default=None, help="where the temporary files go (needs ~2x the matrix)")
    args = ap.parse_args(argv)
    print_rows(run(args.rows, args.dim, args.workdir, args.baseline_rows))


if __name__ == "__main__":
    main()
