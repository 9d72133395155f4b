"""Bootstrap intervals and paired comparisons (embdebias.metrics._resample)."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic import synthetic_embedding

from embdebias import wordlists
from embdebias.evaluate import evaluate
from embdebias.metrics import METRICS, EvalContext, ect, rnsb, weat
from embdebias.metrics._resample import (
    Sample,
    bootstrap_interval,
    fisher_z_interval,
    mean_of,
    paired_change,
    wilson_interval,
)


def rng(seed=0):
    return np.random.default_rng(seed)


def test_interval_of_a_constant_is_the_constant_and_covers_the_mean():
    assert bootstrap_interval(Sample({"items": list("abcd")}, mean_of([2.0] * 4)), 200, rng()) == (2.0, 2.0)
    values = rng(1).normal(0.3, 1.0, size=400)
    lo, hi = bootstrap_interval(Sample({"items": list(range(400))}, mean_of(values)), 1000, rng())
    se = values.std() / np.sqrt(400)
    assert lo < values.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * se, rel=0.15)  # the normal-theory width


def test_paired_change_pairs_items_by_key_and_detects_shifts():
    keys = [f"w{i}" for i in range(300)]
    base = rng(2).normal(1.0, 1.0, size=300)
    ref = Sample({"items": keys}, mean_of(base))
    same_shuffled = Sample({"items": keys[::-1]}, mean_of(base[::-1]))
    out = paired_change(ref, same_shuffled, 500, rng())
    assert out["change"] == pytest.approx(0.0, abs=1e-12) and out["outcome"] == "no significant change"
    assert out["ci_low"] == pytest.approx(0.0, abs=1e-12) and out["n_items"] == 300
    # a small shift far below the between-word spread is still detected, because items pair up
    shifted = Sample({"items": keys}, mean_of(base - 0.05 + rng(3).normal(0, 0.01, 300)))
    assert paired_change(ref, shifted, 500, rng())["outcome"] == "improved"
    worse = Sample({"items": keys}, mean_of(base + 0.05))
    assert paired_change(ref, worse, 500, rng())["outcome"] == "worse"
    # "higher is fairer" flips the reading
    up = Sample({"items": keys}, mean_of(base + 0.05), fairer="higher")
    assert paired_change(Sample({"items": keys}, mean_of(base), fairer="higher"), up, 500, rng())["outcome"] \
        == "improved"
    # |d| is the bias of a "zero" statistic: -0.5 -> 0.1 is an improvement
    neg = Sample({"items": keys}, mean_of(np.full(300, -0.5)), fairer="zero")
    small = Sample({"items": keys}, mean_of(np.full(300, 0.1)), fairer="zero")
    assert paired_change(neg, small, 100, rng())["change"] == pytest.approx(-0.4)


@pytest.fixture(scope="module")
def emb():
    return synthetic_embedding()


def test_samples_reproduce_the_metrics_point_values(emb):
    t = wordlists.weat_tests("gender")[0]
    ctx = EvalContext(options={"weat": {"tests": [t], "n_permutations": 200}, "rnsb": {"runs": 3}},
                      reference=emb, reference_name="e")
    _, cells, samples = METRICS["weat"].score(emb, t.id, ctx)
    assert samples[(t.id, "effect_size")].value() == pytest.approx(weat(emb, t, n_permutations=200).effect_size)
    _, _, samples = METRICS["ect"].score(emb, t.id, ctx)
    assert samples[(t.id, "spearman")].value() == pytest.approx(ect(emb, t).correlation)
    _, _, samples = METRICS["rnsb"].score(emb, "identity terms", ctx)
    assert samples[("identity terms", "rnsb")].value() == pytest.approx(rnsb(emb, n_runs=3).rnsb)
    _, cells, samples = METRICS["bat"].score(emb, "sembias", ctx)
    for test in ("all", "sub"):
        for stat in ("definition", "stereotype", "none"):
            assert samples[(test, stat)].value() == pytest.approx(cells[test][stat])


def test_every_bias_number_gets_an_interval_and_a_paired_comparison(emb):
    other = emb.with_vectors(emb.vectors * 1.0, name="copy")
    r = evaluate({"original": emb, "copy": other}, suite=["weat", "bat", "direct_bias"], bootstrap=200,
                 options={"weat": {"n_permutations": 200}})
    t = wordlists.weat_tests("gender")[0].id
    lo, hi = r.interval("weat", t, "effect_size", "original")
    assert lo < r.value("weat", t, "effect_size", "original") < hi
    # an identical copy: every comparison is "no significant change", with a zero change
    assert r.comparisons and all(c["outcome"] == "no significant change" for c in r.comparisons)
    assert all(abs(c["change"]) < 1e-9 for c in r.comparisons)
    assert set(r.verdict()) == {"copy"}
    assert "†" in r.to_markdown() and "### Verdict" in r.to_markdown()
    # the same seed gives the same intervals
    again = evaluate({"original": emb, "copy": other}, suite=["weat", "bat", "direct_bias"], bootstrap=200,
                     options={"weat": {"n_permutations": 200}})
    assert again.to_dict() == r.to_dict()
    none = evaluate(emb, suite=["bat"], bootstrap=0)
    assert not any(c.interval for per in none.cells.values() for c in per.values()) and not none.comparisons


def test_residual_verdict_and_analytic_intervals():
    from embdebias.report import Report

    lo, hi = wilson_interval(0.9, 1000)
    assert lo < 0.9 < hi and hi - lo == pytest.approx(2 * 1.96 * np.sqrt(0.9 * 0.1 / 1000), rel=0.05)
    assert wilson_interval(1.0, 1000)[1] == pytest.approx(1.0)
    lo, hi = fisher_z_interval(0.5, 5000)
    assert lo < 0.5 < hi and hi - lo < 0.05
    r = Report(["original", "gone", "kept"])
    for emb, acc in (("original", 1.0), ("gone", 0.51), ("kept", 0.91)):
        lo, hi = wilson_interval(acc, 1000)
        for stat, v in (("cluster_accuracy", acc), ("classification_accuracy", acc)):
            r.add(emb, "residual", "gender", stat, v, lo, hi)
    verdict = r.verdict()
    assert verdict["kept"]["residual"]["recoverable"] is True
    assert verdict["gone"]["residual"]["recoverable"] is False  # 0.51 is within chance
    md = r.to_markdown()
    assert "**kept**: gender still recoverable (clustering 0.91" in md
    assert "**gone**: gender not recoverable beyond chance" in md


def test_generated_analogies_are_listed_per_column(emb):
    r = evaluate({"original": emb}, suite=["analogies"], bootstrap=0, strict=True)
    assert r.value("analogies", "she:he", "n_scored") > 0
    assert "- original: " in r.to_markdown()


def test_weat_function_and_evaluate_draw_the_same_bootstrap(emb):
    """One engine, one seed derivation: the function's interval is the report's, whatever the
    column is called (the resamples are keyed by seed, metric, test and statistic only)."""
    t = wordlists.weat_tests("gender")[1]
    r = weat(emb, t, bootstrap=300, random_state=7, n_permutations=100)
    rep = evaluate({"anything": emb}, ["weat"], bootstrap=300, random_state=7,
                   options={"weat": {"tests": [t.id], "n_permutations": 100}})
    assert r.ci is not None and r.ci == rep.interval("weat", t.id, "effect_size", "anything")
    assert r.ci[0] < r.effect_size < r.ci[1]
    assert weat(emb, t, bootstrap=300, random_state=8, n_permutations=100).ci != r.ci
    assert weat(emb, t, random_state=7, n_permutations=100).p_value == r.p_value  # the bootstrap leaves it alone


def _cells(report, column):
    return {(m, t, s): tuple(report.cell(m, t, s, column)) for m, t, s in report.rows}


def test_a_column_keeps_its_numbers_whatever_its_name_and_company(emb):
    """Issue 21: the same embedding gets the same values and intervals alone or beside
    others, first or named anything; paired comparisons use common resamples."""
    suite = ["weat", "bat", "direct_bias", "similarity"]
    opts = {"weat": {"n_permutations": 200}}
    shifted = emb.with_vectors(emb.vectors + 0.3 * np.random.default_rng(1).standard_normal(emb.vectors.shape),
                               name="shifted")
    alone = evaluate({"A": emb}, suite, bootstrap=200, options=opts)
    renamed = evaluate({"x": emb}, suite, bootstrap=200, options=opts)
    company = evaluate({"original": emb, "B": shifted, "C": emb.with_vectors(emb.vectors * 1.0, name="C")},
                       suite, bootstrap=200, options=opts)
    assert _cells(alone, "A") == _cells(renamed, "x") == _cells(company, "original")
    swapped = evaluate({"original": emb, "C": emb.with_vectors(emb.vectors * 1.0, name="C"), "renamed": shifted},
                       suite, bootstrap=200, options=opts)
    assert _cells(company, "B") == _cells(swapped, "renamed")
    by_key = {(c["metric"], c["test"], c["statistic"]): c for c in company.comparisons if c["embedding"] == "B"}
    again = {(c["metric"], c["test"], c["statistic"]): c for c in swapped.comparisons
             if c["embedding"] == "renamed"}
    assert by_key and all(by_key[k]["ci_low"] == again[k]["ci_low"] for k in by_key)
    # common resamples: an identical copy changes by exactly nothing in every resample
    assert all(c["ci_low"] == c["ci_high"] == 0 for c in company.comparisons
               if c["embedding"] == "C" and c["outcome"] != "not comparable")


def test_score_and_run_give_a_column_the_same_numbers(tmp_path, emb):
    """``score A B`` and ``score A`` give A the same cells whatever its file is called."""
    import json

    from synthetic import write_word2vec_text

    from embdebias.cli import main

    a, renamed = tmp_path / "a.txt", tmp_path / "zz_other_name.txt"
    write_word2vec_text(emb, a)
    write_word2vec_text(emb, renamed)
    b = tmp_path / "b.txt"
    write_word2vec_text(emb.with_vectors(emb.vectors[::-1].copy(), name="b"), b)
    outs = []
    for args in ([str(a)], [str(renamed), str(b)], [str(b), str(a)]):
        out = tmp_path / f"r{len(outs)}.json"
        assert main(["--quiet", "score", *args, "--json", "--tests", "weat", "direct_bias", "--out", str(out)]) == 0
        outs.append(json.loads(out.read_text()))
    from embdebias.report import Report

    reports = [Report.from_dict(o) for o in outs]
    first = [_cells(r, r.embeddings[i]) for r, i in zip(reports, (0, 0, 1))]
    assert first[0] == first[1]
    # second column: all but the rows measured on the first column's direction (by design)
    by_design = {k for k in first[0] if k[2] == "direct_bias_original"}
    assert by_design and {k: v for k, v in first[0].items() if k not in by_design} == \
        {k: v for k, v in first[2].items() if k not in by_design}
