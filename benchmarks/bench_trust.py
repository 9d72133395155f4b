"""Fidelity and cost of the trust readings (issue 34), written to ``benchmarks/results/trust.md``.

Fidelity, each against an independent transcription written here from the papers' formulas
(not from embdebias's code, and not copied from anyone's code):

* Cronbach's alpha and ICC(2,1) / ICC(3,1) (Du, Fang & Nguyen 2021, who follow Shrout &
  Fleiss 1979) on a seeded fixture, from sums of squares accumulated element by element;
  ``--du-code DIR``: also against Du et al.'s own ``reliability_metrics.py`` (MIT) imported
  from a scratch checkout outside the repository (nothing of it is copied here);
* Cronbach's alpha across the definitional pairs of each per-word measure (direct bias's
  projection, RIPA, the association and the residual direction) on the synthetic embedding,
  every score computed one cosine at a time from the papers' definitions (the residual
  direction: Gonen & Goldberg's ``cos(w, unit(x) - unit(y))`` with each pair in place of
  ``he - she``, as Du et al. take each base pair as a measure's direction), then the alpha
  transcription (and Du et al.'s ``cronbachs_alpha`` with ``--du-code``);
* ValNorm's per-word SC-WEAT effect sizes (Toney & Caliskan 2021) against the published
  procedure done word by word (cosines one at a time, ``statistics.stdev``) on a synthetic
  lexicon;
* the leave-one-out band of every WEAT test of the synthetic embedding against direct
  enumeration: :func:`embdebias.metrics.weat` rerun with each word of each set removed.

Cost: ``evaluate`` of the default run's columns (the original, hard and soft debias) with and
without the trust readings (the seed-word bands, alpha and the agreement), best of
``--rounds``, on the synthetic embedding or ``--input`` (e.g. glove-6b-50d).

Usage::

    python benchmarks/bench_trust.py                       # writes benchmarks/results/trust.md
    python benchmarks/bench_trust.py --input glove-6b-50d --rounds 2 --du-code /tmp/reliability_bias
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests"))


# -- the transcriptions --------------------------------------------------------------------------------------

def alpha_by_hand(x) -> float:
    """Cronbach (1951): k/(k-1) * (1 - sum of item variances / variance of the total), n-1 denominators."""
    n, k = len(x), len(x[0])

    def var(values):
        m = sum(values) / len(values)
        return sum((v - m) ** 2 for v in values) / (len(values) - 1)

    items = sum(var([x[i][j] for i in range(n)]) for j in range(k))
    totals = var([sum(row) for row in x])
    return k / (k - 1) * (1 - items / totals)


def icc_by_hand(x, form: str) -> float:
    """Shrout & Fleiss (1979) ICC(2,1) and ICC(3,1) from the two-way ANOVA table (BMS, JMS, EMS)."""
    n, k = len(x), len(x[0])
    grand = sum(sum(row) for row in x) / (n * k)
    row_means = [sum(row) / k for row in x]
    col_means = [sum(x[i][j] for i in range(n)) / n for j in range(k)]
    ss_rows = k * sum((m - grand) ** 2 for m in row_means)
    ss_cols = n * sum((m - grand) ** 2 for m in col_means)
    ss_total = sum((x[i][j] - grand) ** 2 for i in range(n) for j in range(k))
    bms, jms = ss_rows / (n - 1), ss_cols / (k - 1)
    ems = (ss_total - ss_rows - ss_cols) / ((n - 1) * (k - 1))
    if form == "icc2":
        return (bms - ems) / (bms + (k - 1) * ems + k * (jms - ems) / n)
    return (bms - ems) / (bms + (k - 1) * ems)


def sc_weat_by_hand(w, a_set, b_set) -> float:
    """Toney & Caliskan's per-word SC-WEAT: one cosine at a time, stdev (n - 1) of all the cosines."""
    def cos(u, v):
        return sum(p * q for p, q in zip(u, v)) / math.sqrt(sum(p * p for p in u) * sum(q * q for q in v))

    ca = [cos(w, a) for a in a_set]
    cb = [cos(w, b) for b in b_set]
    return (statistics.fmean(ca) - statistics.fmean(cb)) / statistics.stdev(ca + cb)


# -- the checks -----------------------------------------------------------------------------------------------

def check_reliability(du_code: str | None) -> list[str]:
    from embdebias.metrics.trust import cronbach_alpha, icc

    rng = np.random.default_rng(34)
    worst = {"alpha": 0.0, "icc2": 0.0, "icc3": 0.0}
    theirs = {"alpha": 0.0, "icc2": 0.0, "icc3": 0.0}
    du = _du_module(du_code)
    for shape in ((40, 3), (120, 10), (25, 5), (300, 4)):
        true = rng.normal(size=(shape[0], 1))
        x = true + rng.normal(scale=0.7, size=shape) + rng.normal(size=(1, shape[1]))
        rows = x.tolist()
        worst["alpha"] = max(worst["alpha"], abs(cronbach_alpha(x) - alpha_by_hand(rows)))
        for form in ("icc2", "icc3"):
            worst[form] = max(worst[form], abs(icc(x, form) - icc_by_hand(rows, form)))
        if du is not None:
            # their alpha takes (items, observations); their icc (subjects, raters)
            theirs["alpha"] = max(theirs["alpha"], abs(cronbach_alpha(x) - du.cronbachs_alpha(x.T)))
            for form in ("icc2", "icc3"):
                theirs[form] = max(theirs[form], abs(icc(x, form) - du.icc(x, icc_type=form)))
    lines = ["## Reliability formulas", "",
             "Four seeded fixtures (40 x 3, 120 x 10, 25 x 5, 300 x 4; subjects x raters):", "",
             "| quantity | largest difference from the transcription | within 1e-12 |", "| --- | --- | --- |"]
    lines += [f"| {k} | {v:.1e} | {'yes' if v <= 1e-12 else 'NO'} |" for k, v in worst.items()]
    if du is not None:
        lines += ["", "Against Du et al.'s `reliability_metrics.py` (nlpsoc/reliability_bias, MIT), run from a "
                      "scratch checkout outside the repository:", "",
                  "| quantity | largest difference | within 1e-12 |", "| --- | --- | --- |"]
        lines += [f"| {k} | {v:.1e} | {'yes' if v <= 1e-12 else 'NO'} |" for k, v in theirs.items()]
    return lines + [""]


def _du_module(path: str | None):
    if not path:
        return None
    spec = importlib.util.spec_from_file_location("du_reliability", Path(path) / "reliability_metrics.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pair_scores_by_hand(emb, words, pairs) -> dict:
    """Each measure's (words x pairs) scores one cosine at a time: projection cos(w, x - y), RIPA
    w . (x - y) / |x - y|, association cos(w, x) - cos(w, y), residual direction cos(w, x/|x| - y/|y|)."""
    index = {w: i for i, w in enumerate(emb.words)}

    def vec(word):
        return emb.vectors[index[word]].astype(float).tolist()

    def dot(u, v):
        return sum(p * q for p, q in zip(u, v))

    def norm(u):
        return math.sqrt(dot(u, u))

    def cos(u, v):
        return dot(u, v) / (norm(u) * norm(v))

    out = {"projection": [], "ripa": [], "association": [], "residual": []}
    for word in words:
        w = vec(word)
        rows = {m: [] for m in out}
        for x, y in pairs:
            vx, vy = vec(x), vec(y)
            diff = [p - q for p, q in zip(vx, vy)]
            rows["projection"].append(cos(w, diff))
            rows["ripa"].append(dot(w, diff) / norm(diff))
            rows["association"].append(cos(w, vx) - cos(w, vy))
            rows["residual"].append(cos(w, [p / norm(vx) - q / norm(vy) for p, q in zip(vx, vy)]))
        for m in out:
            out[m].append(rows[m])
    return out


def check_consistency(emb, du_code: str | None) -> list[str]:
    from embdebias import wordlists
    from embdebias.metrics.trust import WORD_MEASURES, internal_consistency, pair_scores

    vocab = set(emb.words)
    words = [w for w in wordlists.professions() if w in vocab][:60]
    pairs = [p for p in wordlists.definitional_pairs() if p[0] in vocab and p[1] in vocab]
    ours = internal_consistency(pair_scores(emb, words, pairs, lowercase=False))
    by_hand = pair_scores_by_hand(emb, words, pairs)
    du = _du_module(du_code)
    lines = ["## Cronbach's alpha across the base pairs", "",
             f"On the synthetic embedding, {len(words)} professions x {len(pairs)} definitional pairs, each pair "
             "its own direction; the scores computed one cosine at a time, then the transcription of the alpha "
             "formula" + (" and Du et al.'s `cronbachs_alpha`" if du is not None else "") + ":", "",
             "| measure | alpha | difference from the transcription | within 1e-12 |"
             + (" difference from Du et al.'s | within 1e-12 |" if du is not None else ""),
             "| --- | --- | --- | --- |" + (" --- | --- |" if du is not None else "")]
    for m in WORD_MEASURES:
        diff = abs(ours[m]["alpha"] - alpha_by_hand(by_hand[m]))
        row = f"| {m} | {ours[m]['alpha']:.4f} | {diff:.1e} | {'yes' if diff <= 1e-12 else 'NO'} |"
        if du is not None:
            theirs = abs(ours[m]["alpha"] - du.cronbachs_alpha(np.array(by_hand[m]).T))
            row += f" {theirs:.1e} | {'yes' if theirs <= 1e-12 else 'NO'} |"
        lines.append(row)
    return lines + [""]


def check_valnorm(emb) -> list[str]:
    import tempfile

    from embdebias import wordlists
    from embdebias.metrics import valnorm

    rng = np.random.default_rng(7)
    vocab = [w for w in emb.words[100:400] if w.isalpha()][:120]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lexicon.csv"
        path.write_text("word,valence\n" + "".join(f"{w},{rng.uniform(1, 9):.3f}\n" for w in vocab))
        result = valnorm(emb, path)
    weat1 = wordlists.weat_test("weat1")
    index = {w: i for i, w in enumerate(emb.words)}
    a_set = [emb.vectors[index[w]].astype(float).tolist() for w in weat1.A.words if w in index]
    b_set = [emb.vectors[index[w]].astype(float).tolist() for w in weat1.B.words if w in index]
    by_hand = [sc_weat_by_hand(emb.vectors[index[w]].astype(float).tolist(), a_set, b_set) for w in result.words]
    diff = float(np.max(np.abs(np.array(result.scores) - np.array(by_hand))))
    r = statistics.correlation(by_hand, result.ratings)
    return ["## ValNorm", "",
            f"Synthetic lexicon of {len(vocab)} words with seeded random ratings, on the synthetic embedding "
            f"({len(a_set)} pleasant, {len(b_set)} unpleasant words found):", "",
            "| quantity | largest difference from the word-by-word procedure | within 1e-12 |", "| --- | --- | --- |",
            f"| per-word SC-WEAT | {diff:.1e} | {'yes' if diff <= 1e-12 else 'NO'} |",
            f"| Pearson r | {abs(r - result.r):.1e} | {'yes' if abs(r - result.r) <= 1e-12 else 'NO'} |", ""]


def check_loo(emb) -> list[str]:
    from embdebias import wordlists
    from embdebias.metrics import weat
    from embdebias.metrics.trust import leave_one_out
    from embdebias.metrics.base import EvalContext, set_vectors
    from embdebias.metrics.weat import WordSet, effect_size_sample

    worst, n = 0.0, 0
    for test in wordlists.weat_tests("gender"):
        res = weat(emb, test.X, test.Y, test.A, test.B, n_permutations=10, exact_limit=0)
        sample = effect_size_sample(*set_vectors(emb, res.words, EvalContext()))
        loo = leave_one_out(sample)
        for set_name, word, value in loo["removals"]:
            sets = {k: [w for w in res.words[k] if not (k == set_name and w == word)] for k in "XYAB"}
            direct = weat(emb, *(WordSet(k, tuple(sets[k])) for k in "XYAB"), n_permutations=10,
                          exact_limit=0).effect_size
            worst, n = max(worst, abs(direct - value)), n + 1
    return ["## Leave-one-out bands of WEAT", "",
            f"Every removal of every word of every set of the {len(wordlists.weat_tests('gender'))} gender WEAT "
            f"tests on the synthetic embedding ({n} removals), the band's value against `weat()` rerun without "
            "the word:", "", "| quantity | largest difference | within 1e-12 |", "| --- | --- | --- |",
            f"| effect size | {worst:.1e} | {'yes' if worst <= 1e-12 else 'NO'} |", ""]


def check_speed(emb, rounds: int) -> list[str]:
    from embdebias.debias import HardDebias, SoftDebias
    from embdebias.evaluate import evaluate
    from embdebias.metrics.base import attribute_subspace

    sub = attribute_subspace(emb)
    columns = {"original": emb, "hard": HardDebias(subspace=sub).fit(emb).transform(emb),
               "soft": SoftDebias(subspace=sub, random_state=0).fit(emb).transform(emb)}
    from embdebias.metrics import trust as trust_module

    step = []
    assess = trust_module.assess

    def timed_assess(*args, **kwargs):  # the trust step alone, measured inside the evaluation
        c0 = time.process_time()
        try:
            return assess(*args, **kwargs)
        finally:
            step.append(time.process_time() - c0)

    trust_module.assess = timed_assess
    best, wall = {}, {}
    for _ in range(rounds):
        for trust in (False, True):
            t0, c0 = time.perf_counter(), time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                evaluate(columns, subspace=sub, trust=trust)
            best[trust] = min(best.get(trust, math.inf), time.process_time() - c0)
            wall[trust] = min(wall.get(trust, math.inf), time.perf_counter() - t0)
    trust_module.assess = assess
    added = best[True] / best[False] - 1
    own = min(step) / best[False]
    return ["## Cost", "",
            f"`evaluate` of the default run's three columns (original, hard, soft) on {emb.name} "
            f"({len(emb):,} x {emb.dim}), best of {rounds}; CPU seconds of this process (the machine is shared, "
            "so its wall time moves with the other jobs' load; wall seconds beside):", "",
            "| evaluation | CPU seconds | wall seconds |", "| --- | --- | --- |",
            f"| without the trust readings | {best[False]:.2f} | {wall[False]:.2f} |",
            f"| with them (bands, alpha, agreement) | {best[True]:.2f} | {wall[True]:.2f} |", "",
            f"The trust step itself (seed-word bands, alpha and word-level agreement, Kendall's tau with its "
            f"{200}-resample interval), timed inside the evaluation: {min(step):.2f} CPU s, "
            f"{100 * own:.1f} % of the evaluation without it (budget 30 %: {'within' if own <= 0.30 else 'OVER'}); "
            f"the two whole evaluations differ by {100 * added:+.1f} %, within the noise of a shared machine.", ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", default=None, help="embedding for the cost (default: the synthetic one)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--du-code", default=None, help="a scratch checkout of nlpsoc/reliability_bias")
    parser.add_argument("--out", default=str(HERE / "results" / "trust.md"))
    args = parser.parse_args(argv)
    from synthetic import synthetic_embedding

    from embdebias import io

    synthetic = synthetic_embedding()
    target = io.load(args.input) if args.input else synthetic
    lines = ["# Trust readings: fidelity and cost (issue 34)", "",
             f"Written by `python benchmarks/bench_trust.py {' '.join(argv if argv is not None else sys.argv[1:])}`.",
             ""]
    lines += check_reliability(args.du_code) + check_consistency(synthetic, args.du_code)
    lines += check_valnorm(synthetic) + check_loo(synthetic)
    lines += check_speed(target, args.rounds)
    from embdebias._atomic import atomic_file

    with atomic_file(args.out) as tmp:
        tmp.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
