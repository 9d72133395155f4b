"""How far to trust the numbers (issue 34): seed-word bands, alpha, ICC, agreement, validity."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from embdebias import wordlists
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError, WordListError
from embdebias.metrics import valnorm, wat, weat
from embdebias.metrics.base import EvalContext, Sample, set_vectors
from embdebias.metrics.trust import (cronbach_alpha, half_subset_spread, icc, icc_interval, kendall_tau_b,
                                     leave_one_out, pair_scores, reliability, word_sensitivity)
from embdebias.metrics.weat import WordSet, effect_size_sample
from synthetic import synthetic_embedding


@pytest.fixture(scope="module")
def emb():
    return synthetic_embedding()


def _noisy(emb, scale, seed, name):
    rng = np.random.default_rng(seed)
    return Embedding(emb.words, emb.vectors + rng.normal(0, scale, emb.vectors.shape).astype(emb.vectors.dtype),
                     name=name)


def test_leave_one_out_equals_rerunning_weat(emb):
    test = wordlists.weat_test("gender_career_family")
    res = weat(emb, test.X, test.Y, test.A, test.B, n_permutations=10, exact_limit=0)
    loo = leave_one_out(effect_size_sample(*set_vectors(emb, res.words, EvalContext())))
    assert len(loo["removals"]) == sum(len(v) for v in res.words.values())
    for set_name, word, value in loo["removals"][::5]:
        sets = [WordSet(k, tuple(w for w in res.words[k] if not (k == set_name and w == word))) for k in "XYAB"]
        assert value == pytest.approx(weat(emb, *sets, n_permutations=10, exact_limit=0).effect_size, abs=1e-12)
    assert loo["low"] <= res.effect_size <= loo["high"]


def test_band_names_the_word_that_moves_most_and_is_seeded():
    # the statistic is the mean of the items: leaving out the outlier moves it most
    values = np.array([0.0, 0.1, -0.1, 5.0, 0.05])
    sample = Sample({"items": ["a", "b", "c", "outlier", "e"]}, lambda idx: values[idx["items"]].mean(axis=1))
    band = word_sensitivity(sample, np.random.default_rng(0))
    assert band["most_moving"][0]["word"] == "outlier"
    assert band["loo_low"] == pytest.approx(values[[0, 1, 2, 4]].mean())
    again = word_sensitivity(sample, np.random.default_rng(0))
    assert (band["half_low"], band["half_high"]) == (again["half_low"], again["half_high"])
    other = half_subset_spread(sample, np.random.default_rng(1))
    assert other["sd"] > 0 and other["n"] == 200


def test_alpha_and_icc_against_the_textbook_formulas():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(30, 1)) + rng.normal(scale=0.5, size=(30, 4))
    k = x.shape[1]
    expected = k / (k - 1) * (1 - x.var(axis=0, ddof=1).sum() / x.sum(axis=1).var(ddof=1))
    assert cronbach_alpha(x) == pytest.approx(expected, abs=1e-12)
    # identical raters: both ICCs are 1; a rater shifted by a constant lowers ICC(2,1) only
    same = np.repeat(x[:, :1], 3, axis=1)
    assert icc(same, "icc2") == pytest.approx(1.0) and icc(same, "icc3") == pytest.approx(1.0)
    shifted = same + np.array([0.0, 0.0, 3.0])
    assert icc(shifted, "icc3") == pytest.approx(1.0) and icc(shifted, "icc2") < 0.5
    lo, hi = icc_interval(x, "icc2", 300, 0)
    assert lo <= icc(x, "icc2") <= hi
    with pytest.raises(EmbdebiasError, match="at least 2"):
        cronbach_alpha(x[:, :1])


def test_kendall_tau_b_matches_scipy():
    from scipy.stats import kendalltau

    rng = np.random.default_rng(5)
    for _ in range(20):
        a, b = rng.integers(0, 4, 6).astype(float), rng.normal(size=6)
        expected = kendalltau(a, b).statistic
        assert kendall_tau_b(a, b) == pytest.approx(expected, nan_ok=True)


def test_pair_scores_and_missing_pairs(emb):
    scores = pair_scores(emb, wordlists.professions()[:40], wordlists.definitional_pairs())
    assert scores["projection"].shape == (len(scores["words"]), len(scores["pairs"]))
    assert np.all(np.abs(scores["projection"]) <= 1 + 1e-9)
    with pytest.raises(EmbdebiasError, match="expected at least 2"):
        pair_scores(emb, ["doctor"], [("qqqx", "qqqy"), ("she", "he")])


def _lexicon(tmp_path, emb, name="lex.csv", noise=0.05, rows=None):
    words = [w for w in wordlists.professions() if w in set(emb.words)][:50]
    scores = pair_scores(emb, words, wordlists.definitional_pairs())["association"].mean(axis=1)
    rng = np.random.default_rng(0)
    path = tmp_path / name
    body = rows if rows is not None else "".join(f"{w},{s + rng.normal(0, noise):.5f}\n" for w, s in zip(words, scores))
    path.write_text("word,rating\n" + body)
    return path


def test_wat_and_valnorm_read_a_users_lexicon(emb, tmp_path):
    path = _lexicon(tmp_path, emb)
    res = wat(emb, path)
    assert res.r > 0.9 and res.ci[0] < res.r < res.ci[1] and res.n_scored == 50
    assert wat(emb, path, orientation="male").r == pytest.approx(-res.r)
    assert -1 <= valnorm(emb, path).r <= 1
    unknown = tmp_path / "unknown.csv"
    unknown.write_text(path.read_text(encoding="utf-8") + "zzz_not_a_word,1\n", encoding="utf-8")
    assert wat(emb, unknown).missing == {"lexicon": ["zzz_not_a_word"]}  # by set, as every metric's


@pytest.mark.parametrize("body, match", [
    ("doctor,1\ndoctor,2\nnurse,3\n", "listed twice"),
    ("doctor,high\n", "must be a finite number"),
])
def test_bad_lexicon_is_one_line_naming_the_file(emb, tmp_path, body, match):
    path = _lexicon(tmp_path, emb, rows=body)
    with pytest.raises(WordListError, match=match) as info:
        valnorm(emb, path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_lexicon_errors(emb, tmp_path):
    with pytest.raises(EmbdebiasError, match="not bundled"):
        valnorm(emb, None)
    path = _lexicon(tmp_path, emb, rows="".join(f"zzunknown{i},{i}\n" for i in range(10)))
    with pytest.raises(MissingWordsError, match="lexicon"):
        wat(emb, path)
    with pytest.raises(WordListError, match="no value column named 'valence'"):
        valnorm(emb, _lexicon(tmp_path, emb, "ok.csv"), value_column="valence")


def test_reliability_needs_three_embeddings(emb):
    with pytest.raises(EmbdebiasError, match="at least 3 embeddings"):
        reliability({"a": emb, "b": emb})
    # near copies: every measure is reliable; heavy noise lowers the ICC
    close = reliability({f"s{i}": _noisy(emb, 0.01, i, f"s{i}") for i in range(3)}, n_boot=100)
    far = reliability({f"s{i}": _noisy(emb, 1.0, i, f"s{i}") for i in range(3)}, n_boot=100)
    for m, v in close["measures"].items():
        assert v["icc2"] > 0.95 and v["ci_low"] <= v["icc2"] <= v["ci_high"]
        assert far["measures"][m]["icc2"] < v["icc2"]


def test_evaluate_trust_section_and_json_round_trip(emb, tmp_path):
    from embdebias.evaluate import evaluate
    from embdebias.report import Report

    path = _lexicon(tmp_path, emb)
    columns = {"orig": emb, "noisy": _noisy(emb, 0.05, 1, "noisy"), "noisier": _noisy(emb, 0.1, 2, "noisier")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the synthetic lists miss words (UnscoredWarning and friends)
        report = evaluate(columns, tests=["weat", "direct_bias", "ect", "wat", "valnorm"], bootstrap=100,
                          options={"wat": {"lexicon": str(path)}, "valnorm": {"lexicon": str(path)}}, retest=True)
    bands = report.trust["sensitivity"]
    assert {b["metric"] for b in bands} >= {"weat", "direct_bias", "ect"}
    assert all(b["loo_low"] <= b["value"] + 1e-12 and b["value"] - 1e-12 <= b["loo_high"] for b in bands)
    assert report.trust["agreement"]["families"][:2] == ["weat", "direct_bias"]
    assert report.trust["consistency"]["projection"]["alpha"] > 0.7
    assert report.trust["consistency"]["residual"]["alpha"] > 0.7
    assert "residual" in report.trust["word_agreement"]["measures"]
    assert set(report.trust["reliability"]["measures"]) == {"projection", "ripa", "association", "residual",
                                                           "sc_weat"}
    assert report.trust["reliability"]["embeddings"] == ["orig", "noisy", "noisier"]
    text = report.to_markdown()
    section = text[text.index("### How far to trust these numbers"):]
    for needle in ("**Seed words.**", "**Base pairs.**", "**Training seeds.**", "**Agreement between metrics.**",
                   "**Validity against human norms.**", "leave-one-out range", "Kendall's tau",
                   "(residual direction, ", "association, residual direction, sc_weat correlate",
                   "agreement_figure(report)"):
        assert needle in section
    again = Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again.trust == report.trust
    assert "### How far to trust these numbers" in again.to_markdown()


def test_trust_off_leaves_no_section(emb):
    from embdebias.evaluate import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = evaluate(emb, tests=["weat"], bootstrap=50, trust=False)
    assert report.trust == {} and "How far to trust" not in report.to_markdown()


def test_cli_reliability_and_bad_input(emb, tmp_path):
    from synthetic import write_word2vec_text

    paths = []
    for i in range(3):
        p = tmp_path / f"e{i}.txt"
        write_word2vec_text(_noisy(emb, 0.01, i, f"e{i}"), p)
        paths.append(str(p))
    run = subprocess.run([sys.executable, "-m", "embdebias", "reliability", *paths, "--json"], capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["measures"]["projection"]["icc2"] > 0.9
    two = subprocess.run([sys.executable, "-m", "embdebias", "reliability", *paths[:2]], capture_output=True,
                         text=True)
    assert two.returncode == 2 and "at least 3 embeddings" in two.stderr and len(two.stderr.strip().splitlines()) == 1


def test_cli_score_with_a_lexicon_and_bad_lexicon(emb, tmp_path):
    from synthetic import write_word2vec_text

    vectors = tmp_path / "e.txt"
    write_word2vec_text(emb, vectors)
    lexicon = _lexicon(tmp_path, emb)
    run = subprocess.run([sys.executable, "-m", "embdebias", "score", str(vectors), "--tests", "wat", "--lexicon",
                          f"wat={lexicon}", "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    rows = {(r["metric"], r["statistic"]): r for r in json.loads(run.stdout)["rows"]}
    assert rows[("wat", "r")]["values"]["e.txt"] > 0.9
    bad = _lexicon(tmp_path, emb, "bad.csv", rows="doctor,1\ndoctor,2\n")
    for arg, needle in ((f"wat={bad}", "listed twice"), ("weat=x.csv", "METRIC=FILE")):
        run = subprocess.run([sys.executable, "-m", "embdebias", "score", str(vectors), "--tests", "wat",
                              "--lexicon", arg], capture_output=True, text=True)
        assert run.returncode == 2 and needle in run.stderr and len(run.stderr.strip().splitlines()) == 1


def test_train_seeds_on_a_corpus_gensim_ships(tmp_path):
    """``embdebias train --seeds`` writes one embedding per seed (gensim's common_texts), then
    ``embdebias reliability`` reads them; the paths carry the seed before the extension."""
    from gensim.test.utils import common_texts

    from embdebias.cli.train import seed_path

    corpus = tmp_path / "common.txt"
    corpus.write_text("\n".join(" ".join(t) for t in common_texts * 20) + "\n")
    out = tmp_path / "vec.txt"
    run = subprocess.run([sys.executable, "-m", "embdebias", "train", str(corpus), "--out", str(out), "--seeds",
                          "1,2,3", "--workers", "1", "--dim", "8", "--min-count", "1", "--epochs", "2", "-q"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    paths = [seed_path(str(out), s) for s in (1, 2, 3)]
    assert [p.rsplit("/", 1)[1] for p in paths] == ["vec-seed1.txt", "vec-seed2.txt", "vec-seed3.txt"]
    from embdebias import io

    first, second = io.load(paths[0]), io.load(paths[1])
    assert first.words == second.words and not np.allclose(first.vectors, second.vectors)
    # the toy corpus has no gender words: the reliability says so in one line (exit 2)
    rel = subprocess.run([sys.executable, "-m", "embdebias", "reliability", *paths], capture_output=True, text=True)
    assert rel.returncode == 2 and "base pair(s) are in every embedding" in rel.stderr
    bad = subprocess.run([sys.executable, "-m", "embdebias", "train", str(corpus), "--out", str(out), "--seeds", "1"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "two or more distinct seeds" in bad.stderr


def test_run_options_take_lexicons_into_the_evaluation(tmp_path):
    from embdebias.evaluate import DEFAULT_SUITE
    from embdebias.pipeline.options import RunOptions, evaluate_kwargs, reproduce_command

    o = RunOptions(lexicons=["ValNorm=v.csv", "wat=w.csv"])
    assert o.lexicons == ("valnorm=v.csv", "wat=w.csv")
    kwargs = evaluate_kwargs(o)
    assert kwargs["suite"] == (*DEFAULT_SUITE, "valnorm", "wat")
    assert kwargs["options"]["valnorm"] == {"lexicon": "v.csv"} and kwargs["options"]["wat"] == {"lexicon": "w.csv"}
    assert o.parameters()["evaluate"]["lexicons"] == ["valnorm=v.csv", "wat=w.csv"]
    command = reproduce_command("glove-6b-50d", o, {})
    assert command[command.index("--lexicon") + 1] == "valnorm=v.csv" and command.count("--lexicon") == 2
    # chosen tests keep their order, and the lexicon's metric joins them once
    only = evaluate_kwargs(RunOptions(tests="weat,wat", lexicons="wat=w.csv"))
    assert only["suite"] == ("weat", "wat")
    assert "--lexicon" not in reproduce_command("glove-6b-50d", RunOptions(), {})
    # the evaluation's key holds each lexicon's content: an edited lexicon is scored again
    from embdebias.pipeline.run import _test_file_hashes

    lex = tmp_path / "lex.csv"
    lex.write_text("word,rating\nnurse,1\n", encoding="utf-8")
    before = _test_file_hashes(RunOptions(lexicons=f"wat={lex}"))
    lex.write_text("word,rating\nnurse,2\n", encoding="utf-8")
    assert len(before) == 1 and _test_file_hashes(RunOptions(lexicons=f"wat={lex}")) != before
    for bad, needle in (("weat=x.csv", "METRIC=FILE"), ("valnorm", "METRIC=FILE"),
                        (["wat=a.csv", "WAT=b.csv"], "more than once")):
        with pytest.raises(EmbdebiasError, match=needle):
            RunOptions(lexicons=bad)


def test_validity_sentence_says_kept_and_removed_per_method(emb, tmp_path):
    from embdebias.evaluate import evaluate

    path = _lexicon(tmp_path, emb)
    columns = {"original": emb, "hard": _noisy(emb, 0.3, 4, "hard")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the synthetic lists miss words
        report = evaluate(columns, tests=["wat", "valnorm"], bootstrap=20,
                          options={"wat": {"lexicon": str(path)}, "valnorm": {"lexicon": str(path)}})
    assert report.missing == {}  # every lexicon word is in the vocabulary
    v = {e: report.value("valnorm", "valnorm", "r", e) for e in columns}
    w = {e: report.value("wat", "wat", "r", e) for e in columns}
    assert w["hard"] < w["original"]  # noise weakens the association the lexicon was built from
    text = report.to_markdown()
    assert (f"hard keeps ValNorm r {v['hard']:.2f} of {v['original']:.2f} and brings WAT r from "
            f"{w['original']:.2f} to {w['hard']:.2f}") in text


def test_run_with_lexicons_reports_validity_per_method(emb, tmp_path, capsys):
    from embdebias.cli import main
    from synthetic import write_word2vec_text

    vectors = tmp_path / "small.txt"
    write_word2vec_text(emb, vectors)
    lexicon = _lexicon(tmp_path, emb)
    out = tmp_path / "out"
    # a missing lexicon stops the run before anything is written: one line, exit 2
    assert main(["run", str(vectors), "--out-dir", str(out), "--lexicon", f"wat={tmp_path / 'none.csv'}"]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(err) == 1 and "none.csv" in err[0] and not (out / "report.md").exists()
    assert main(["run", str(vectors), "--out-dir", str(out), "--tests", "direct_bias", "--lexicon", f"valnorm={lexicon}",
                 "--lexicon", f"wat={lexicon}"]) == 0
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["parameters"]["evaluate"]["lexicons"] == [f"valnorm={lexicon}", f"wat={lexicon}"]
    md = (out / "report.md").read_text(encoding="utf-8")
    section = md[md.index("**Validity against human norms.**"):]
    for method in ("hard", "soft"):
        assert f"{method} keeps ValNorm r " in section and "and brings WAT r from " in section
    assert f"--lexicon valnorm={lexicon} --lexicon wat={lexicon}" in md  # the reproduce command repeats them


def _agreement_dict():
    return {"families": ["weat", "direct_bias", "ect"], "columns": ["a", "b", "c", "d"],
            "tau": [[1.0, 0.33, -1.0], [0.33, 1.0, None], [-1.0, None, 1.0]],
            "ci_low": [[1.0, -0.2, -1.0], [-0.2, 1.0, None], [-1.0, None, 1.0]],
            "ci_high": [[1.0, 0.9, -0.33], [0.9, 1.0, None], [-0.33, None, 1.0]], "n_boot": 200, "level": 0.95,
            "unit": "columns"}


def test_agreement_figure_annotates_every_cell_with_its_interval():
    from embdebias.report._notebook import ReportFigure
    from embdebias.report.figures import agreement_caption, agreement_figure

    fig = agreement_figure(_agreement_dict())
    assert isinstance(fig, ReportFigure)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts[:3] == ["1.00", "0.33\n[-0.20, 0.90]", "-1.00\n[-1.00, -0.33]"]
    assert texts[5] == "n/a" and texts.count("1.00") == 3  # the diagonal has no interval
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["weat", "direct_bias", "ect"]
    assert fig.axes[0].images[0].get_clim() == (-1, 1)
    caption = agreement_caption(_agreement_dict())
    assert "4 columns" in caption and "fairer first" in caption and "200 resamples" in caption
    assert fig._repr_png_()[:4] == b"\x89PNG"
    with pytest.raises(EmbdebiasError, match="three or more columns"):
        agreement_figure({"families": ["weat"], "columns": ["a", "b"]})


def test_residual_direction_is_the_residual_tests_bias_one_pair_at_a_time(emb):
    from embdebias.metrics.residual import male_direction
    from embdebias.metrics.trust import internal_consistency

    pairs = wordlists.definitional_pairs()
    scores = pair_scores(emb, wordlists.professions()[:40], pairs)
    rows = [emb.words.index(w) for w in scores["words"]]
    w = emb.vectors[rows].astype(np.float64)
    w /= np.linalg.norm(w, axis=1, keepdims=True)
    she_he = scores["pairs"].index(("she", "he"))
    direction, _ = male_direction(emb, ("he", "she"))  # the residual tests' he - she: the pair's opposite
    np.testing.assert_allclose(scores["residual"][:, she_he], -(w @ direction), atol=1e-6)
    # it is not the projection: the pair's words have different norms in the synthetic embedding
    assert np.abs(scores["residual"] - scores["projection"]).max() > 1e-3
    alpha = internal_consistency(scores)["residual"]["alpha"]
    assert alpha == pytest.approx(cronbach_alpha(scores["residual"]), abs=0) and 0.7 < alpha < 1
    flipped = {**scores, "residual": -scores["residual"]}  # the pairs' orientation does not change alpha
    assert internal_consistency(flipped)["residual"]["alpha"] == pytest.approx(alpha, abs=1e-12)
