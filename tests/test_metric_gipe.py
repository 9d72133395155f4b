"""GIPE (Kumar et al. 2020) as a function and as a registered metric: the authors' definition
transcribed word by word, its bootstrap interval and paired change, and bad input."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias import evaluate
from embdebias.debias import HardDebias
from embdebias.embedding import Embedding
from embdebias.errors import DimensionError, EmbdebiasError, MissingWordsError
from embdebias.evaluate import DEFAULT_SUITE
from embdebias.metrics import METRICS, gipe
from embdebias.metrics.base import EvalContext
from embdebias.metrics.gipe import gipe_statistic, most_biased_words


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=400, dim=12, seed=3)


@pytest.fixture(scope="module")
def hard(emb):
    return HardDebias().fit_transform(emb)


def _unit(x):
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x)


def transcription(original, tested, words, g, n, theta):
    """The authors' gipe.py, one word and one neighbour at a time (dictionaries for the graph)."""
    g = _unit(g)
    tested_unit = {w: _unit(tested[w]) for w in tested.words}
    edges, biased_edges, eta = {}, {}, {}
    for w in words:
        sims = sorted(((float(tested_unit[w] @ v), u) for u, v in tested_unit.items() if u != w), reverse=True)
        a = _unit(original[w])
        hits = 0
        for _, u in sims[:n]:
            b = _unit(original[u])
            a_p, b_p = a - (a @ g) * g, b - (b @ g) * g
            beta = (a @ b - (a_p @ b_p) / (np.linalg.norm(a_p) * np.linalg.norm(b_p))) / (a @ b)
            edges[u] = edges.get(u, 0) + 1
            biased_edges[u] = biased_edges.get(u, 0) + int(beta > theta)
            hits += int(beta > theta)
        eta[w] = hits / n
    weight = {w: 1 + (biased_edges[w] / edges[w] if edges.get(w) else 0.0) for w in words}
    return sum(weight[w] * eta[w] for w in words) / sum(weight.values())


def test_hand_computed_weights():
    # a's nearest word is b, b's is a, c's is a; with g the first axis:
    # beta(a, b) = 1 (their similarity is all gender), beta(b, a) = 1, beta(c, a) < 0.
    words = ["a", "b", "c"]
    vecs = np.array([[0.8, 0.6, 0.0], [0.8, 0.0, 0.6], [0.0, 0.8, 0.3]])
    emb = Embedding(words, vecs)
    r = gipe(emb, emb, words, [1, 0, 0], n=1)
    assert r.eta.tolist() == [1.0, 1.0, 0.0]
    # a is reached by 2 edges (from b and c), 1 biased: 1.5; b by 1 biased edge: 2; c by none: 1
    assert r.weights.tolist() == [1.5, 2.0, 1.0]
    assert r.gipe == pytest.approx((1.5 + 2.0) / 4.5)
    assert r.value == r.gipe and r.n_scored == 3 and r.to_dict()["value"] == pytest.approx(r.gipe)


def test_equals_the_word_by_word_transcription(emb, hard):
    words = most_biased_words(emb, 40)
    g = np.random.default_rng(0).normal(size=emb.dim)
    for tested in (emb, hard):
        r = gipe(emb, tested, words, g, n=15, theta=0.05)
        assert r.gipe == pytest.approx(transcription(emb, tested, words, g, 15, 0.05), abs=1e-12)


def test_default_words_are_the_most_biased_of_the_original(emb):
    words = most_biased_words(emb, 30)
    assert len(words) == 60 == len(set(words))
    he, she = _unit(emb["he"]), _unit(emb["she"])
    bias = {w: _unit(emb[w]) @ _unit(he - she) for w in words}
    assert min(bias[w] for w in words[:30]) > max(bias[w] for w in words[30:])
    assert gipe(emb, emb, n_words=30, n=10).words == words
    with pytest.raises(EmbdebiasError, match="candidate words"):
        most_biased_words(emb, 100_000)


def test_statistic_resamples_words_with_their_weights():
    eta, weights = np.array([0.0, 1.0, 0.5]), np.array([1.0, 2.0, 1.0])
    stat = gipe_statistic(eta, weights)
    assert stat({"words": np.arange(3)[None, :]})[0] == pytest.approx(2.5 / 4)
    assert stat({"words": np.array([[1, 1, 0], [2, 2, 2]])}).tolist() == pytest.approx([4 / 5, 0.5])


def test_registered_with_interval_and_paired_change(emb, hard):
    assert "gipe" in METRICS and "gipe" not in DEFAULT_SUITE
    opts = {"gipe": {"n_words": 40, "n": 15}}
    rep = evaluate({"original": emb, "hard": hard}, tests=["gipe"], options=opts, bootstrap=200)
    ctx = EvalContext(reference=emb, reference_name="original")
    g, _ = ctx.reference_direction()
    for name, tested in (("original", emb), ("hard", hard)):
        expected = gipe(emb, tested, most_biased_words(emb, 40), g, n=15).gipe
        cell = rep.cells[("gipe", "gender", "gipe")][name]
        assert cell.value == pytest.approx(expected)
        assert cell.ci_low <= cell.value <= cell.ci_high and cell.ci_low < cell.ci_high
    (comp,) = [c for c in rep.comparisons if c["metric"] == "gipe"]
    assert comp["embedding"] == "hard" and comp["n_items"] == 80
    assert comp["change"] == pytest.approx(comp["value"] - comp["reference_value"])
    assert rep.params["options"]["gipe"] == {"words": None, "n_words": 40, "n": 15, "theta": 0.05}
    assert "the 40 most male- and 40 most female-biased words" in rep.legends["gipe"]
    assert "its 15 nearest neighbours" in rep.legends["gipe"] and "exceeds 0.05" in rep.legends["gipe"]


def test_given_words_and_bad_input(emb, hard):
    words = most_biased_words(emb, 20)
    rep = evaluate({"original": emb, "hard": hard}, tests=["gipe"], options={"gipe": {"words": words, "n": 5}},
                   bootstrap=0)
    assert rep.cells[("gipe", "words", "n_scored")]["hard"].value == 40
    with pytest.raises(EmbdebiasError, match="option 'n'"):
        evaluate(emb, tests=["gipe"], options={"gipe": {"n": 0}})
    with pytest.raises(MissingWordsError, match="GIPE: words"):
        gipe(emb, hard, ["nope", "nada"], n=5)
    with pytest.raises(DimensionError, match="direction"):
        gipe(emb, hard, words, np.ones(emb.dim + 1), n=5)
    # a tested embedding whose neighbours the original does not have
    other = Embedding([f"x{w}" if i % 2 else w for i, w in enumerate(emb.words)], emb.vectors, name="other")
    with pytest.raises(MissingWordsError, match="not in the vocabulary of gendered"):
        gipe(emb, other, [w for w in words if w in other.words], n=5)


@pytest.mark.parametrize("chunk", [9_000, 37, 5_000])
def test_neighbour_search_equals_a_full_sort(chunk):
    """GIPE's (and RAN's) neighbour search, whatever the chunk (narrower than n, several merge slices)."""
    from embdebias._rows import top_neighbours, unit_rows

    rng = np.random.default_rng(chunk)
    X = unit_rows(rng.normal(size=(9_000, 8))).astype(np.float32)
    rows = np.array([0, 17, 4_500, 8_999])
    chunks = [(s, X[s:s + chunk]) for s in range(0, len(X), chunk)]
    near = top_neighbours(X[rows], chunks, 50, rows)
    sims = X[rows] @ X.T
    sims[np.arange(len(rows)), rows] = -np.inf
    expected = np.argsort(-sims, axis=1, kind="stable")[:, :50]
    assert (near == expected).all()


def test_a_word_no_edge_reaches_weighs_one_a_documented_choice():
    """The authors' code gives such a word weight 0 (it drops out of the mean); its comment,
    the formula 1 + B/E and embdebias give 1. In the hand example c is reached by no edge."""
    words = ["a", "b", "c"]
    emb = Embedding(words, np.array([[0.8, 0.6, 0.0], [0.8, 0.0, 0.6], [0.0, 0.8, 0.3]]))
    r = gipe(emb, emb, words, [1, 0, 0], n=1)
    assert r.weights[2] == 1.0 and r.eta[2] == 0.0
    assert r.gipe == pytest.approx(3.5 / 4.5) == pytest.approx(0.778, abs=1e-3)
    code = gipe(emb, emb, words, [1, 0, 0], n=1, unreached_weight=0)
    assert code.weights.tolist() == [1.5, 2.0, 0.0] and code.gipe == pytest.approx(1.0)
    with pytest.raises(EmbdebiasError, match="unreached_weight is 1"):
        gipe(emb, emb, words, [1, 0, 0], n=1, unreached_weight=0.5)
