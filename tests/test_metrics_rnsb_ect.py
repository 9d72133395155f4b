"""RNSB and ECT against hand-computed values on constructed embeddings."""

import json
import math

import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import MissingWordsError
from embdebias.metrics import ect, rnsb, sentiment_lexicon
from embdebias.metrics.rnsb import default_identity_terms, kl_from_uniform
from embdebias.wordlists import WeatTest, WordSet


# -- RNSB -------------------------------------------------------------------------------
def test_kl_from_uniform_hand_values():
    assert kl_from_uniform([0.3, 0.3, 0.3]) == pytest.approx(0.0)
    assert kl_from_uniform([1.0, 0.0]) == pytest.approx(math.log(2))
    q = [0.25, 0.75]  # normalized from (0.2, 0.6)
    expected = q[0] * math.log(q[0] * 2) + q[1] * math.log(q[1] * 2)
    assert kl_from_uniform([0.2, 0.6]) == pytest.approx(expected)


def test_vader_lexicon_words():
    pos, neg = sentiment_lexicon()
    assert "good" in pos and "bad" in neg and "hate" in neg
    assert all(w.isalpha() for w in pos + neg)
    assert not set(pos) & set(neg)
    pos2, neg2 = sentiment_lexicon(2.0)
    assert set(pos2) < set(pos) and set(neg2) < set(neg)


def _sentiment_embedding(identity_vectors, seed=0, n=60, dim=6):
    """Positive words near +e1, negative near -e1, plus the given identity terms."""
    rng = np.random.default_rng(seed)
    pos = [f"pos{i}" for i in range(n)]
    neg = [f"neg{i}" for i in range(n)]
    vp = rng.normal(0, 0.3, (n, dim))
    vp[:, 0] += 1
    vn = rng.normal(0, 0.3, (n, dim))
    vn[:, 0] -= 1
    ids = list(identity_vectors)
    words = pos + neg + ids
    vecs = np.vstack([vp, vn, np.array([identity_vectors[w] for w in ids])])
    return Embedding(words, vecs), pos, neg


def test_rnsb_zero_for_identical_identity_terms():
    v = np.array([0.1, 1, 0, 0, 0, 0])
    emb, pos, neg = _sentiment_embedding({"he": v, "she": v.copy(), "they": v.copy()})
    r = rnsb(emb, ["he", "she", "they"], positive=pos, negative=neg, n_runs=3)
    assert r.rnsb == pytest.approx(0.0, abs=1e-12)
    assert r.distribution == pytest.approx({"he": 1 / 3, "she": 1 / 3, "they": 1 / 3})
    assert r.accuracy > 0.9  # the two classes are separable along e1


def test_rnsb_matches_kl_of_its_probabilities_and_flags_the_negative_term():
    emb, pos, neg = _sentiment_embedding({
        "he": np.array([0.7, 1, 0, 0, 0, 0]),
        "she": np.array([0.7, 0, 1, 0, 0, 0]),
        "villain": np.array([-1.0, 0, 0, 0, 0, 0]),
    })
    r = rnsb(emb, ["he", "she", "villain"], positive=pos, negative=neg, n_runs=1, random_state=4)
    p = np.array([r.probabilities[w] for w in ("he", "she", "villain")])
    assert r.rnsb == pytest.approx(kl_from_uniform(p))
    assert r.probabilities["villain"] > 0.9 and r.probabilities["villain"] == max(p)
    assert r.rnsb > 0.2
    assert r.n_positive == 60 and r.n_negative == 60 and r.lexicon_missing == 0


def test_rnsb_seeded_runs():
    emb, pos, neg = _sentiment_embedding({"he": np.array([0.2, 1, 0, 0, 0, 0]),
                                          "she": np.array([-0.2, 0, 1, 0, 0, 0])}, seed=2)
    kw = dict(positive=pos, negative=neg, n_runs=4)
    a = rnsb(emb, ["he", "she"], random_state=5, **kw)
    b = rnsb(emb, ["he", "she"], random_state=5, **kw)
    c = rnsb(emb, ["he", "she"], random_state=6, **kw)
    assert a.to_dict() == b.to_dict()
    assert a.runs != c.runs
    assert len(a.runs) == 4 and a.rnsb == pytest.approx(np.mean(a.runs))
    assert a.rnsb_std == pytest.approx(np.std(a.runs, ddof=1))
    json.dumps(a.to_dict(), allow_nan=False)


def test_rnsb_runs_are_those_of_train_test_split_and_score():
    """The cached split positions give exactly the runs of splitting the features themselves
    with scikit-learn's train_test_split and scoring with the classifier's score()."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split

    from embdebias._rows import unit_rows
    from embdebias.metrics._common import spawn_seeds
    from embdebias.metrics.rnsb import stratified_split

    emb, pos, neg = _sentiment_embedding({"he": np.array([0.3, 1, 0, 0, 0, 0]),
                                          "she": np.array([-0.1, 0, 1, 0, 0, 0])}, seed=3, n=37)
    r = rnsb(emb, ["he", "she"], positive=pos, negative=neg, n_runs=5, random_state=11, test_size=0.3)
    feats = unit_rows(emb.take(emb.rows(pos + neg), np.float64), copy=True)
    ident = unit_rows(emb.take(emb.rows(["he", "she"]), np.float64), copy=True)
    labels = np.r_[np.zeros(37, int), np.ones(37, int)]
    accs, runs = [], []
    for seed in spawn_seeds(11, 5):
        x_tr, x_te, y_tr, y_te = train_test_split(feats, labels, test_size=0.3, random_state=seed, stratify=labels)
        train, test = stratified_split(labels, 0.3, seed)
        assert np.array_equal(feats[train], x_tr) and np.array_equal(labels[test], y_te)
        clf = LogisticRegression(C=1.0, max_iter=1000).fit(x_tr, y_tr)
        accs.append(clf.score(x_te, y_te))
        runs.append(kl_from_uniform(clf.predict_proba(ident)[:, 1]))
    assert r.runs == runs                          # bit for bit
    assert r.accuracy == float(np.mean(accs))
    once = stratified_split(labels, 0.3, 1)[0]     # computed once, shared read-only
    assert stratified_split(labels.copy(), 0.3, 1)[0] is once and not once.flags.writeable


def test_rnsb_missing_identity_terms():
    emb, pos, neg = _sentiment_embedding({"he": np.ones(6), "she": -np.ones(6)})
    with pytest.raises(MissingWordsError) as err:
        rnsb(emb, ["he", "she", "xe", "ze"], positive=pos, negative=neg, n_runs=1)
    assert "xe" in str(err.value) and "ze" in str(err.value)
    r = rnsb(emb, ["he", "she", "xe"], positive=pos, negative=neg, n_runs=1, max_missing=0.5)
    assert r.missing == {"identity": ["xe"]}


def test_default_identity_terms_are_male_and_female_terms():
    terms = default_identity_terms()
    assert {"he", "she", "man", "woman"} <= set(terms)


# -- ECT ----------------------------------------------------------------------------------
def _plane_embedding(angles):
    words = ["m0", "m1", "f0", "f1"] + [f"a{i}" for i in range(len(angles))]
    vecs = [[1, 0.1, 0], [1, -0.1, 0], [0.1, 1, 0], [-0.1, 1, 0]]  # means along e1 and e2
    vecs += [[math.cos(t), math.sin(t), 0.0] for t in angles]
    return Embedding(words, np.array(vecs))


def test_ect_opposite_orderings_give_minus_one():
    # attributes at increasing angles: cos with e1 decreases, cos with e2 increases
    angles = [0.1, 0.4, 0.7, 1.0, 1.3]
    emb = _plane_embedding(angles)
    attrs = [f"a{i}" for i in range(5)]
    r = ect(emb, ["m0", "m1"], ["f0", "f1"], attrs)
    assert r.correlation == pytest.approx(-1.0)
    assert r.sim_X == pytest.approx([math.cos(t) for t in angles], abs=1e-6)
    assert r.sim_Y == pytest.approx([math.sin(t) for t in angles], abs=1e-6)


def test_ect_hand_spearman():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    vecs = rng.standard_normal((12, 5))
    emb = Embedding(words, vecs)
    X, Y, attrs = words[:3], words[3:6], words[6:]
    unit = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    mx, my = unit[:3].mean(0), unit[3:6].mean(0)
    sx = [float(unit[i] @ mx / np.linalg.norm(mx)) for i in range(6, 12)]
    sy = [float(unit[i] @ my / np.linalg.norm(my)) for i in range(6, 12)]
    def rank(v):
        return {i: r for r, i in enumerate(sorted(range(len(v)), key=v.__getitem__))}
    rx, ry = rank(sx), rank(sy)
    n = len(sx)
    rho = 1 - 6 * sum((rx[i] - ry[i]) ** 2 for i in range(n)) / (n * (n * n - 1))
    r = ect(emb, X, Y, attrs)
    assert r.correlation == pytest.approx(rho)


def test_ect_weat_test_uses_a_union_b_and_reports_missing():
    emb = _plane_embedding([0.1, 0.4, 0.7, 1.0, 1.3])
    test = WeatTest("t", "t", WordSet("male", ("m0", "m1")), WordSet("female", ("f0", "f1")),
                    WordSet("A", ("a0", "a1", "a2")), WordSet("B", ("a3", "a4")))
    r = ect(emb, test)
    assert r.words["attributes"] == ["a0", "a1", "a2", "a3", "a4"]
    assert r.correlation == pytest.approx(-1.0)
    with pytest.raises(MissingWordsError) as err:
        ect(emb, ["m0", "m1"], ["f0", "f1"], ["a0", "a1", "a2", "q1", "q2"])
    assert "q1" in str(err.value) and "attributes" in str(err.value)
    json.dumps(r.to_dict(), allow_nan=False)


# -- ECT on resamples: the ranks of the drawn attributes ------------------------------------------
@pytest.mark.parametrize("decimals", [None, 1])  # distinct values; many ties between items
def test_drawn_ranks_are_rankdatas_of_the_drawn_values_exactly(decimals):
    from scipy.stats import rankdata

    from embdebias.metrics._resample import counts
    from embdebias.metrics.ect import drawn_ranks

    rng = np.random.default_rng(11)
    values = rng.standard_normal((300, 40))
    values = values if decimals is None else np.round(values, decimals)
    idx = rng.integers(0, 40, (300, 40))
    got = np.take_along_axis(drawn_ranks(values, counts(idx, 40)), idx, axis=1)
    assert np.array_equal(got, rankdata(np.take_along_axis(values, idx, axis=1), axis=1))


def test_value_order_sorts_every_row_where_the_keys_collide_or_a_value_is_nan():
    from scipy.stats import rankdata

    from embdebias.metrics._resample import counts
    from embdebias.metrics.ect import _value_order, drawn_ranks

    one_up, one_down = np.nextafter(1.0, 2.0), np.nextafter(1.0, 0.0)
    rows = [[one_up, 1.0, one_down, -1.0],            # differ in the lowest bits only: the keys collide
            [0.0, -0.0, 0.0, -0.0],                   # signed zeros: one tie group, as argsort's
            [np.inf, -np.inf, -2.5, 3.0],
            [-1e-300, 1e-300, -5.0, 5.0]]
    for values in (np.array(rows), np.array(rows[1:]), np.array([[0.5, np.nan, -0.5, 0.0]])):
        flat, ordered = _value_order(values)
        b, m = values.shape
        assert np.array_equal(np.sort(values, axis=1).ravel(), ordered, equal_nan=True)
        assert np.array_equal(values.ravel()[flat], ordered, equal_nan=True)
        assert sorted(flat.tolist()) == list(range(b * m))      # every row a permutation of its places
        assert np.array_equal(flat.reshape(b, m) // m, np.repeat(np.arange(b)[:, None], m, axis=1))
    values = np.array(rows)
    idx = np.random.default_rng(5).integers(0, 4, (4, 4))
    got = np.take_along_axis(drawn_ranks(values, counts(idx, 4)), idx, axis=1)
    drawn = np.take_along_axis(values, idx, axis=1)
    # rankdata's ranks by their definition (values below, plus the tie group's middle place);
    # scipy 1.10's rankdata (our lowest supported) gives NaN for a row holding both infinities
    below = (drawn[:, None, :] < drawn[:, :, None]).sum(axis=2)
    tied = (drawn[:, None, :] == drawn[:, :, None]).sum(axis=2)
    assert np.array_equal(got, below + (tied + 1) / 2)
    finite = np.isfinite(drawn).all(axis=1)
    assert np.array_equal(got[finite], rankdata(drawn[finite], axis=1))


def test_drawn_ranks_of_a_row_that_drew_a_nan_are_nan_as_rankdatas():
    from embdebias.metrics._resample import counts
    from embdebias.metrics.ect import drawn_ranks

    values = np.array([[0.1, np.nan, 0.3], [0.1, np.nan, 0.3]])
    idx = np.array([[0, 1, 2], [0, 2, 2]])                 # the second row never draws the NaN
    got = drawn_ranks(values, counts(idx, 3))
    assert np.isnan(got[0]).all()
    assert np.array_equal(np.take_along_axis(got[1:], idx[1:], axis=1), [[1.0, 2.5, 2.5]])
    assert drawn_ranks(np.zeros((4, 0)), np.zeros((4, 0))).shape == (4, 0)   # no items


def test_ect_resampled_rho_is_the_rankdata_rho_bit_for_bit():
    # the ranks are exact numbers: the weighted sums over attributes are the sums over drawn copies
    from scipy.stats import rankdata

    from embdebias.metrics._resample import counts
    from embdebias.metrics.ect import ect_correlations

    rng = np.random.default_rng(5)
    x, y, attr = rng.normal(size=(9, 20)), rng.normal(size=(11, 20)), rng.normal(size=(60, 20))
    attr[7] = attr[30]                                      # two attributes of equal similarity
    idx = {"X": rng.integers(0, 9, (400, 9)), "Y": rng.integers(0, 11, (400, 11)),
           "attributes": rng.integers(0, 60, (400, 60))}
    sim_x = counts(idx["X"], 9) @ (attr @ x.T).T
    sim_y = counts(idx["Y"], 11) @ (attr @ y.T).T
    rx = rankdata(np.take_along_axis(sim_x, idx["attributes"], axis=1), axis=1)
    ry = rankdata(np.take_along_axis(sim_y, idx["attributes"], axis=1), axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    expected = (rx * ry).sum(axis=1) / np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    assert np.array_equal(ect_correlations(x, y, attr)(idx), expected)


def test_stratified_split_checks_what_train_test_split_checks():
    """A cached split never answers for a value scikit-learn refuses (2.0 after 2), and a seed
    that is not an integer goes to scikit-learn as it is."""
    from embdebias.metrics.rnsb import stratified_split

    labels = np.r_[np.zeros(10, int), np.ones(10, int)]
    assert stratified_split(labels, 2, 0)[1].size == 2           # an absolute count
    with pytest.raises(ValueError):                               # scikit-learn's own error (a ValueError)
        stratified_split(labels, 2.0, 0)
    with pytest.raises(ValueError):
        stratified_split(labels, 0.2, 1.7)
    a = stratified_split(labels, 0.2, np.random.RandomState(3))
    b = stratified_split(labels, 0.2, np.random.RandomState(3))
    assert np.array_equal(a[0], b[0]) and a[1].size == 4
