"""RLACE on a 3-group attribute against gender, in one invocation (issue 35: k groups as fast as two).

On GloVe 6B 50d (the default embedding), default parameters (rank 1), seed 0:

* **gender**: ``RLACE()``, the published rule (stop once the best accuracy is within
  ``epsilon`` of the majority class's);
* **race, after**: ``RLACE(attribute="race")``: for ``k > 2`` groups the game also stops
  once ``n_evals_no_change`` (2) evaluations in a row have not raised the kept log-loss by
  more than ``tol`` (1 %) of itself;
* **race, before** (``--before``): ``RLACE(attribute="race", n_evals_no_change=None)``, the
  published rule alone, which rank 1 cannot meet for 3 groups: all 50,000 iterations (this
  is the code of commit f93e530, whose game and draws are the same).

Each row: wall and CPU time (user + system of this process, the evaluation threads
included), the 1-minute load average before and after, iterations, evaluations, the kept
log-loss (the game's objective: the highest dev log-loss of the evaluations), the dev and
held-out accuracy. The ratio race / gender is of CPU time (wall time on a shared machine
mostly measures the other processes).

Usage::

    python benchmarks/bench_rlace_groups.py [--before] [--out benchmarks/results/rlace_groups.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from embdebias.debias import rlace as rlace_module  # noqa: E402


def fit(emb, label: str, **params) -> dict:
    """One fit with the evaluations' log-losses recorded."""
    losses = []
    evaluate = rlace_module.evaluate_projection

    def recorded(*args, **kwargs):
        out = evaluate(*args, **kwargs)
        losses.append(out[0])
        return out

    rlace_module.evaluate_projection = recorded
    load = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), os.times()
    try:
        est = rlace_module.RLACE(**params).fit(emb)
    finally:
        rlace_module.evaluate_projection = evaluate
    c1 = os.times()
    return {"label": label, "wall_s": time.perf_counter() - t0,
            "cpu_s": (c1.user - c0.user) + (c1.system - c0.system), "load": (load, os.getloadavg()[0]),
            "iterations": est.n_iter_, "evaluations": len(losses), "kept_loss": max(losses),
            "dev": est.dev_accuracy_, "test": est.test_accuracy_, "majority": est.majority_accuracy_,
            "map": est.map_}


def markdown(rows: list[dict], command: str) -> str:
    head = (f"# RLACE for k groups against two\n\n`{command}` on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
            "GloVe 6B 50d, rank 1, seed 0.\n\n| fit | wall (s) | CPU (s) | load 1 min before / after | iterations | "
            "evaluations | kept log-loss | dev accuracy | held-out accuracy | majority |\n"
            "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|\n")
    body = "".join(f"| {r['label']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['load'][0]:.1f} / {r['load'][1]:.1f} | "
                   f"{r['iterations']:,} | {r['evaluations']} | {r['kept_loss']:.4f} | {r['dev']:.4f} | "
                   f"{r['test']:.4f} | {r['majority']:.4f} |\n" for r in rows)
    by = {r["label"]: r for r in rows}
    notes = [f"- race / gender, CPU time: {by['race, after']['cpu_s'] / by['gender']['cpu_s']:.1f}x "
             f"(wall: {by['race, after']['wall_s'] / by['gender']['wall_s']:.1f}x)"]
    if "race, before" in by:
        b, a = by["race, before"], by["race, after"]
        notes.append(f"- race after against before: kept log-loss {a['kept_loss']:.4f} against {b['kept_loss']:.4f} "
                     f"({(a['kept_loss'] - b['kept_loss']) / b['kept_loss']:+.1%}), held-out accuracy "
                     f"{a['test']:.4f} against {b['test']:.4f}, max |map_ after - before| "
                     f"{np.abs(a['map'] - b['map']).max():.2e}; CPU {b['cpu_s'] / a['cpu_s']:.1f}x less")
    return head + body + "\n" + "\n".join(notes) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", action="store_true", help="also the published rule alone on race (50,000 iterations)")
    ap.add_argument("--out", help="write the table (Markdown) here")
    args = ap.parse_args(argv)
    from embdebias import io

    emb = io.load_default()
    rows = [fit(emb, "gender"), fit(emb, "race, after", attribute="race")]
    if args.before:
        rows.append(fit(emb, "race, before", attribute="race", n_evals_no_change=None))
    from _measure import command_line, publish

    publish(markdown(rows, command_line("bench_rlace_groups.py", argv)), args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
