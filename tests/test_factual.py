"""Factual association: the facts tables (bundled and a user's), the correlation against hand
computation, and the registered metric."""

import numpy as np
import pytest
from synthetic import synthetic_embedding

from embdebias.data import load_facts, read_facts
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, WordListError
from embdebias.evaluate import evaluate
from embdebias.metrics import factual_association, wefat


def test_the_bundled_table_is_rudinger_et_al_bls_shares():
    table = load_facts()
    assert len(table.values) == 60 and table.column == "bls_pct_female"
    # three values checked against the published file (rudinger/winogender-schemas data/occupations-stats.tsv)
    assert table.values["nurse"] == 89.58 and table.values["carpenter"] == 2.07 and table.values["secretary"] == 94.6
    assert table.extra["secretary"]["bls_year"] == "2016" and table.extra["nurse"]["bls_year"] == "2015"
    assert all(0 <= v <= 100 for v in table.values.values())
    assert "Bureau of Labor Statistics" in table.source and "Rudinger" in table.source
    other = load_facts(value_column="bergsma_pct_female")
    assert other.values["nurse"] == 88.31


def test_a_users_csv_and_its_errors_name_file_and_line(tmp_path):
    good = tmp_path / "facts.csv"
    good.write_text("# share of women\nword,share,year\nnurse,90.0,2020\n\nengineer,12.5,2020\n", encoding="utf-8")
    table = read_facts(good)
    assert table.values == {"nurse": 90.0, "engineer": 12.5} and table.column == "share"
    assert read_facts(good, value_column="year").values["nurse"] == 2020.0
    cases = {
        "word,share\nnurse,ninety\n": r"facts.csv:2: column 'share' of 'nurse' must be a finite number",
        "word,share\nnurse,90\nnurse,91\n": r"facts.csv:3: 'nurse' is listed twice",
        "word,share\nnurse,90,1\n": r"facts.csv:2: 3 column\(s\), the header has 2",
        "word\nnurse\n": r"facts.csv:1: the header has 1 column",
        "word,share\nnurse,nan\n": r"facts.csv:2: .* finite number",
        "word,share\n": r"facts.csv: no rows",
        "": r"facts.csv: empty",
    }
    for text, message in cases.items():
        good.write_text(text, encoding="utf-8")
        with pytest.raises(WordListError, match=message):
            read_facts(good)
    good.write_text("word,share\nnurse,90\n", encoding="utf-8")
    with pytest.raises(WordListError, match=r"facts.csv:1: no value column named 'pct'"):
        read_facts(good, value_column="pct")


def _toy():
    """Occupations at angles between a female (e1) and a male (e2) word."""
    angles = np.linspace(0.1, 1.4, 6)
    words = [f"job{i}" for i in range(6)] + ["she", "her", "he", "him"]
    vecs = [[np.cos(t), np.sin(t), 0.1] for t in angles] + [[1, 0, 0], [1, 0.1, 0], [0, 1, 0], [0.1, 1, 0]]
    return Embedding(words, np.array(vecs)), words[:6], [["she", "her"], ["he", "him"]]


def test_correlation_against_hand_computation():
    emb, jobs, attrs = _toy()
    facts = {w: v for w, v in zip(jobs, [95.0, 80.0, 62.0, 40.0, 30.0, 3.0])}
    r = factual_association(emb, attributes=attrs, facts=facts)
    scores = wefat(emb, jobs, attrs).scores
    assert r.scores == pytest.approx(scores)
    assert r.r == pytest.approx(np.corrcoef(scores, list(facts.values()))[0, 1], rel=1e-12)
    assert r.r > 0.8 and r.spearman == pytest.approx(1.0) and r.ci[0] < r.r < r.ci[1]
    # the facts reversed: r changes sign
    flipped = factual_association(emb, attributes=attrs, facts={w: 100 - v for w, v in facts.items()})
    assert flipped.r == pytest.approx(-r.r)
    # targets pick a subset, in the order given
    some = factual_association(emb, jobs[:4], attrs, facts=facts)
    assert some.words == jobs[:4] and some.n_scored == 4


def test_projection_method_uses_the_direction():
    emb, jobs, attrs = _toy()
    facts = {w: v for w, v in zip(jobs, [95.0, 80.0, 62.0, 40.0, 30.0, 3.0])}
    g = np.array([1.0, -1.0, 0.0]) / np.sqrt(2)
    r = factual_association(emb, facts=facts, method="projection", subspace=g)
    vecs = emb[jobs] / np.linalg.norm(emb[jobs], axis=1, keepdims=True)
    assert r.scores == pytest.approx((vecs @ g).tolist(), rel=1e-6)
    assert r.r == pytest.approx(np.corrcoef(vecs @ g, list(facts.values()))[0, 1], rel=1e-6)


def test_bad_input():
    emb, jobs, attrs = _toy()
    facts = dict(zip(jobs, range(6)))
    with pytest.raises(EmbdebiasError, match="no fact"):
        factual_association(emb, ["job0", "plumber"], attrs, facts=facts)
    with pytest.raises(EmbdebiasError, match="method"):
        factual_association(emb, attributes=attrs, facts=facts, method="rnd")
    with pytest.raises(EmbdebiasError, match="numbers"):
        factual_association(emb, attributes=attrs, facts={"job0": "many"})


def test_registered_metric_on_the_bundled_facts():
    emb = synthetic_embedding()
    report = evaluate({"e": emb}, ["factual"], bootstrap=200)
    value = report.value("factual", "occupations", "r", "e")
    direct = factual_association(emb)
    assert value == pytest.approx(direct.r)
    lo, hi = report.interval("factual", "occupations", "r", "e")
    assert lo <= value <= hi
    assert "Bureau of Labor Statistics" in report.to_markdown()
