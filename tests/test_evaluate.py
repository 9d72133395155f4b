"""evaluate() and Report on a small random embedding holding every word the suite uses."""

import json

import numpy as np
import pytest
from gensim.test.utils import datapath

from embdebias import wordlists
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.evaluate import DEFAULT_SUITE, Report, UnscoredWarning, evaluate, suite_options
from embdebias.metrics import bat, direct_bias, weat
from embdebias.metrics.bat import read_sembias
from embdebias.metrics.quality import read_analogies, read_word_pairs
from embdebias.metrics.rnsb import sentiment_lexicon
from embdebias.subspace import BiasSubspace


def _suite_words():
    words = []
    for t in wordlists.weat_tests():
        for ws in (t.X, t.Y, t.A, t.B):
            words += [w.lower() for w in ws.words]
    words += wordlists.professions()
    for f, m in wordlists.definitional_pairs():
        words += [f, m]
    for inst in read_sembias(wordlists.sembias_path()):
        words += [w for pair in inst.pairs for w in pair]
    pos, neg = sentiment_lexicon()
    words += list(pos[:300]) + list(neg[:300])
    for name in ("wordsim353.tsv", "simlex999.txt"):
        for _, a, b, _ in read_word_pairs(datapath(name)):
            words += [a.lower(), b.lower()]
    for _, qs in read_analogies(datapath("questions-words.txt")):
        for q in qs:
            words += [w.lower() for w in q]
    return list(dict.fromkeys(words))


@pytest.fixture(scope="module")
def embs():
    words = _suite_words()
    rng = np.random.default_rng(0)
    a = Embedding(words, rng.standard_normal((len(words), 12)), name="orig")
    b = Embedding(words, rng.standard_normal((len(words), 12)), name="other")
    return a, b


FAST = dict(options={"weat": {"n_permutations": 2000}, "rnsb": {"runs": 2}})


@pytest.fixture(scope="module")
def report(embs):
    a, b = embs
    return evaluate({"original": a, "debiased": b}, **FAST)


def test_report_table_shape_and_values(embs, report):
    a, _ = embs
    assert report.embeddings == ["original", "debiased"]
    metrics = list(dict.fromkeys(m for m, _, _ in report.rows))
    assert metrics == list(DEFAULT_SUITE)
    gender = wordlists.weat_tests("gender")
    for t in gender:
        assert ("weat", t.id, "effect_size") in report.values
        assert ("ect", t.id, "spearman") in report.values
    for key in report.rows:
        assert set(report.values[key]) == {"original", "debiased"}
    # a cell equals the metric called directly with the same settings
    t = gender[0]
    direct = weat(a, t, n_permutations=2000, random_state=0)
    assert report.value("weat", t.id, "effect_size", "original") == pytest.approx(direct.effect_size)
    assert report.value("weat", t.id, "p_value", "original") == pytest.approx(direct.p_value)
    assert report.value("bat", "all", "definition", "original") == pytest.approx(bat(a).definition)
    # direct bias: on the first column's direction, and on each column's own
    assert report.value("direct_bias", "professions", "direct_bias_original", "original") == \
        pytest.approx(direct_bias(a).direct_bias)
    assert report.value("direct_bias", "professions", "direct_bias_own", "original") == \
        pytest.approx(direct_bias(a).direct_bias)
    b_own = direct_bias(embs[1]).direct_bias
    b_original = direct_bias(embs[1], subspace=BiasSubspace().fit(a)).direct_bias
    assert report.value("direct_bias", "professions", "direct_bias_own", "debiased") == pytest.approx(b_own)
    assert report.value("direct_bias", "professions", "direct_bias_original", "debiased") == \
        pytest.approx(b_original)
    assert b_own != pytest.approx(b_original)
    # every row says how many items it scored
    assert report.value("weat", t.id, "n_scored", "original") == direct.n_scored
    assert report.value("bat", "all", "n_scored", "original") == 440
    # details keep the out-of-vocabulary information per set
    assert report.details["original"][f"weat/{t.id}"]["missing"] == {"X": [], "Y": [], "A": [], "B": []}


def test_same_seed_same_report_and_json_round_trip(embs, report, tmp_path):
    a, b = embs
    again = evaluate({"original": a, "debiased": b}, **FAST)
    assert again.to_dict() == report.to_dict()
    path = tmp_path / "out" / "report.json"
    report.to_json(path)
    text = path.read_text(encoding="utf-8")
    json.loads(text)  # strict JSON (no NaN)
    back = Report.from_json(path)
    assert back.to_dict() == report.to_dict()
    assert back.rows == report.rows
    assert back.value("rnsb", "identity terms", "rnsb", "debiased") == \
        report.value("rnsb", "identity terms", "rnsb", "debiased")
    assert not list(tmp_path.glob("out/.*tmp"))  # the atomic writer cleaned up


def test_markdown(report):
    md = report.to_markdown()
    for title in ("### WEAT", "### RNSB", "### ECT", "### BAT", "### Direct bias",
                  "### Word similarity", "### Analogy"):
        assert title in md
    assert "| test | statistic | original | debiased |" in md
    assert "gender_career_family" in md


def test_missing_words_are_loud(embs):
    a, _ = embs
    male = set(wordlists.weat_tests("gender")[0].X.words)
    keep = [w for w in a.words if w not in male]
    smaller = a.subset(keep)
    with pytest.raises(MissingWordsError) as err:
        evaluate(smaller, suite=["weat"], strict=True, **FAST)
    assert any(w in str(err.value) for w in male)
    # tolerant by default: the unit is empty, its reason is in the report, the rest is scored
    with pytest.warns(UnscoredWarning, match="not scored"):
        r = evaluate(smaller, suite=["weat"], **FAST)
    t0 = wordlists.weat_tests("gender")[0].id
    assert r.value("weat", t0, "effect_size") is None
    assert [f["unit"] for f in r.failures] == [t.id for t in wordlists.weat_tests("gender")]
    assert "### Not scored" in r.to_markdown() and "not in the vocabulary" in r.to_markdown()
    # a small loss is reported, not raised
    one = sorted(male)[0]
    r = evaluate(a.subset([w for w in a.words if w != one]), suite=["weat"], **FAST)
    assert r.missing[r.embeddings[0]][f"weat/{wordlists.weat_tests('gender')[0].id}"] == {"X": [one]}
    assert one in r.to_markdown()


def test_suite_selection_names_and_errors(embs):
    a, b = embs
    r = evaluate([a, a], suite=["bat", "direct_bias"])
    assert r.embeddings == ["orig", "orig-2"]
    assert {m for m, _, _ in r.rows} == {"bat", "direct_bias"}
    g = np.zeros(a.dim)
    g[0] = 1
    r2 = evaluate(a, suite="direct_bias", subspace=g)
    assert r2.value("direct_bias", "professions", "direct_bias_original") == \
        pytest.approx(direct_bias(a, subspace=g).direct_bias)
    with pytest.raises(EmbdebiasError, match="unknown metric"):
        evaluate(a, suite=["weat", "nope"])
    with pytest.raises(EmbdebiasError, match="unknown WEAT group"):
        evaluate(a, suite=["weat"], options={"weat": {"groups": ("nope",)}})
    # a metric's options are checked by the metric, naming it and the option
    with pytest.raises(EmbdebiasError, match=r"metric 'weat': unknown option\(s\) 'permutations'"):
        evaluate(a, suite=["weat"], options={"weat": {"permutations": 10}})
    with pytest.raises(EmbdebiasError, match=r"metric 'rnsb', option 'runs': expected an integer >= 1"):
        evaluate(a, suite=["rnsb"], options={"rnsb": {"runs": 0}})
    with pytest.raises(EmbdebiasError, match=r"metric 'bat': unknown option\(s\) 'sem_bias'"):
        evaluate(a, suite=["weat"], options={"bat": {"sem_bias": "x"}})  # checked even when not run
    with pytest.raises(EmbdebiasError, match=r"'rnsb_runs' is an option of the metric 'rnsb': pass "
                                              r"options=\{'rnsb': \{'runs': \.\.\.\}\}"):
        evaluate(a, suite=["rnsb"], rnsb_runs=2)
    with pytest.raises(EmbdebiasError, match="options for unknown metric"):
        evaluate(a, suite=["bat"], options={"waet": {}})
    with pytest.raises(EmbdebiasError):
        Report.from_dict({"rows": []})


def test_caliskan_group_and_progress(embs):
    a, _ = embs
    seen = []
    r = evaluate(a, suite=["weat"], options={"weat": {"groups": ("caliskan",), "n_permutations": 500}},
                 progress=lambda name, metric: seen.append((name, metric)))
    assert seen == [("orig", "weat")]
    assert ("weat", "weat1", "effect_size") in r.values


def test_value_raises_key_error_and_report_explains_itself(report):
    with pytest.raises(KeyError):
        report.value("weat", "nope", "effect_size", "original")
    with pytest.raises(KeyError):
        report.value("weat", "gender_career_family", "effect_size", "nobody")
    with pytest.raises(KeyError):
        report.value("weat", "gender_career_family", "effect_size")  # two columns: name one
    md = report.to_markdown()
    assert md.count("How to read:") == len(DEFAULT_SUITE) and md.count("Data:") == len(DEFAULT_SUITE)
    assert "gender_career_family: " in md  # WEAT titles
    assert "| DirectBias (original direction) |" in md and "| DirectBias (own direction) |" in md
    assert "| words scored |" in md and "p_value_se" not in md
    assert "30,000 most frequent words" in report.data["analogy"]


def test_p_values_show_their_standard_error_or_floor():
    r = Report(["e"])
    r.add("e", "weat", "t", "p_value", 0.25)
    r.add("e", "weat", "t", "p_value_se", 0.004)
    r.add("e", "weat", "t", "n_permutations", 10_000)
    r.add("e", "weat", "u", "p_value", 1 / 10_001)
    r.add("e", "weat", "u", "p_value_se", 1e-4)
    r.add("e", "weat", "u", "n_permutations", 10_000)
    r.add("e", "weat", "x", "p_value", 0.0123)  # exact: no standard error
    md = r.to_markdown()
    assert "| 0.25 ± 0.004 |" in md and "| <= 0.0001 |" in md and "| 0.0123 |" in md


def test_tests_is_the_keyword_and_suite_its_alias(embs):
    a, _ = embs
    one = evaluate({"x": a}, tests=["bat"], bootstrap=0)
    assert one.to_dict() == evaluate({"x": a}, suite=["bat"], bootstrap=0).to_dict()
    with pytest.raises(EmbdebiasError, match="not both"):
        evaluate({"x": a}, tests=["bat"], suite=["bat"])


def test_to_frame_long_format_or_clear_error(report, monkeypatch):
    import builtins
    import sys

    real_import = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas":
            raise ImportError("No module named 'pandas'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "pandas", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_pandas)
    with pytest.raises(ImportError, match=r"pip install 'embdebias\[pandas\]'"):
        report.to_frame()
    monkeypatch.setattr(builtins, "__import__", real_import)
    pd = pytest.importorskip("pandas")
    frame = report.to_frame()
    assert list(frame.columns) == ["embedding", "metric", "test", "statistic", "value", "ci_low", "ci_high",
                                   "change", "change_ci_low", "change_ci_high", "outcome"]
    assert len(frame) == len(report.rows) * len(report.embeddings)
    # the paired change sits on the row of its cell: no pivot needed
    c = next(c for c in report.comparisons if c["embedding"] == "debiased")
    hit = frame[(frame.embedding == "debiased") & (frame.metric == c["metric"]) & (frame.test == c["test"])
                & (frame.statistic == c["statistic"])]
    assert hit.change.item() == pytest.approx(c["change"]) and hit.outcome.item() == c["outcome"]
    assert hit.change_ci_low.item() == pytest.approx(c["ci_low"])
    assert frame[frame.embedding == "original"].outcome.isna().all()
    row = frame[(frame.metric == "bat") & (frame.test == "all") & (frame.statistic == "definition")
                & (frame.embedding == "original")]
    assert row.value.item() == pytest.approx(report.value("bat", "all", "definition", "original"))
    assert isinstance(frame, pd.DataFrame)


def test_names_are_case_insensitive_and_quality_needs_no_definitional_pairs(embs):
    opts = suite_options(["BAT", "Weat6", "GENDER_MATH_ARTS", "Similarity"])
    assert opts["suite"] == ("weat", "bat", "similarity")
    assert [t.id for t in opts["options"]["weat"]["tests"]] == ["weat6", "gender_math_arts"]
    a, _ = embs
    gendered = {w for p in wordlists.definitional_pairs() for w in p} | {"mary", "john"}
    no_pairs = a.subset([w for w in a.words if w not in gendered])
    r = evaluate(no_pairs, suite=["similarity", "analogy"], strict=True)
    assert r.value("similarity", "wordsim353", "spearman") is not None
    with pytest.warns(UnscoredWarning, match="definitional pairs"):
        r = evaluate(no_pairs, suite=["direct_bias"])
    assert r.value("direct_bias", "professions", "direct_bias_original") is None
