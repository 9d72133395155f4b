"""Double-Hard Debias: the component search, then hard debias of every shifted word, with equalize."""

import numpy as np
import pytest
from debiaser_data import gendered_embedding

from embdebias.debias import make_debiaser
from embdebias.debias.double_hard import DoubleHardDebias, mean_and_components
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
