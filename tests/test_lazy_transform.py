"""Every debiaser is a row-wise map: ``lazy_transform`` gives its output row by row, as read."""

import numpy as np
import pytest
from debiaser_data import QUICK_FIT, gendered_embedding

from embdebias import io
from embdebias.debias import DEBIASERS, make_debiaser
from embdebias.debias._base import place_rows
from embdebias.embedding import RowMapEmbedding

# a product of a few rows and one of a whole chunk may round the last float32 bit differently
ROUNDING = 2e-6


@pytest.fixture(scope="module")
def emb():
    return gendered_embedding()


class _Fitted(dict):
    """``{method name: estimator fitted on emb}``, each fitted when first read, so that a test
    pays only for the fits it uses (fitting all eight took 3 s)."""

    def __init__(self, emb):
        super().__init__()
        self.emb = emb

    def __missing__(self, name):
        self[name] = make_debiaser(name, **QUICK_FIT.get(name, {})).fit(self.emb)
        return self[name]


@pytest.fixture(scope="module")
def fitted(emb):
    return _Fitted(emb)


@pytest.mark.parametrize("name", list(DEBIASERS))
def test_lazy_rows_equal_the_transform(name, emb, fitted):
    est = fitted[name]
    full = est.transform(emb)
    lazy = est.lazy_transform(emb, name=name)
    assert isinstance(lazy, RowMapEmbedding) and lazy.name == name and lazy.shape == full.shape
    rows = np.random.default_rng(1).integers(0, len(emb), 400)
    rows[:3] = rows[0]  # repeated rows, in any order
    np.testing.assert_allclose(lazy.take(rows), full.take(rows), atol=ROUNDING, rtol=0)
    # whole chunks are the very same computation as the transform's
    chunked = np.concatenate([block for _, _, block in lazy.iter_chunks()])
    np.testing.assert_array_equal(chunked, np.asarray(full))


def test_the_rows_a_fit_fixes_are_placed_wherever_they_are_read(emb, fitted):
    """Hard debias's equalized rows are computed at fit time: a lazy read of them, alone, in
    a scattered index or by word, gives the transform's values."""
    est = fitted["hard"]
    full, lazy = est.transform(emb), est.lazy_transform(emb)
    pair = [w for p in est.equalize_pairs_ for w in p if w in emb][:4]
    assert len(pair) == 4
    rows = emb.rows(pair)
    np.testing.assert_array_equal(lazy[pair], full[pair])
    scattered = np.concatenate([[len(emb) - 1], rows[::-1], [0]])
    np.testing.assert_array_equal(lazy.take(scattered), full.take(scattered))
    # and differ from a plain neutralization of those rows (so the test can fail)
    assert not np.allclose(full[pair[0]], emb[pair[0]] / np.linalg.norm(emb[pair[0]]))


def test_slices_and_heads_stay_lazy(emb, fitted):
    est = fitted["inlp"]
    full, lazy = est.transform(emb), est.lazy_transform(emb)
    head = lazy.head(300)
    part = lazy[100:250]
    assert isinstance(head, RowMapEmbedding) and isinstance(part, RowMapEmbedding)
    assert list(part.words) == list(emb.words[100:250])
    np.testing.assert_allclose(part.take(slice(0, 150)), np.asarray(full)[100:250], atol=ROUNDING, rtol=0)
    np.testing.assert_allclose(part.take([0, -1]), np.asarray(full)[[100, 249]], atol=ROUNDING, rtol=0)
    np.testing.assert_allclose(head.norms(), 1.0, atol=1e-5)
    with pytest.raises(IndexError):
        part.take([150])


def test_the_whole_matrix_is_mapped_once_when_asked_for(emb, fitted, tmp_path):
    est = fitted["soft"]
    lazy = est.lazy_transform(emb)
    matrix = lazy.vectors
    assert lazy.vectors is matrix and not matrix.flags.writeable
    np.testing.assert_array_equal(matrix, np.asarray(est.transform(emb)))
    # it saves like any embedding, chunk by chunk
    io.save(lazy, tmp_path / "soft.embd")
    np.testing.assert_array_equal(np.asarray(io.load(tmp_path / "soft.embd")), matrix)


def test_lazy_rows_read_only_what_is_asked(emb, fitted):
    """A read of k rows maps k rows of the input: the input is never read whole."""
    calls = []

    def spy(rows, block, out):
        calls.append(len(block))
        out[:] = block

    lazy = RowMapEmbedding(emb, spy)
    lazy.take([5, 7, 9])
    lazy["he"]
    assert calls == [3, 1]


def test_place_rows_slices_and_scattered_rows():
    fixed_rows = np.array([2, 5, 9])
    fixed = np.array([[2.0], [5.0], [9.0]])
    out = np.zeros((4, 1))
    place_rows(out, slice(4, 8), fixed_rows, fixed)
    assert out[:, 0].tolist() == [0, 5, 0, 0]
    out = np.zeros((5, 1))
    place_rows(out, np.array([9, 0, 5, 10, 9]), fixed_rows, fixed)
    assert out[:, 0].tolist() == [9, 0, 5, 0, 9]
    place_rows(out, np.array([1]), fixed_rows[:0], fixed[:0])  # nothing fixed: nothing placed


def test_masks_and_stepped_slices_read_only_their_rows(emb, fitted):
    est = fitted["soft"]
    full, lazy = np.asarray(est.transform(emb)), est.lazy_transform(emb)
    part = lazy[100:200]
    mask = np.zeros(100, dtype=bool)
    mask[[3, 70]] = True
    np.testing.assert_allclose(part.take(mask), full[[103, 170]], atol=ROUNDING, rtol=0)
    with pytest.raises(IndexError):
        part.take(mask[:50])
    stepped = lazy[10:40:3]
    assert not isinstance(stepped, RowMapEmbedding) and list(stepped.words) == list(emb.words[10:40:3])
    np.testing.assert_allclose(np.asarray(stepped), full[10:40:3], atol=ROUNDING, rtol=0)
    assert lazy._matrix is None  # nothing above mapped the whole matrix
