"""BAT on a constructed SemBias-format file; projections and direct bias by hand."""

import json
import math

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import MissingWordsError, WordListError
from embdebias.metrics import bat, direct_bias, projections, read_sembias
from embdebias.subspace import BiasSubspace
from embdebias.wordlists import sembias_path


def _bat_embedding():
    """he - she = 2 e1.  Pair differences are built with known cosines with e1."""
    e = np.eye(6)
    vec = {
        "he": e[0] + e[5], "she": -e[0] + e[5],
        # definition pair: difference exactly along e1 (cos 1 after normalization)
        "king": e[0] + e[1], "queen": -e[0] + e[1],
        # stereotype pair, weakly gendered: difference mostly along e2
        "doctor": 0.3 * e[0] + e[2], "nurse": -0.3 * e[0] + e[2] * 0.9,
        # a strongly gendered stereotype pair (beats a weaker definition pair)
        "boss": 2 * e[0] + e[3], "assistant": -2 * e[0] + e[3],
        "lord": 0.2 * e[0] + e[4], "lady": -0.2 * e[0] + e[4] * 1.1,
        # none pairs: differences orthogonal to e1
        "dog": e[1] + e[2], "cat": e[1] - e[2], "cup": e[3] + e[4], "lid": e[3] - e[4],
    }
    return Embedding(list(vec), np.array(list(vec.values())))


SEMBIAS = (
    "# a comment line\n"
    "king:queen\tdog:cat\tcup:lid\tdoctor:nurse\n"      # definition wins
    "\n"
    "lord:lady\tdog:cat\tcup:lid\tboss:assistant\n"     # stereotype wins
    "king:queen\tdog:cat\tcup:lid\tboss:assistant\n"    # king:queen, |cos| 1 vs boss (cos < 1)
    "lord:lady\tdog:cat\tcup:lid\tdoctor:nurse\n"       # which is larger? computed in test
    "king:queen\tdog:cat\tcup:zzz\tdoctor:nurse\n"      # skipped: zzz missing
)


def _cos(emb, a, b, g):
    ua, ub = emb[a] / np.linalg.norm(emb[a]), emb[b] / np.linalg.norm(emb[b])
    d = ua - ub
    return float(d @ g / np.linalg.norm(d) / np.linalg.norm(g))


def test_bat_hand_computed(tmp_path):
    path = tmp_path / "sb.txt"
    path.write_text(SEMBIAS, encoding="utf-8")
    emb = _bat_embedding()
    g = emb["he"] / np.linalg.norm(emb["he"]) - emb["she"] / np.linalg.norm(emb["she"])
    # expected prediction per line, by hand
    lines = [line.split("\t") for line in SEMBIAS.splitlines() if line and not line.startswith("#")]
    expected = []
    for cols in lines[:4]:
        cos = [_cos(emb, *c.split(":"), g) for c in cols]
        expected.append(int(np.argmax(cos)))
    assert expected[0] == 0 and expected[1] == 3  # the file tests both outcomes
    r = bat(emb, path, n_sub=2)
    assert r.predictions == expected + [-1]
    assert r.n_lines == 5 and r.n_scored == 4 and r.n_skipped == 1
    assert r.skipped_lines == [7] and r.missing == {"sembias": ["zzz"]}
    labels = ["definition", "none", "none", "stereotype"]
    got = [labels[p] for p in expected]
    assert r.definition == pytest.approx(got.count("definition") / 4)
    assert r.stereotype == pytest.approx(got.count("stereotype") / 4)
    assert r.none == pytest.approx(0.0)
    # Sub = the last 2 instances: line 6 (scored) and line 7 (skipped)
    assert r.sub_n_lines == 2 and r.sub_n_scored == 1 and r.sub_n_skipped == 1
    assert r.sub_definition == (1.0 if got[3] == "definition" else 0.0)
    json.dumps(r.to_dict(), allow_nan=False)


def test_bat_direction_options_and_missing(tmp_path):
    path = tmp_path / "sb.txt"
    path.write_text(SEMBIAS, encoding="utf-8")
    emb = _bat_embedding()
    # one sign convention: a direction is female-positive. she - he = -2 e1, so -e1 as a
    # vector, and a subspace whose direction_ is -e1, give the default's answers ...
    r_default = bat(emb, path)
    assert r_default.direction == "she - he"
    r_vec = bat(emb, path, direction=-np.eye(6)[0])
    assert r_vec.predictions == r_default.predictions
    sub = BiasSubspace()
    sub.components_ = -np.eye(6)[:1]
    assert bat(emb, path, direction=sub).predictions == r_default.predictions
    assert bat(emb, path, direction=sub.direction_).predictions == r_default.predictions
    # ... and the opposite direction gives other answers (the sign is not ignored)
    assert bat(emb, path, direction=np.eye(6)[0]).predictions != r_default.predictions
    # more than max_missing of the instances skipped -> error naming the word
    with pytest.raises(MissingWordsError) as err:
        bat(emb, path, max_missing=0.1)
    assert "zzz" in str(err.value)


def test_read_sembias_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("# c\nking:queen\tdog:cat\tcup:lid\n", encoding="utf-8")
    with pytest.raises(WordListError, match="bad.txt:2"):
        read_sembias(bad)
    bad.write_text("king:queen\tdog-cat\tcup:lid\ta:b\n", encoding="utf-8")
    with pytest.raises(WordListError, match="dog-cat"):
        read_sembias(bad)


def test_bundled_sembias_parses():
    inst = read_sembias(sembias_path())
    assert len(inst) >= 40 and all(len(i.pairs) == 4 for i in inst)


# -- projections and direct bias -------------------------------------------------------
def test_projections_and_direct_bias_by_hand():
    words = ["nurse", "doctor", "table", "engineer"]
    vecs = np.array([[0.6, 0.8, 0], [-0.3, 0, 0.4], [0, 1, 0], [-1.0, 1.0, 0]])
    emb = Embedding(words, vecs)
    g = np.array([2.0, 0, 0])  # normalized to e1 (female positive by convention)
    p = projections(emb, words, subspace=g)
    expected = [0.6, -0.6, 0.0, -1 / math.sqrt(2)]
    assert p.projections == pytest.approx(expected, abs=1e-6)
    r1 = direct_bias(emb, words, subspace=g)
    assert r1.direct_bias == pytest.approx(np.mean(np.abs(expected)), abs=1e-6)
    r2 = direct_bias(emb, words, subspace=g, c=2)
    assert r2.direct_bias == pytest.approx(np.mean(np.square(expected)), abs=1e-6)
    assert r1.n_words == 4 and r1.missing == {"words": []}


def test_projections_with_a_fitted_subspace_are_female_positive():
    rng = np.random.default_rng(0)
    pairs = [("she", "he"), ("her", "his"), ("woman", "man"), ("girl", "boy")]
    words, vecs = [], []
    for f, m in pairs:
        base = rng.normal(0, 0.2, 5)
        words += [f, m]
        vecs += [base + np.array([1, 0, 0, 0, 0]), base - np.array([1, 0, 0, 0, 0])]
    words += ["nurse", "plumber"]
    vecs += [np.array([0.5, 1, 0, 0, 0]), np.array([-0.5, 0, 1, 0, 0])]
    emb = Embedding(words, np.array(vecs))
    sub = BiasSubspace(pairs).fit(emb)
    p = projections(emb, ["nurse", "plumber"], subspace=sub)
    assert p.projections[0] > 0 > p.projections[1]
    r = direct_bias(emb, ["nurse", "plumber", "absent"], subspace=sub, max_missing=0.5)
    assert r.missing == {"words": ["absent"]}
    assert r.direct_bias == pytest.approx(np.mean(np.abs(p.projections)))
