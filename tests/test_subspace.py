import numpy as np
import pytest

from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError
from embdebias.subspace import BiasSubspace, MissingWordsWarning

PAIRS = [("she", "he"), ("woman", "man"), ("girl", "boy"), ("mother", "father")]


def planted(d=10, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    g = np.zeros(d)
    g[0] = 1.0
    words, vecs = [], []
    for f, m in PAIRS:
        base = rng.normal(size=d)
        base[0] = 0
        words += [f, m]
        vecs += [base + g + noise * rng.normal(size=d), base - g + noise * rng.normal(size=d)]
    words.append("other")
    vecs.append(rng.normal(size=d))
    return Embedding(words, np.array(vecs)), g


def test_recovers_planted_direction_with_female_positive():
    emb, g = planted()
    sub = BiasSubspace(PAIRS).fit(emb)
    assert sub.components_.shape == (1, 10)
    assert abs(sub.direction_ @ g) > 0.95
    proj = sub.project(emb[["she", "woman", "he", "man"]])[:, 0]
    assert (proj[:2] > 0).all() and (proj[2:] < 0).all()
    assert sub.explained_variance_ratio_[0] > 0.8
    assert sub.explained_variance_ratio_.sum() == pytest.approx(1.0)


def test_matches_pca_over_pair_centred_vectors():
    from sklearn.decomposition import PCA

    emb, _ = planted(noise=0.3)
    sub = BiasSubspace(PAIRS, n_components=3).fit(emb)
    rows = []
    for f, m in PAIRS:
        a, b = emb[f] / np.linalg.norm(emb[f]), emb[m] / np.linalg.norm(emb[m])
        mu = (a + b) / 2
        rows += [a - mu, b - mu]
    pca = PCA(n_components=3).fit(np.array(rows, dtype=np.float64))
    assert np.allclose(np.abs(pca.components_ @ sub.components_.T), np.eye(3), atol=1e-4)
    assert np.allclose(pca.explained_variance_ratio_, sub.explained_variance_ratio_[:3], atol=1e-5)
    assert np.allclose(sub.components_ @ sub.components_.T, np.eye(3), atol=1e-10)


def test_scale_invariant_because_vectors_are_normalized():
    emb, _ = planted()
    scaled = Embedding(emb.words, emb.vectors * np.arange(1, len(emb) + 1)[:, None])
    a = BiasSubspace(PAIRS).fit(emb).direction_
    b = BiasSubspace(PAIRS).fit(scaled).direction_
    assert np.allclose(a, b, atol=1e-6)


def test_missing_words_reported_and_too_few_pairs():
    emb, _ = planted()
    with pytest.warns(MissingWordsWarning, match="queen"):
        sub = BiasSubspace(PAIRS + [("queen", "king")]).fit(emb)
    assert sub.missing_words_ == ["queen", "king"]
    assert len(sub.pairs_used_) == 4
    with pytest.raises(MissingWordsError), pytest.warns(MissingWordsWarning):
        BiasSubspace([("she", "he"), ("queen", "king")]).fit(emb)
    with pytest.raises(EmbdebiasError):
        BiasSubspace(PAIRS, n_components=5).fit(emb)


def test_lowercase_fallback_is_reported():
    emb, _ = planted()
    sub = BiasSubspace([("She", "He"), ("woman", "man")]).fit(emb)
    assert sub.pairs_used_ == [("she", "he"), ("woman", "man")]
    assert sub.case_mapped_ == {"She": "she", "He": "he"}
    with pytest.raises(MissingWordsError), pytest.warns(MissingWordsWarning):
        BiasSubspace([("She", "He"), ("woman", "man")], lowercase_fallback=False).fit(emb)
