"""The stacked 2-means of Double-Hard's search gives scikit-learn's KMeans labels."""

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning

from embdebias._threads import one_thread
from embdebias.debias._two_means import seeding_draws, two_means
from embdebias.debias.double_hard import cluster_accuracy


def sklearn_labels(X, seed):
    with one_thread():
        return KMeans(n_clusters=2, n_init=10, random_state=seed).fit(X).labels_


def data_set(rng, kind, n, d):
    if kind == "one blob":
        return rng.normal(size=(n, d))
    if kind == "two blobs":
        return np.r_[rng.normal(size=(n // 2, d)), rng.normal(size=(n - n // 2, d)) + 1.5]
    return rng.standard_t(3, size=(n, d)) * rng.uniform(0.1, 10, size=d)  # heavy tails, unequal scales


@pytest.mark.parametrize("kind", ["one blob", "two blobs", "heavy tails"])
def test_labels_are_sklearns(kind):
    rng = np.random.default_rng(len(kind))
    for _ in range(12):
        n, d, seed = int(rng.integers(4, 300)), int(rng.integers(1, 12)), int(rng.integers(0, 10_000))
        X = data_set(rng, kind, n, d)
        labels, done = two_means(X, seed)
        assert done.all()
        assert np.array_equal(labels[0], sklearn_labels(X, seed))


def test_stacked_maps_are_each_set_clustered_alone():
    rng = np.random.default_rng(7)
    W = data_set(rng, "two blobs", 400, 6)
    maps = rng.normal(size=(5, 6, 6))
    maps[0] = np.eye(6)
    labels, done = two_means(W, 3, maps=maps)
    assert done.all() and labels.shape == (5, 400)
    for M, mine in zip(maps, labels):
        assert np.array_equal(mine, sklearn_labels(W @ M, 3))


def test_seeding_draws_do_not_depend_on_the_data():
    first, uniforms = seeding_draws(50, 10, 1)
    again = seeding_draws(50, 10, 1)
    assert np.array_equal(first, again[0]) and np.array_equal(uniforms, again[1])
    assert first.shape == (10,) and uniforms.shape == (10, 2) and (0 <= first).all() and (first < 50).all()
    assert not np.array_equal(first, seeding_draws(50, 10, 2)[0])


def test_an_emptied_cluster_falls_back_to_sklearn():
    X = np.zeros((6, 3))  # every point the same: both seeds coincide, cluster 1 stays empty
    _, done = two_means(X, 0)
    assert not done[0]
    labels = np.r_[np.ones(3), np.zeros(3)]
    with pytest.warns(ConvergenceWarning, match="distinct clusters"):
        assert cluster_accuracy(X, labels, 0) == 0.5
