"""Timing of the extrinsic probe with all its metrics, per embedding (issue: < 5 s on GloVe 400k x 50).

Run:  python benchmarks/bench_extrinsic.py [--resamples 1000] [--out benchmarks/results/extrinsic.md]

Every figure is measured in this invocation, on the built-in GloVe 6B 50d. Steps:

* fitting the sentiment probe (VADER words, a stratified split, logistic regression);
* scoring every sentence of both template families (26,880 sentences) from the
  per-token logits (pooling and the logit are linear), against a baseline in the same
  run: a straightforward loop that tokenizes each sentence, mean-pools its unit vectors
  and applies the classifier;
* the statistics of both families through :mod:`embdebias.fairness`;
* the bootstrap intervals of every statistic (``--resamples``) on the score grid, against
  the baseline of calling the library on each resampled data set (run for a few
  resamples and scaled);
* ``evaluate(..., suite=["extrinsic"])`` end to end on original and hard-debiased
  GloVe (two columns, so the paired comparisons are included), per embedding.

``run()`` returns the rows for the benchmark runner.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from embdebias._rows import unit_rows  # noqa: E402
from embdebias.metrics.extrinsic.templates import load_templates, tokenize  # noqa: E402
from embdebias.metrics import extrinsic as ex  # noqa: E402
from embdebias.metrics._resample import Sample, bootstrap_interval  # noqa: E402


def _clock(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _naive_scores(probe, emb, sentences: list[str]) -> np.ndarray:
    """The baseline: one sentence at a time, its tokens' unit vectors mean-pooled."""
    out = np.empty(len(sentences))
    for i, sentence in enumerate(sentences):
        rows = [emb.get(t) if emb.get(t) >= 0 else emb.get(t.lower()) for t in tokenize(sentence)]
        vec = unit_rows(emb.take(np.array([r for r in rows if r >= 0]), np.float64)).mean(axis=0)
        out[i] = 1.0 / (1.0 + np.exp(-(vec @ probe.coef_ + probe.intercept_)))
    return out


def _bootstrap_rows(families: dict, n_boot: int, n_baseline: int) -> list[dict]:
    ours = base = 0.0
    n_stats = 0
    for fs, threshold in families.values():
        items = {"templates": [u.key for u in fs.units], **fs.terms}
        for key in ex.grid_keys(fs):
            sample = Sample(ex.sample_items(fs, key), ex.grid_statistic(fs, key, threshold))
            ours += _clock(lambda s=sample: bootstrap_interval(s, n_boot, np.random.default_rng(0)))[0]
            n_stats += 1
        rng = np.random.default_rng(1)
        idx = {g: rng.integers(0, len(k), (n_baseline, len(k))) for g, k in items.items()}
        base += _clock(lambda f=fs, i=idx, t=threshold: [ex.library_statistics(
            f.take(i["templates"][b], {g: i[g][b] for g in f.group_names}), t)
                                                        for b in range(n_baseline)])[0]
    scaled = base / n_baseline * n_boot
    return [{"step": f"bootstrap intervals ({n_stats} statistics x {n_boot:,} resamples)", "ours_s": ours,
             "baseline": f"library per resample ({n_baseline} run, scaled)", "baseline_s": scaled,
             "ratio": scaled / ours}]


def run(n_boot: int = 1000, n_baseline: int = 5) -> list[dict]:
    from embdebias.debias import HardDebias
    from embdebias.evaluate import evaluate
    from embdebias.io import load

    emb = load("glove-6b-50d")
    ts = load_templates()
    rows = []
    t_fit, probe = _clock(lambda: ex.fit_probe(emb, ts))
    rows.append({"step": "fit the probe", "ours_s": t_fit,
                 "note": f"{probe.n_train_:,} training words, held-out accuracy {probe.accuracy_:.3f}"})
    t_score, scored = _clock(lambda: {f: ex.score_family(probe, ts, f) for f in ts.families})
    sentences = [u.sentence(t) for fs in scored.values() for u in fs.units for ts_ in fs.terms.values() for t in ts_]
    t_naive, naive = _clock(lambda: _naive_scores(probe, emb, sentences))
    grid = np.concatenate([fs.scores.ravel() for fs in scored.values()])
    rows.append({"step": f"score {len(sentences):,} sentences", "ours_s": t_score,
                 "baseline": "pool each sentence", "baseline_s": t_naive, "ratio": t_naive / t_score,
                 "note": f"max |difference| {np.max(np.abs(grid - naive)):.1e}"})
    families = {f: (fs, ex.resolve_threshold(fs, "median")) for f, fs in scored.items()}
    t_lib, _ = _clock(lambda: [ex.library_statistics(fs, thr) for fs, thr in families.values()])
    rows.append({"step": "statistics (embdebias.fairness)", "ours_s": t_lib})
    rows += _bootstrap_rows(families, n_boot, n_baseline)
    hard = HardDebias().fit(emb).transform(emb)
    t_eval, rep = _clock(lambda: evaluate({"original": emb, "hard": hard}, suite=["extrinsic"], bootstrap=n_boot))
    rows.append({"step": "evaluate(suite=['extrinsic']), per embedding", "ours_s": t_eval / 2,
                 "note": f"2 embeddings in {t_eval:.2f} s with paired comparisons; "
                         f"{len(rep.comparisons)} comparisons"})
    return rows


def _table(rows: list[dict]) -> str:
    lines = ["| step | ours (s) | baseline | baseline (s) | ratio | note |", "|---|---:|---|---:|---:|---|"]
    for r in rows:
        base = f"{r['baseline_s']:.3f}" if r.get("baseline_s") is not None else ""
        ratio = f"{r['ratio']:.0f}x" if r.get("ratio") else ""
        lines.append(f"| {r['step']} | {r['ours_s']:.3f} | {r.get('baseline', '')} | {base} | {ratio} | "
                     f"{r.get('note', '')} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--baseline-resamples", type=int, default=5)
    ap.add_argument("--out", help="also write the table (markdown) to this file")
    args = ap.parse_args(argv)
    table = _table(run(args.resamples, args.baseline_resamples))
    print(table)
    if args.out:
        header = (f"# Extrinsic probe timing (GloVe 6B 50d, 400,000 x 50)\n\n"
                  f"`python benchmarks/bench_extrinsic.py --out {args.out}`, {time.strftime('%Y-%m-%d')}, "
                  f"{os.cpu_count()} cores.\n\n")
        with open(args.out + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(header + table + "\n")
        os.replace(args.out + ".tmp", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
