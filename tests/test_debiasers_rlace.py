"""RLACE in numpy: a Fantope game, seeded and deterministic, ending in a rank-k projection."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias.debias import make_debiaser
from embdebias.debias.rlace import RLACE, fantope_projection, rank_k_projection
from embdebias.errors import EmbdebiasError


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=2500, dim=20)


@pytest.fixture(scope="module")
def fitted(emb):
    return RLACE(max_iter=3000, evaluate_every=500).fit(emb)


def test_fantope_projection():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(8, 8))
    for k in (1, 3):
        P = fantope_projection(A, k)
        lam = np.linalg.eigvalsh(P)
        assert np.allclose(P, P.T) and abs(lam.sum() - k) < 1e-5
        assert lam.min() > -1e-9 and lam.max() < 1 + 1e-9
        # already in the Fantope: unchanged
        Q = rank_k_projection(A, k)
        assert np.allclose(fantope_projection(np.eye(8) - Q, k), np.eye(8) - Q, atol=1e-6)


def test_result_is_a_rank_k_orthogonal_projection(fitted, emb):
    P = fitted.map_
    assert np.allclose(P, P.T) and np.allclose(P @ P, P, atol=1e-10)
    assert np.linalg.matrix_rank(P) == emb.dim - 1
    assert np.allclose(fitted.components_ @ P, 0, atol=1e-10)


def test_gender_is_no_longer_linearly_decodable(fitted):
    assert fitted.test_accuracy_ <= 0.6
    inlp1 = make_debiaser("inlp", n_iterations=1, stop_accuracy=None, binary=True)
    from debiaser_data import gendered_embedding as g

    assert fitted.test_accuracy_ < inlp1.fit(g(n_filler=2500, dim=20)).test_accuracy_ + 0.05


def test_seeded_and_deterministic(emb, fitted):
    again = RLACE(max_iter=3000, evaluate_every=500).fit(emb)
    assert np.array_equal(again.map_, fitted.map_)
    other = RLACE(max_iter=600, evaluate_every=200, random_state=5).fit(emb)
    assert not np.array_equal(other.map_, fitted.map_)


def test_rank_two_and_bad_rank(emb):
    est = RLACE(rank=2, max_iter=400, evaluate_every=200).fit(emb)
    assert np.linalg.matrix_rank(est.map_) == emb.dim - 2
    with pytest.raises(EmbdebiasError, match="rank must be below the dimension 20"):
        RLACE(rank=20).fit(emb)
    with pytest.raises(EmbdebiasError, match="rank"):
        RLACE(rank=0).fit(emb)
