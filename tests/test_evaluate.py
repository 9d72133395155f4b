"""evaluate() and Report on a small random embedding holding every word the suite uses."""

import json

import numpy as np
import pytest
from gensim.test.utils import datapath

from embdebias import wordlists
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.evaluate import DEFAULT_SUITE, Report, evaluate
from embdebias.metrics import bat, direct_bias, weat
from embdebias.metrics.bat import read_sembias
from embdebias.metrics.quality import read_analogies, read_word_pairs
from embdebias.metrics.rnsb import sentiment_lexicon


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


FAST = dict(n_permutations=2000, rnsb_runs=2)


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
        assert ("weat", t.id, "effect size") in report.values
        assert ("ect", t.id, "Spearman rho") in report.values
    for key in report.rows:
        assert set(report.values[key]) == {"original", "debiased"}
    # a cell equals the metric called directly with the same settings
    t = gender[0]
    direct = weat(a, t, n_permutations=2000, random_state=0)
    assert report.value("weat", t.id, "effect size", "original") == pytest.approx(direct.effect_size)
    assert report.value("weat", t.id, "p-value", "original") == pytest.approx(direct.p_value)
    assert report.value("bat", "all", "Definition", "original") == pytest.approx(bat(a).definition)
    assert report.value("direct_bias", "professions", "DirectBias_1", "original") == \
        pytest.approx(direct_bias(a).direct_bias)
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
    assert back.value("rnsb", "identity terms", "RNSB (KL)", "debiased") == \
        report.value("rnsb", "identity terms", "RNSB (KL)", "debiased")
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
        evaluate(smaller, suite=["weat"], **FAST)
    assert any(w in str(err.value) for w in male)
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
    g = np.zeros(a.dim); g[0] = 1
    r2 = evaluate(a, suite="direct_bias", subspace=g)
    assert r2.value("direct_bias", "professions", "DirectBias_1") == \
        pytest.approx(direct_bias(a, subspace=g).direct_bias)
    with pytest.raises(EmbdebiasError, match="unknown metric"):
        evaluate(a, suite=["weat", "nope"])
    with pytest.raises(EmbdebiasError, match="unknown WEAT group"):
        evaluate(a, suite=["weat"], weat_groups=("nope",))
    with pytest.raises(EmbdebiasError):
        Report.from_dict({"rows": []})


def test_caliskan_group_and_progress(embs):
    a, _ = embs
    seen = []
    r = evaluate(a, suite=["weat"], weat_groups=("caliskan",), n_permutations=500,
                 progress=lambda name, metric: seen.append((name, metric)))
    assert seen == [("orig", "weat")]
    assert ("weat", "weat1", "effect size") in r.values
