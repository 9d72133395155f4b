"""The first screen of a report (issue 21): a few sentences computed from the numbers, one
summary table, and a distinct exit status when nothing could be scored."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic import synthetic_embedding, write_word2vec_text

from embdebias.embedding import Embedding
from embdebias.evaluate import evaluate
from embdebias.report.summary import MARKS, first_screen, headline_rows, opening_sentences, scored

SUITE = ["weat", "direct_bias", "bat", "similarity"]
OPTS = {"weat": {"n_permutations": 200}}


@pytest.fixture(scope="module")
def emb():
    return synthetic_embedding()


def _sentences(md: str) -> list[str]:
    head = md.split("### Summary")[0]
    return [p for p in head.split("\n\n") if p.strip()]


def test_one_embedding_opens_with_the_answer_and_the_summary_table(emb):
    r = evaluate({"mine": emb}, SUITE, bootstrap=100, options=OPTS)
    md = r.to_markdown()
    assert md.startswith("**Is 'mine' biased? ")
    sentences = _sentences(md)
    assert 1 <= len(sentences) <= 5
    # the WEAT count is the report's own: tests with p < 0.05 of those scored
    tests = [t for (m, t, s) in r.rows if m == "weat" and s == "p_value"]
    hits = sum(r.value("weat", t, "p_value") < 0.05 for t in tests)
    assert f"WEAT ({hits} of {len(tests)} tests p < 0.05" in sentences[0]
    assert "### Summary" in md and md.index("### Summary") < md.index("### WEAT")
    rows = headline_rows(r)
    assert ("similarity", "wordsim353", "spearman", "higher (better)") in [tuple(x) for x in rows]
    table = md.split("### Summary")[1].split("\n\n")[1]
    assert len(table.splitlines()) == 2 + len(rows)
    assert "| Word similarity, wordsim353: Spearman rho | higher (better) | " in table
    assert "**Quality**: " in md


def test_debiased_columns_say_what_changed_beyond_the_noise_and_at_what_cost(emb):
    from embdebias.debias import make_debiaser

    hard = make_debiaser("hard").fit(emb).transform(emb)
    r = evaluate({"original": emb, "hard": hard}, SUITE, bootstrap=100, options=OPTS)
    sentences = opening_sentences(r)
    assert len(sentences) <= 5
    bias = [c for c in r.comparisons if c["embedding"] == "hard" and c["metric"] != "similarity"
            and c["statistic"] != "definition" and c["outcome"] != "not comparable"]
    improved = sum(c["outcome"] == "improved" for c in bias)
    assert sentences[1].startswith("**Which removed the most bias?**")
    assert f"(fairer on {improved} of {len(bias)} bias numbers" in sentences[1]
    assert sentences[-1].startswith("**What did it cost?** The worst quality test kept: 'hard': ")
    # quality has intervals and paired changes like every bias number
    assert r.interval("similarity", "wordsim353", "spearman", "hard") is not None
    assert any(c["metric"] == "similarity" for c in r.comparisons)
    marked = "\n".join(first_screen(r))
    direct = next(c for c in r.comparisons if c["metric"] == "direct_bias" and c["embedding"] == "hard")
    assert direct["outcome"] == "improved" and MARKS[("bias", "improved")] in marked


def test_an_unscorable_report_says_so_first_and_the_cli_exits_3(tmp_path):
    from embdebias.cli import main

    tiny = Embedding([f"w{i}" for i in range(50)], np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32),
                     name="tiny")
    with pytest.warns(UserWarning):
        r = evaluate({"tiny": tiny}, ["weat", "bat"], bootstrap=10)
    assert not scored(r)
    assert r.to_markdown().startswith("**Nothing could be scored**")
    path = tmp_path / "tiny.txt"
    write_word2vec_text(tiny, path)
    out = tmp_path / "r.md"
    assert main(["-q", "score", str(path), "--tests", "weat", "bat", "--out", str(out)]) == 3
    assert out.read_text().startswith("**Nothing could be scored**")


def test_exit_status_is_documented_in_help(capsys):
    from embdebias.cli import main

    for cmd in ("score", "run"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        assert "3 nothing could be scored" in " ".join(capsys.readouterr().out.split())


def test_disagreements_are_explained_where_they_happen():
    from embdebias.report import Report

    r = Report(["original", "soft"])
    r.params = {"bootstrap_level": 0.95, "bootstrap_resamples": 1000}
    r.add("original", "weat", "t", "effect_size", 0.95, -0.36, 1.50)
    r.add("original", "weat", "t", "p_value", 3e-5)
    r.add("original", "weat", "t", "n_scored", 32)
    r.add("soft", "weat", "t", "effect_size", 0.14, -0.6, 0.8)
    r.add("soft", "weat", "t", "p_value", 0.3)
    r.comparisons.append({"embedding": "soft", "reference": "original", "metric": "weat", "test": "t",
                          "statistic": "effect_size", "reference_value": 0.95, "value": 0.14, "change": -0.81,
                          "ci_low": -1.5, "ci_high": 0.1, "outcome": "no significant change", "n_items": 32})
    md = r.to_markdown()
    assert "- Why 'original', t has p = 3e-05 but an interval [-0.36, 1.50] that includes 0" in md
    assert "- Why 'soft', t effect size d 0.95 -> 0.14 is no significant change" in md
    assert "soft', t has p" not in md  # p = 0.3: nothing to explain
    assert md.count("[a, b] (in every table)") == 1


def test_the_interval_footnote_has_no_change_mark_for_one_column(emb):
    md = evaluate({"mine": emb}, ["weat", "bat"], bootstrap=50, options=OPTS).to_markdown()
    assert md.count("[a, b] (in every table)") == 1 and "change from" not in md


def test_the_run_figures_are_drawn_with_captions_tied_to_the_tables(emb, tmp_path):
    from embdebias.debias import make_debiaser
    from embdebias.report.figures import DIRECT_BIAS_LABEL, RUN_FIGURES, run_figures

    hard = make_debiaser("hard").fit(emb).transform(emb)
    cols = {"original": emb, "hard": hard}
    from embdebias import wordlists

    r = evaluate(cols, ["weat", "direct_bias", "similarity"], bootstrap=50, options=OPTS)
    # the residual protocol needs 5,000 alphabetic words: its words and accuracies are given here
    t = wordlists.weat_tests("gender")[0]
    r.details["original"]["residual/gender"] = {"cluster_words": {"male": [w.lower() for w in t.X.words],
                                                                  "female": [w.lower() for w in t.Y.words]}}
    for name, acc in (("original", 1.0), ("hard", 0.62)):
        r.add(name, "residual", "gender", "cluster_accuracy", acc)
    figures = run_figures(cols, r, tmp_path)
    assert set(figures) == set(RUN_FIGURES)
    # two columns: no ranking for the metric families to agree on, and the figure says so
    assert "three or more columns" in figures.pop("agreement.png")["error"]
    for file, fig in figures.items():
        assert "caption" in fig, fig
        assert (tmp_path / file).stat().st_size > 1000
    assert DIRECT_BIAS_LABEL in figures["occupations.png"]["caption"]
    assert DIRECT_BIAS_LABEL == r.labels["direct_bias"]["direct_bias_original"]  # named the same way
    assert "clustering accuracy" in figures["residual.png"]["caption"]
    assert f"{len(t.X.words) + len(t.Y.words)} most" not in figures["residual.png"]["caption"]  # per side
    # a report without a residual test: that figure says why, the others are drawn
    partial = run_figures(cols, evaluate(cols, ["weat"], bootstrap=20, options=OPTS), tmp_path / "p")
    assert "error" in partial["residual.png"] and "caption" in partial["weat.png"]


def test_a_users_own_weat_is_described_truthfully(emb):
    from embdebias import wordlists
    from embdebias.data.wordlists import WeatTest, WordSet

    base = wordlists.weat_tests("gender")[0]
    mine = WeatTest("flowers_insects", "mine", WordSet("flowers", base.X.words), WordSet("insects", base.Y.words),
                    WordSet("pleasant", base.A.words), WordSet("unpleasant", base.B.words), group="mine")
    r = evaluate({"e": emb}, tests=["weat"], bootstrap=0, options={"weat": {"tests": [mine], "n_permutations": 50}})
    assert "the user's own tests (flowers_insects)" in r.data["weat"] and "weat_tests.json" not in r.data["weat"]
    assert "X flowers, Y insects, A pleasant, B unpleasant" in r.legends["weat"]
    assert "male terms" not in r.legends["weat"]


def test_residual_tests_score_when_their_neutral_list_is_short():
    """Issue 21, item 5: only the re-fitted rows use the neutral words (the professions); when
    those are missing, the clustering and SVM rows are still scored."""
    from test_residual import _planted

    emb = _planted(n=6000)
    with pytest.warns(UserWarning, match="re-fitted direction's rows are not scored"):
        r = evaluate({"original": emb}, ["residual"], bootstrap=0,
                     options={"residual": {"neutral_words": ["nosuchwordone", "nosuchwordtwo", "aaaa"]}})
    assert not r.failures
    assert r.value("residual", "gender", "cluster_accuracy") is not None
    assert r.value("residual", "gender", "refit_direct_bias") is None


def test_an_unscored_unit_warns_once_with_its_count_of_columns():
    import warnings

    from embdebias.evaluate import UnscoredWarning

    tiny = Embedding([f"w{i}" for i in range(50)], np.random.default_rng(0).normal(size=(50, 8)).astype(np.float32),
                     name="tiny")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = evaluate({"a": tiny, "b": tiny, "c": tiny}, ["bat"], bootstrap=0)
    unscored = [str(w.message) for w in caught if issubclass(w.category, UnscoredWarning)]
    assert len(unscored) == len({(f["metric"], f["unit"]) for f in r.failures}) == 1
    assert unscored[0].startswith("bat/") and "on 3 of 3 column(s) (a, b, c)" in unscored[0]


def test_score_takes_a_users_weat_file_and_names_a_bad_key(tmp_path, emb, capsys):
    import json

    from embdebias import wordlists
    from embdebias.cli import main

    base = wordlists.weat_tests("gender")[0]
    mine = {"id": "my_test", "title": "mine", **{k: {"name": f"set_{k}", "words": list(getattr(base, k).words)}
                                                 for k in "XYAB"}}
    good = tmp_path / "my_weat.json"
    good.write_text(json.dumps([mine]), encoding="utf-8")
    path = tmp_path / "e.txt"
    write_word2vec_text(emb, path)
    out = tmp_path / "r.md"
    assert main(["-q", "score", str(path), "--tests", str(good), "--out", str(out)]) == 0
    md = out.read_text()
    assert "| my_test | effect size d |" in md and "the user's own tests (my_test)" in md
    assert "X set_X, Y set_Y, A set_A, B set_B" in md
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{k: v for k, v in mine.items() if k != "B"}]), encoding="utf-8")
    assert main(["-q", "score", str(path), "--tests", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "'my_test'" in err and "B: expected an object" in err


def test_a_run_with_quality_but_no_bias_number_is_unscorable():
    from embdebias.report import Report

    r = Report(["e"])
    r.add("e", "weat", "t", "effect_size", None)
    r.add("e", "similarity", "wordsim353", "spearman", 0.5)
    assert not scored(r)
    assert opening_sentences(r)[0].startswith("**Nothing could be scored**: every bias test failed")
    quality_only = Report(["e"])
    quality_only.add("e", "similarity", "wordsim353", "spearman", 0.5)
    assert scored(quality_only)


def _comparison(outcome, share, **extra):
    return {"embedding": "m", "reference": "original", "metric": "direct_bias", "test": "professions",
            "statistic": "direct_bias_original", "reference_value": 0.2, "value": 0.2 * (1 - share),
            "change": -0.2 * share, "ci_low": -0.01, "ci_high": -0.001, "outcome": outcome, "n_items": 300,
            "share": share, "share_ci_low": share - 0.01, "share_ci_high": share + 0.01, **extra}


@pytest.mark.parametrize("share, expected", [(0.03, "small change"), (0.10, "improved"), (0.5, "improved")])
def test_a_change_beyond_the_noise_is_fairer_only_from_the_minimum_share(share, expected):
    from embdebias.evaluate import sized_outcome

    assert sized_outcome(_comparison("improved", share), 0.10)["outcome"] == expected
    # a bias added: less fair only from the same share
    added = sized_outcome(_comparison("worse", -share), 0.10)["outcome"]
    assert added == {"improved": "worse"}.get(expected, expected)
    # within the noise stays within the noise, whatever its size
    assert sized_outcome(_comparison("no significant change", share), 0.10)["outcome"] == "no significant change"


def test_the_share_removed_and_its_interval_come_from_the_same_resamples(emb):
    from embdebias.debias import make_debiaser

    soft = make_debiaser("soft").fit(emb).transform(emb)
    r = evaluate({"original": emb, "soft": soft}, ["direct_bias", "ect"], bootstrap=200)
    zero = evaluate({"original": emb, "soft": soft}, ["direct_bias", "ect"], bootstrap=200, min_share=0.0)
    assert r.params["min_share"] == {"direct_bias": 0.10, "ect": 0.10}
    for c, c0 in zip(r.comparisons, zero.comparisons):
        metric = c["metric"]
        fair = 1.0 if metric == "ect" else 0.0  # ECT's Spearman rho is fair at 1
        ref_bias = fair - c["reference_value"] if metric == "ect" else c["reference_value"]
        assert c["share"] == pytest.approx(-c["change"] / ref_bias)
        assert c["share_ci_low"] <= c["share"] <= c["share_ci_high"]
        assert (c["change"], c["ci_low"], c["ci_high"]) == (c0["change"], c0["ci_low"], c0["ci_high"])
        if c0["outcome"] == "improved" and c["share"] < 0.10:
            assert c["outcome"] == "small change"
        else:
            assert c["outcome"] == c0["outcome"]


def test_min_share_is_checked():
    from embdebias.errors import EmbdebiasError

    with pytest.raises(EmbdebiasError, match="min_share must be a number in \\[0, 1\\)"):
        evaluate({"e": synthetic_embedding(n_filler=100)}, ["direct_bias"], bootstrap=0, min_share=1.5)


def test_every_direction_is_declared_once_in_the_headline():
    from embdebias.metrics import METRICS

    bat, ect, res = METRICS["bat"], METRICS["ect"], METRICS["residual"]
    assert bat.is_quality("definition") and bat.direction("definition") == "higher"
    assert not bat.is_quality("stereotype") and bat.fair_value("stereotype") == 0.0
    assert ect.direction("spearman") == "higher" and ect.fair_value("spearman") == 1.0
    assert ect.bias_magnitude("spearman", 0.8) == pytest.approx(0.2)
    assert res.fair_value("cluster_accuracy", chance=1 / 3) == pytest.approx(1 / 3)
    assert METRICS["weat"].direction("effect_size") == "zero"
    assert METRICS["weat"].bias_magnitude("effect_size", -0.7) == pytest.approx(0.7)
    assert METRICS["analogy"].is_quality("accuracy") and METRICS["analogy"].fair_value("accuracy") is None


def test_is_it_biased_counts_every_family_with_a_test(emb):
    r = evaluate({"mine": emb}, ["weat", "direct_bias", "ect", "rnsb", "bat"], bootstrap=100, options=OPTS)
    first = opening_sentences(r)[0]
    for family in ("WEAT (", "Direct bias (", "ECT (", "RNSB (", "BAT ("):
        assert family in first, family
    assert " of 5 test families" in first


def test_a_familys_row_is_its_most_significant_test(emb):
    from embdebias.report.summary import informative_test

    r = evaluate({"mine": emb}, ["weat"], bootstrap=0, options=OPTS)
    tests = [t for (m, t, s) in r.rows if m == "weat" and s == "p_value"]
    chosen = informative_test(r, "weat", "effect_size", tests)
    assert r.value("weat", chosen, "p_value") == min(r.value("weat", t, "p_value") for t in tests)
    assert ("weat", chosen, "effect_size", "0") in [tuple(x) for x in headline_rows(r)]


def test_a_method_whose_median_share_is_under_the_minimum_is_said_to_make_small_changes():
    from embdebias.report import Report
    from embdebias.report.summary import changed_text, ranked_methods

    r = Report(["original", "ran", "hard"], params={"min_share": {"direct_bias": 0.10, "ect": 0.10}})
    for emb, share, outcome in (("ran", 0.03, "small change"), ("hard", 0.9, "improved")):
        for metric in ("direct_bias", "ect"):
            r.comparisons.append({**_comparison(outcome, share), "embedding": emb, "metric": metric})
    assert ranked_methods(r) == ["hard", "ran"]  # most bias removed first
    assert "'ran'" not in changed_text(r, "hard")
    assert changed_text(r, "ran").startswith("removed a median 3 % of the bias over 2 families -- its changes are "
                                            "small (under the 10 % minimum)")
    assert "its changes are small" not in changed_text(r, "hard")


def test_the_choosing_page_quotes_the_reports_own_protocol():
    from pathlib import Path

    from embdebias.evaluate import DEFAULT_SUITE
    from embdebias.metrics import METRICS
    from embdebias.report import Report
    from embdebias.report.summary import summary_table

    r = Report(["original", "x"], params={"min_share": {n: METRICS[n].min_share for n in DEFAULT_SUITE}})
    for emb, value in (("original", 0.2), ("x", 0.1)):
        r.add(emb, "direct_bias", "professions", "direct_bias_original", value)
    page = Path(__file__).resolve().parent.parent / "docs" / "user_guide" / "debiasers" / "choosing.md"
    assert "> " + summary_table(r)[-1] in page.read_text(encoding="utf-8")
