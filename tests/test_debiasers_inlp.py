"""INLP: the projection of the published algorithm, stopped when gender is at chance."""

import numpy as np
import pytest
import scipy.linalg
from debiaser_data import gendered_embedding

from embdebias.debias import make_debiaser
from embdebias.debias._labels import FEMALE, MALE, NEUTRAL, gender_labels
from embdebias.debias.inlp import INLP, nullspace_projection, rowspace_projection
from embdebias.embedding import Embedding
from embdebias.errors import EmbdebiasError, MissingWordsError


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=2500, dim=20)


@pytest.fixture(scope="module")
def fitted(emb):
    return INLP().fit(emb)


def transcription(weights, dim):
    """Ravfogel et al.'s debias.py as written: P_R(W) = orth(W^T) orth(W^T)^T per classifier,
    P = I - P_R(sum of P_R), the projection on the intersection of the nullspaces."""
    rowspaces = []
    for W in weights:
        w_basis = scipy.linalg.orth(W.T)
        rowspaces.append(w_basis.dot(w_basis.T))
    Q = np.sum(rowspaces, axis=0)
    basis = scipy.linalg.orth(Q)
    return np.eye(dim) - basis.dot(basis.T)


def test_projection_equals_the_transcription_given_the_same_classifiers(fitted, emb):
    weights = np.split(fitted.classifiers_, fitted.n_iterations_)  # 3 rows (classes) each
    assert all(w.shape[0] == 3 for w in weights)
    expected = transcription(weights, emb.dim)
    assert np.abs(fitted.map_ - expected).max() < 1e-8
    P = fitted.map_
    assert np.allclose(P, P.T, atol=1e-10) and np.allclose(P @ P, P, atol=1e-10)
    assert np.abs(fitted.classifiers_ @ P).max() < 1e-8  # every classifier is blind after


def test_it_stops_at_chance_and_reports_the_rank(fitted, emb):
    assert fitted.history_[-1]["binary_dev_accuracy"] <= 0.55
    assert all(h["binary_dev_accuracy"] > 0.55 for h in fitted.history_[:-1])
    assert 0 < fitted.rank_removed_ < emb.dim
    assert fitted.rank_removed_ == emb.dim - np.linalg.matrix_rank(fitted.map_)
    assert fitted.test_accuracy_ <= 0.6
    info = fitted.run_info(emb)
    assert info["rank_removed"] == fitted.rank_removed_


def test_without_the_stopping_rule_it_runs_every_iteration(emb):
    est = INLP(n_iterations=4, stop_accuracy=None).fit(emb)
    assert est.n_iterations_ == 4 and est.rank_removed_ == 12  # 3 classes, 3 directions each


def test_labels_as_published(emb):
    lab = gender_labels(emb)
    n = (lab.labels == MALE).sum()
    assert n == (lab.labels == FEMALE).sum() >= 2 and (lab.labels == NEUTRAL).sum() <= n
    assert abs(len(lab.test) / len(lab.rows) - 0.3) < 0.01
    assert not set(lab.train) & set(lab.dev) and not set(lab.dev) & set(lab.test)
    assert emb.words[int(lab.rows[np.flatnonzero(lab.labels == MALE)[0]])] != "she"


def test_bad_labels(emb):
    tiny = Embedding(["he", "she", "a", "b"], np.eye(4, dtype=np.float32), name="tiny")
    with pytest.raises(EmbdebiasError, match="too few for two classes"):
        INLP().fit(tiny)
    no_she = Embedding(["he", "x", "y"], np.eye(3, dtype=np.float32), name="nos")
    with pytest.raises(MissingWordsError, match="'she'"):
        INLP().fit(no_she)


def test_rowspace_of_zero_and_registered():
    assert np.allclose(rowspace_projection(np.zeros((1, 3))), 0)
    assert np.allclose(nullspace_projection([], 3), np.eye(3))
    assert isinstance(make_debiaser("inlp", n_iterations=2), INLP)


def test_a_classifier_of_near_zero_weights_removes_nothing_as_the_authors_do():
    """Ravfogel et al.'s get_rowspace_projection: np.allclose(W, 0) spans nothing (weights of
    about 1e-8 from a classifier that found no signal); any larger weight spans its row."""
    tiny = np.full((1, 4), 1e-9)
    assert np.allclose(rowspace_projection(tiny), 0)
    assert np.allclose(nullspace_projection([rowspace_projection(tiny)], 4), np.eye(4))
    small = np.array([[1e-6, 0, 0, 0]])
    assert np.allclose(rowspace_projection(small), np.diag([1.0, 0, 0, 0]))


def test_the_label_pool_is_the_first_max_words_filtered_words():
    """Published: the first 150,000 words that pass the filter, 7,500 (5 %) a class; words
    the filter drops do not count towards max_words."""
    from embdebias.debias._labels import filtered_pool

    rng = np.random.default_rng(0)
    words = ["he", "she"] + [f"{i}x" if i % 3 == 0 else "w" + chr(97 + i % 26) + chr(97 + i // 26) for i in range(600)]
    emb = Embedding(words, rng.standard_normal((len(words), 8)).astype(np.float32), name="pool")
    pool = filtered_pool(emb, 200)
    assert len(pool) == 200 and all(emb.words[int(r)][0] != "x" and not emb.words[int(r)][0].isdigit() for r in pool)
    assert pool[-1] > 200  # it reads on past the first 200 words, a third of which the filter drops
    assert list(pool) == sorted(pool) and len(filtered_pool(emb, 10_000)) == 2 + 400
    lab = gender_labels(emb, max_words=200)
    assert (lab.labels == MALE).sum() == round(0.05 * 200) == (lab.labels == FEMALE).sum()
