"""The methods side by side (issue 22, item 3) and the report's leftovers of issue 21: the
comparison table, its aggregates, the trade-off figure, the verdict's recoverability line,
the sentence where a value lies outside its own interval, and metric warnings said once."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from synthetic import synthetic_embedding

from embdebias.evaluate import AGGREGATES, evaluate
from embdebias.report import Report
from embdebias.report.compare import MEASURES, comparison_table, measure_entry, unrecoverable_line
from embdebias.report.markdown import outside_notes

SUITE = ["weat", "direct_bias", "bat", "similarity"]
OPTS = {"weat": {"n_permutations": 100}}


@pytest.fixture(scope="module")
def columns():
    from embdebias.debias import make_debiaser

    emb = synthetic_embedding()
    return {"original": emb, "hard": make_debiaser("hard").fit(emb).transform(emb),
            "soft": make_debiaser("soft").fit(emb).transform(emb)}


@pytest.fixture(scope="module")
def report(columns):
    return evaluate(columns, SUITE, bootstrap=200, options=OPTS)


def test_mean_abs_weat_d_is_the_mean_of_the_tests_and_keeps_no_company(columns, report):
    tests = [t for m, t, s in report.rows if m == "weat" and s == "effect_size"]
    for emb in report.embeddings:
        entry = report.aggregate("weat_mean_abs_d", emb)
        d = [abs(report.value("weat", t, "effect_size", emb)) for t in tests]
        assert entry["value"] == pytest.approx(np.mean(d), rel=1e-9)
        assert entry["tests"] == sorted(tests)
        assert entry["ci_low"] < entry["ci_high"]
    hard = report.aggregate("weat_mean_abs_d", "hard")
    assert hard["change"] == pytest.approx(hard["value"] - report.aggregate("weat_mean_abs_d", "original")["value"])
    assert hard["outcome"] in ("improved", "worse", "no significant change")
    # the same column, alone and under another name: the same interval
    alone = evaluate({"x": columns["hard"]}, SUITE, bootstrap=200, options=OPTS).aggregate("weat_mean_abs_d", "x")
    assert (alone["ci_low"], alone["ci_high"]) == (hard["ci_low"], hard["ci_high"])
    assert "change" not in alone
    assert {a[0] for a in AGGREGATES} >= {"weat_mean_abs_d", "extrinsic_mean_abs_gap"}


def test_the_aggregates_survive_json(report, tmp_path):
    report.to_json(tmp_path / "r.json")
    again = Report.from_json(tmp_path / "r.json")
    assert again.aggregates == report.aggregates


def test_the_comparison_table_has_one_row_per_method_with_intervals_and_paired_changes(report):
    lines = comparison_table(report)
    header, rows = lines[0], [line for line in lines if line.startswith("| original") or line.startswith("| hard")
                              or line.startswith("| soft")]
    assert [r.split(" | ")[0] for r in rows] == ["| original", "| hard", "| soft"]
    for label in ("DirectBias (original direction)", "mean \\|WEAT d\\|", "BAT stereotype", "WordSim353"):
        assert label in header
    # the original row has no change; every other cell has its value, interval and paired change
    assert "Δ" not in rows[0]
    wordsim = next(m for m in MEASURES if m.label == "WordSim353")
    entry = measure_entry(report, wordsim, "hard")
    ref = measure_entry(report, wordsim, "original")
    assert entry["paired"]
    # quality: the change of the number itself (the comparison holds the change of the bias, -q)
    shown = f"Δ {entry['value'] - ref['value']:+.3f}"
    assert shown in rows[1]
    direct = next(m for m in MEASURES if m.statistic == "direct_bias_original")
    e = measure_entry(report, direct, "hard")
    assert f"{e['value']:.3f} [{e['ci_low']:.2f}, {e['ci_high']:.2f}]<br>Δ {e['change']:+.3f} [" in rows[1]
    # hard debias lowers the direct bias beyond the noise, by more than the minimum share: said in words
    assert e["change"] < 0 and f"fairer, {100 * e['share']:.0f} % removed" in rows[1]
    assert "▼" not in "\n".join(lines) and "▲" not in "\n".join(lines)
    assert "no paired resampling" in lines[-1]
    assert comparison_table(evaluate({"one": synthetic_embedding()}, ["direct_bias"], bootstrap=0)) == []


def _residual_report(accuracies: dict) -> Report:
    r = Report(list(accuracies))
    for emb, (c, s) in accuracies.items():
        r.add(emb, "residual", "gender", "cluster_accuracy", *c)
        r.add(emb, "residual", "gender", "classification_accuracy", *s)
    return r


def test_the_verdict_names_the_methods_after_which_gender_is_not_recoverable():
    r = _residual_report({"original": ((1.0, 0.99, 1.0), (1.0, 0.99, 1.0)),
                          "inlp": ((0.52, 0.49, 0.55), (0.51, 0.48, 0.54)),
                          "hard": ((0.91, 0.89, 0.93), (0.96, 0.95, 0.97))})
    line = unrecoverable_line(r)
    assert line.startswith("- **Gender no longer recoverable beyond the noise**") and "after: inlp;" in line
    assert "still recoverable after: hard." in line
    none = _residual_report({"original": ((1.0, 0.99, 1.0), (1.0, 0.99, 1.0)),
                             "soft": ((0.94, 0.92, 0.95), (1.0, 0.99, 1.0)),
                             "hard": ((0.91, 0.89, 0.93), (0.96, 0.95, 0.97))})
    line = unrecoverable_line(none, "religion")
    assert "Religion is still recoverable after every method** (2 of 2)" in line
    assert "'hard', still has clustering 0.91 and SVM 0.96" in line  # the unflattering numbers, not hidden
    assert "Religion is still recoverable after every method" not in none.to_markdown()  # the report's is gender
    assert "Gender is still recoverable after every method" in none.to_markdown()


def test_a_value_outside_its_own_interval_gets_one_sentence():
    r = Report(["original", "soft"])
    r.add("original", "ect", "professions", "spearman", 0.866, 0.75, 0.91)
    r.add("soft", "ect", "professions", "spearman", 0.987, 0.93, 0.9849)
    notes = outside_notes(r, "ect")
    assert len(notes) == 2 and notes[0].count("Why") == 1
    assert "'soft' professions Spearman rho 0.987 [0.93, 0.98]" in notes[0]
    assert "'original'" not in notes[0]
    # inside, though printed [0.98, 0.98] around 0.976: no sentence
    r.add("original", "residual", "gender", "neighbour_correlation", 0.976, 0.9755, 0.9785)
    assert outside_notes(r, "residual") == []
    assert "Why a value lies outside its own interval" in r.to_markdown()


def test_tradeoff_points_are_fractions_of_the_original(report, tmp_path):
    from embdebias.report.figures import tradeoff_caption, tradeoff_figure, tradeoff_points

    points = tradeoff_points(report)
    assert set(points) == {"hard", "soft"}
    q = [measure_entry(report, m, e)["value"] for m in MEASURES if m.metric == "similarity"
         for e in ("hard", "original")]
    kept = min(q[0] / q[1], q[2] / q[3])  # the worst quality test kept, never the mean
    assert points["hard"]["quality"][0] == pytest.approx(kept)
    # the bounds: the paired change from the original (ref + change) over the original's value
    from embdebias.report.compare import shown_change

    sims = [m for m in MEASURES if m.metric == "similarity"]
    worst = min(sims, key=lambda m: measure_entry(report, m, "hard")["value"] / measure_entry(report, m, "original")["value"])
    low = (measure_entry(report, worst, "original")["value"] + shown_change(measure_entry(report, worst, "hard"), worst)[1]) \
        / measure_entry(report, worst, "original")["value"]
    assert points["hard"]["quality"][1] == pytest.approx(low)
    assert points["hard"]["quality_name"] == worst.label
    w = [report.aggregate("weat_mean_abs_d", e)["value"] for e in ("hard", "original")]
    assert points["hard"]["weat"][0] == pytest.approx(w[0] / w[1])
    assert points["hard"]["residual"] is None  # no residual test in this report
    fig = tradeoff_figure(report)
    info = fig.info
    assert info["panels"] == ["weat"] and info["methods"] == 2
    assert "mean |WEAT d|" in tradeoff_caption(info) and "fraction" in tradeoff_caption(info)


def test_a_metric_warning_of_every_column_is_said_once_with_its_count():
    from test_residual import _planted

    from embdebias.embedding import Embedding

    emb = _planted(n=6000)
    # the same vectors under other names: the messages name each embedding, and are still one
    other = Embedding(emb.words, emb.vectors, name="other")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate({"a": emb, "b": other, "c": emb}, ["residual"], bootstrap=0,
                 options={"residual": {"neutral_words": ["nosuchwordone", "nosuchwordtwo", "aaaa"]}})
    refit = [str(w.message) for w in caught if "re-fitted direction's rows are not scored" in str(w.message)]
    assert len(refit) == 1
    assert refit[0].endswith("(on 3 of 3 columns: a, b, c)") and "planted" in refit[0]
