"""RLACE's fit before and after the factored solver, on 300 dimensions and on GloVe 6B 50d.

Writes ``benchmarks/results/rlace.md``. In one invocation, on the same words:

* **before**: the implementation of commit ``BEFORE`` (a ``d x d`` eigendecomposition per
  iteration, the three evaluation classifiers one after the other), loaded at run time
  from ``git show BEFORE:embdebias/debias/rlace.py`` into a scratch module;
* **after**: :class:`embdebias.debias.rlace.RLACE` as it is (``solver="factored"``, the
  classifiers on threads).

Data: the labelled words of the 3,000,000 x 300 file of ``benchmarks/scale.py`` (its native
copy, memory-mapped; the fit reads only the rows it labels) and GloVe 6B 50d (the default
embedding). Each fit's time is split into its parts by timing wrappers around the module
functions it calls: label selection, the stopping rule's evaluations (three
``SGDClassifier`` fits every 1,000 iterations, the authors' procedure), the final held-out
linear SVM, and the rest (the game itself). Floors: for *before*, the eigendecompositions
alone (iterations x the least time of one ``d x d`` ``eigh`` here and now); for *after*,
everything but the game (labels, evaluations, final SVM), which any implementation with
the published stopping rule pays.

Usage::

    python benchmarks/bench_rlace.py [--out benchmarks/results/rlace.md] [--skip-before-300]

``--skip-before-300`` leaves out the slow fit (about 2.5 minutes) while iterating.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))

from embdebias.debias import _labels, inlp  # noqa: E402
from embdebias.debias import rlace as rlace_now  # noqa: E402

#: The last commit with the dense-only RLACE (a d x d eigh per iteration, sequential evaluations).
BEFORE = "2c7d207"
PARTS = ("labels", "evaluations", "final_svm")


def module_before():
    """The RLACE module of commit ``BEFORE``, imported as ``embdebias.debias._rlace_before``."""
    source = subprocess.run(["git", "show", f"{BEFORE}:embdebias/debias/rlace.py"], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp(prefix="rlace-before-")) / "_rlace_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("embdebias.debias._rlace_before", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def timed(owner, name: str, seconds: dict, key: str):
    """Replace ``owner.name`` by a wrapper adding its wall time to ``seconds[key]``."""
    original = getattr(owner, name)

    def wrapper(*args, **kw):
        t0 = time.perf_counter()
        try:
            return original(*args, **kw)
        finally:
            seconds[key] += time.perf_counter() - t0

    setattr(owner, name, wrapper)
    try:
        yield
    finally:
        setattr(owner, name, original)


def fit_once(module, emb) -> dict:
    """One default fit of ``module.RLACE`` on ``emb``, its time split into parts."""
    seconds = dict.fromkeys(PARTS, 0.0)
    with timed(_labels, "protected_labels", seconds, "labels"), \
            timed(module, "evaluate_projection", seconds, "evaluations"), \
            timed(inlp, "linear_accuracy", seconds, "final_svm"):
        t0 = time.perf_counter()
        est = module.RLACE().fit(emb)
        seconds["fit"] = time.perf_counter() - t0
    seconds["game"] = seconds["fit"] - sum(seconds[p] for p in PARTS)
    return {"est": est, **seconds, "n_eval": int(np.ceil(est.n_iter_ / est.evaluate_every))}


def eigh_seconds(dim: int, repeat: int = 15) -> float:
    """Least wall time of ``np.linalg.eigh`` of a symmetric ``dim x dim`` matrix (the dense step's cost).

    The least of ``repeat``, not the median: a floor, and on a shared machine BLAS threads
    waiting for a busy core inflate single calls many times over."""
    A = np.random.default_rng(0).standard_normal((dim, dim))
    A = (A + A.T) / 2
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.linalg.eigh(A)
        times.append(time.perf_counter() - t0)
    return float(np.min(times))


def datasets():
    from embdebias import load as load_default
    from embdebias.io import load

    from scale import CACHE

    native = CACHE / "scale-3000000x300-s0.native"
    if not native.exists():
        raise SystemExit(f"{native} is missing: run `python benchmarks/bench_transform_3m.py --methods hard` once")
    return {"3,000,000 x 300 (scale.py)": load(native), "GloVe 6B 50d": load_default()}


def row(data: str, which: str, r: dict, floor: float, floor_name: str) -> str:
    est = r["est"]
    return (f"| {data} | {which} | {r['fit']:.1f} | {r['labels']:.1f} | {r['game']:.1f} | "
            f"{r['evaluations']:.1f} ({r['n_eval']}) | {r['final_svm']:.1f} | {est.n_iter_:,} | "
            f"{est.dev_accuracy_:.4f} | {est.test_accuracy_:.4f} | {floor:.1f} {floor_name} | {floor / r['fit']:.2f} |")


def markdown(results: dict, eigh: dict, load_avg: tuple, command: str) -> str:
    lines = ["# RLACE's fit: factored solver against the dense one", "",
             f"Written by `{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. *before*: commit "
             f"`{BEFORE}`'s implementation (a d x d `eigh` per iteration, evaluations one after the other); *after*: "
             "`RLACE()` now (`solver=\"factored\"`, evaluations on threads). Default parameters (rank 1, the "
             "authors' GloVe settings), seed 0. Seconds are wall time, split by timing wrappers; *game* is the fit "
             "minus the other parts. *evaluations*: the stopping rule's three `SGDClassifier` fits per evaluation "
             "(count in brackets). Floor of *before*: its `eigh` calls alone (iterations x "
             "the least time of one `eigh` measured here); floor of *after*: the fit without its game (labels, "
             "evaluations, final SVM).", "",
             "| data | fit | seconds | labels | game | evaluations | final SVM | iterations | dev accuracy | "
             "held-out accuracy | floor, s | floor / fit |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for data, pair in results.items():
        dim = pair["after"]["est"].n_features_in_
        if "before" in pair:
            b = pair["before"]
            lines.append(row(data, "before", b, b["est"].n_iter_ * eigh[dim], "(eigh alone)"))
        a = pair["after"]
        lines.append(row(data, "after", a, a["fit"] - a["game"], "(no game)"))
    lines += ["", "Same result:"]
    for data, pair in results.items():
        a = pair["after"]["est"]
        if "before" not in pair:
            lines.append(f"- {data}: *before* not run (`--skip-before-300`)")
            continue
        b = pair["before"]["est"]
        same = b.n_iter_ == a.n_iter_ and b.test_accuracy_ == a.test_accuracy_
        lines.append(f"- {data}: {'the same' if same else 'NOT the same'} iterations and held-out accuracy; "
                     f"max |map_ before - after| = {np.abs(b.map_ - a.map_).max():.1e}; "
                     f"fit {pair['before']['fit'] / pair['after']['fit']:.1f}x faster "
                     f"(majority class {a.majority_accuracy_:.4f})")
    lines += ["", "One `eigh` of a d x d symmetric matrix here: "
              + ", ".join(f"d = {d}: {s * 1e3:.2f} ms" for d, s in sorted(eigh.items()))
              + f". Load average (1 min) before and after: {load_avg[0]:.1f}, {load_avg[1]:.1f} "
              f"(2 cores, shared).", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    import warnings

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(HERE / "results" / "rlace.md"))
    ap.add_argument("--skip-before-300", action="store_true", help="leave out the dense fit on 300 dimensions")
    args = ap.parse_args(argv)
    before = module_before()
    load_before = os.getloadavg()[0]
    results, eigh = {}, {}
    for data, emb in datasets().items():
        eigh[emb.dim] = eigh_seconds(emb.dim)
        results[data] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if not (args.skip_before_300 and emb.dim == 300):
                results[data]["before"] = fit_once(before, emb)
            results[data]["after"] = fit_once(rlace_now, emb)
        print(data, {k: {p: v for p, v in r.items() if p != "est"} for k, r in results[data].items()}, flush=True)
    command = "python benchmarks/bench_rlace.py" + (" --skip-before-300" if args.skip_before_300 else "")
    text = markdown(results, eigh, (load_before, os.getloadavg()[0]), command)
    Path(args.out).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
