"""INLP's fit against its floor, and on a 3-group attribute against gender (issue 35).

INLP fits only on its labelled words (the published pool: 7,500 male-, female-biased
and neutral words each from the first 150,000 that pass the filter), so its fit does not
grow with the vocabulary; what it costs is the published classifier,
``LinearSVC(fit_intercept=False, dual=False)`` (liblinear's primal trust-region Newton
solver), fitted once per iteration for the ``k + 1`` classes and once more for the
stopping rule's binary classifier. The floor given here is the time spent inside those
classifier fits: the rest (the projections, the nullspace's SVDs, reading the labelled
rows) is what our code adds.

Each row: one ``INLP(...).fit`` in this process, wall and CPU time (user + system), the
CPU time inside ``LinearSVC.fit`` (the floor), the 1-minute load average before and after,
iterations, classifier fits, rank removed and the held-out accuracy of a fresh linear
classifier after INLP. The race / gender ratio is of CPU time.

Usage::

    python benchmarks/bench_inlp.py                       # GloVe 6B 50d: gender and race
    python benchmarks/bench_inlp.py --input ~/.cache/embdebias-bench/scale/scale-3000000x300-s0.native \
        --attributes gender --out benchmarks/results/inlp.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from sklearn.svm import LinearSVC  # noqa: E402


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def fit(emb, attribute: str) -> dict:
    """One INLP fit, with the CPU time spent inside the published classifier's fits."""
    from embdebias.debias import INLP

    inside, calls, original = [0.0], [0], LinearSVC.fit

    def timed(self, *args, **kwargs):
        c0 = _cpu()
        try:
            return original(self, *args, **kwargs)
        finally:
            inside[0] += _cpu() - c0
            calls[0] += 1

    LinearSVC.fit = timed
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), _cpu()
    try:
        est = INLP(attribute=None if attribute == "gender" else attribute).fit(emb)
    finally:
        LinearSVC.fit = original
    return {"attribute": attribute, "wall_s": time.perf_counter() - t0, "cpu_s": _cpu() - c0,
            "classifier_cpu_s": inside[0], "fits": calls[0], "load": (load, os.getloadavg()[0]),
            "iterations": est.n_iterations_, "rank": est.rank_removed_, "test": est.test_accuracy_,
            "groups": len(est.groups_)}


def markdown(rows: list[dict], command: str, name: str, shape: tuple) -> str:
    head = (f"# INLP: fit time against its floor\n\n`{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"{name}, {shape[0]:,} x {shape[1]}, default parameters, seed 0.\n\n"
            "| attribute | groups | wall (s) | CPU (s) | in LinearSVC.fit, CPU (s) | floor / ours | load 1 min before / after "
            "| iterations | classifier fits | rank removed | held-out accuracy |\n"
            "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
    body = "".join(f"| {r['attribute']} | {r['groups']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                   f"{r['classifier_cpu_s']:.1f} | {r['classifier_cpu_s'] / r['cpu_s']:.2f} | "
                   f"{r['load'][0]:.1f} / {r['load'][1]:.1f} | {r['iterations']} | {r['fits']} | {r['rank']} | "
                   f"{r['test']:.4f} |\n" for r in rows)
    notes = ["- the floor: CPU time inside the published classifier's fits (liblinear), which this package "
             "does not implement; floor / ours is the share of the fit they take."]
    by = {r["attribute"]: r for r in rows}
    if "gender" in by and "race" in by:
        g, r = by["gender"], by["race"]
        notes.append(f"- race / gender, CPU time: {r['cpu_s'] / g['cpu_s']:.2f}x (wall {r['wall_s'] / g['wall_s']:.2f}x); "
                     f"per iteration {r['cpu_s'] / r['iterations'] / (g['cpu_s'] / g['iterations']):.2f}x")
    return head + body + "\n" + "\n".join(notes) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", default=None, help="embedding to fit on (default: the built-in GloVe 6B 50d)")
    ap.add_argument("--attributes", default="gender,race", help="comma-separated (default gender,race)")
    ap.add_argument("--out", help="write the table (Markdown) here")
    args = ap.parse_args(argv)
    from embdebias import io

    emb = io.load(args.input) if args.input else io.load_default()
    rows = [fit(emb, a) for a in args.attributes.split(",")]
    from _measure import command_line, publish

    publish(markdown(rows, command_line("bench_inlp.py", argv), Path(emb.name).name, (len(emb), emb.dim)),
            args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
