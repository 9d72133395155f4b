"""RAN-Debias, vectorized over its debias set, and its companion metric GIPE."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias._rows import indirect_bias, top_neighbours, unit_rows
from embdebias.debias import make_debiaser
from embdebias.debias.ran import RANDebias, adam, ran_gradient
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.metrics.gipe import gipe


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=1500, dim=16)


@pytest.fixture(scope="module")
def fitted(emb):
    return RANDebias(n_words=60).fit(emb)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    m, k, d = 3, 5, 6
    W = rng.normal(size=(m, d))
    orig = unit_rows(rng.normal(size=(m, d)))
    neigh = unit_rows(rng.normal(size=(m * k, d))).reshape(m, k, d)
    mask = rng.random((m, k)) < 0.6
    g = unit_rows(rng.normal(size=d))
    weights = (1 / 8, 6 / 8, 1 / 8)
    _, grad = ran_gradient(W, orig, neigh, mask, g, weights)
    eps = 1e-6
    for i, j in [(0, 0), (1, 3), (2, 5)]:
        Wp, Wm = W.copy(), W.copy()
        Wp[i, j] += eps
        Wm[i, j] -= eps
        num = (ran_gradient(Wp, orig, neigh, mask, g, weights)[0] - ran_gradient(Wm, orig, neigh, mask, g, weights)[0])
        assert abs(num / (2 * eps) - grad[i, j]) < 1e-5


def test_one_word_alone_equals_the_batch(emb, fitted):
    word = fitted.debias_words_[7]
    alone = RANDebias(debias_words=[word]).fit(emb)
    assert np.allclose(alone.vectors_[0], fitted.vectors_[7], atol=1e-6)


def test_objective_falls_and_only_the_debias_set_moves(emb, fitted):
    assert fitted.objective_[1] < fitted.objective_[0]
    out = fitted.transform(emb)
    g = fitted.direction_
    rows = emb.words.rows(fitted.debias_words_)
    before = np.abs(unit_rows(emb.take(rows, np.float64)) @ g).mean()
    assert np.abs(out.take(rows) @ g).mean() < before
    others = [w for w in emb.words if w not in set(fitted.debias_words_)][:200]
    assert np.allclose(out[others], unit_rows(emb[others].astype(np.float64)), atol=1e-6)


def test_helpers():
    rng = np.random.default_rng(1)
    X = unit_rows(rng.normal(size=(50, 4))).astype(np.float32)
    near = top_neighbours(X[:3], [(0, X[:20]), (20, X[20:])], 5, np.arange(3))
    sims = X[:3] @ X.T
    for i in range(3):
        sims[i, i] = -np.inf
        assert list(near[i]) == list(np.argsort(-sims[i])[:5])
    g = np.array([1.0, 0, 0, 0])
    w, v = np.array([[0.6, 0.8, 0, 0]]), np.array([[[0.6, 0.0, 0.8, 0]]])
    assert np.allclose(indirect_bias(w, v, g), [[(0.36 - 0.0) / 0.36]])
    assert np.allclose(adam(np.array([[3.0]]), lambda W: (0, 2 * W), lr=0.1, steps=500), 0, atol=1e-2)


def test_gipe_falls_after_ran_and_bad_input(emb, fitted):
    out = fitted.transform(emb)
    base = unit_rows(emb.vectors.astype(np.float64))
    from embdebias.embedding import Embedding

    unit = Embedding(emb.words, base.astype(np.float32), name="unit")
    before = gipe(emb, unit, fitted.debias_words_, fitted.direction_, n=20)
    after = gipe(emb, out, fitted.debias_words_, fitted.direction_, n=20)
    assert 0 <= after.gipe < before.gipe <= 1
    with pytest.raises(MissingWordsError):
        gipe(emb, out, ["nope"], fitted.direction_)
    with pytest.raises(EmbdebiasError, match="weights must be 3 numbers"):
        RANDebias(weights=(1, 2)).fit(emb)


def test_registered():
    assert isinstance(make_debiaser("ran"), RANDebias)


def test_repulsion_sets_only_equal_every_neighbour_with_a_mask(emb, fitted):
    """The fit optimizes each word against its repulsion set alone, words grouped by set size;
    the published form (all ``n_neighbours`` neighbours, the set as a mask) gives the same words."""
    from embdebias.debias.ran import repulsion_sets

    rows = emb.words.rows(fitted.debias_words_)
    words = unit_rows(emb.take(rows, np.float64))
    X = unit_rows(emb.vectors.astype(np.float32))
    near = top_neighbours(words, [(0, X)], fitted.n_neighbours, rows)
    neighbours = unit_rows(emb.take(near.ravel(), np.float64)).reshape(*near.shape, emb.dim)
    mask = repulsion_sets(words, neighbours, fitted.direction_, fitted.theta, fitted.n_repulsion)
    assert list(mask.sum(axis=1)) == list(fitted.repulsion_sizes_)
    assert len(set(fitted.repulsion_sizes_)) > 1  # blocks of different widths were padded

    def gradient(W):
        return ran_gradient(W, words, neighbours, mask, fitted.direction_, fitted.weights)

    full = unit_rows(adam(words, gradient, lr=fitted.learning_rate, steps=fitted.n_epochs))
    # the same to rounding; |w . g| oscillates about 0 once neutralized, where the sign of a
    # rounding error picks Adam's next step: a word or two differ by up to ~1e-4
    diff = np.abs(full - fitted.vectors_).max(axis=1)
    assert diff.max() < 1e-4 and np.median(diff) < 1e-6
    assert np.isclose(gradient(words)[0] / len(rows), fitted.objective_[0])


def test_top_neighbours_over_many_chunks_equal_one_sort():
    """Past the first chunk only the queries whose row maximum beats their n-th best are searched."""
    rng = np.random.default_rng(3)
    X = unit_rows(rng.normal(size=(3000, 8))).astype(np.float32)
    q = np.array([5, 700, 2999])
    chunks = [(at, X[at:at + 97]) for at in range(0, len(X), 97)]
    near = top_neighbours(X[q], chunks, 40, q)
    sims = X[q] @ X.T
    sims[np.arange(3), q] = -np.inf
    assert (near == np.argsort(-sims, axis=1, kind="stable")[:, :40]).all()


def test_fit_shows_progress_only_when_asked(emb, capsys):
    from embdebias.debias._progress import fit_progress

    RANDebias(n_words=10, n_epochs=2).fit(emb)
    assert capsys.readouterr().err == ""
    with fit_progress(True):
        RANDebias(n_words=10, n_epochs=2).fit(emb)
    err = capsys.readouterr().err
    assert "[fit] ran: neighbours" in err and "[fit] ran: optimize" in err
