import numpy as np
import pytest

from embdebias.embedding import DuplicateWordWarning, Embedding, as_embedding
from embdebias.errors import DimensionError, EmbdebiasError, MissingWordsError
from embdebias.io.native import NativeWriter, read_native, write_native
from embdebias.vocab import Vocabulary


@pytest.fixture
def emb():
    rng = np.random.default_rng(0)
    words = ["the", "she", "he", "naïve", "日本", "x"]
    return Embedding(words, rng.normal(size=(6, 4)), name="toy")


def test_construction_and_lookup(emb):
    assert emb.vectors.dtype == np.float32
    assert len(emb) == 6 and emb.dim == 4 and emb.shape == (6, 4)
    assert "she" in emb and "zzz" not in emb and 3 not in emb
    assert emb.index("日本") == 4
    assert emb[["he", "she"]].shape == (2, 4)
    assert emb.get("zzz") is None
    rows, missing = emb.rows(["he", "zzz", "the"])
    assert rows.tolist() == [2, 0] and missing == ["zzz"]
    with pytest.raises(MissingWordsError) as ei:
        emb[["he", "nope"]]
    assert ei.value.missing == ["nope"]
    with pytest.raises(KeyError):  # MissingWordsError is a KeyError too
        emb["nope"]


def test_duplicates_keep_first_row_with_warning():
    with pytest.warns(DuplicateWordWarning, match="'a'"):
        e = Embedding(["a", "b", "a"], np.array([[1.0], [2.0], [3.0]]))
    assert e.words.tolist() == ["a", "b"] and e["a"][0] == 1.0


def test_shape_errors():
    with pytest.raises(DimensionError):
        Embedding(["a"], np.ones((2, 3)))
    with pytest.raises(DimensionError):
        Embedding(["a"], np.ones(3))


def test_normalize_chunked_and_zero_rows():
    vecs = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 0.0]])
    e = Embedding(["a", "b", "c"], vecs)
    n = e.normalize(chunk_rows=2)
    assert np.allclose(n.vectors, [[0.6, 0.8], [0, 0], [1, 0]])
    assert np.allclose(e.norms(), [5, 0, 1])
    assert n.is_normalized() and not e.is_normalized()
    assert np.allclose(e.vectors, vecs)  # the input is untouched


def test_subset_head_and_gensim_roundtrip(emb):
    s = emb.subset(["x", "she"])
    assert s.words.tolist() == ["x", "she"] and np.array_equal(s["x"], emb["x"])
    with pytest.raises(MissingWordsError):
        emb.subset(["x", "nope"])
    assert emb.subset(["x", "nope"], on_missing="ignore").words.tolist() == ["x"]
    h = emb.head(2)
    assert h.words.tolist() == ["the", "she"]
    kv = emb.to_gensim()
    back = Embedding.from_gensim(kv)
    assert back.words.tolist() == emb.words.tolist()
    assert np.array_equal(back.vectors, emb.vectors)
    assert as_embedding(kv).words.tolist() == emb.words.tolist()
    assert as_embedding((["a"], np.ones((1, 2)))).dim == 2
    with pytest.raises(TypeError):
        as_embedding(42)


def test_iter_chunks_cover_all_rows(emb):
    seen = [(a, b) for a, b, _ in emb.iter_chunks(4)]
    assert seen == [(0, 4), (4, 6)]


def test_native_roundtrip_memmapped(emb, tmp_path):
    write_native(emb, tmp_path / "e.embd")
    back = read_native(tmp_path / "e.embd")
    assert isinstance(back.vectors, np.memmap)
    assert back.words.tolist() == emb.words.tolist()
    assert np.array_equal(back.vectors, emb.vectors)
    # lookups by binary search before the word list is decoded
    fresh = read_native(tmp_path / "e.embd")
    assert fresh.index("naïve") == 3 and "zz" not in fresh and fresh.words.get("日本") == 4
    assert read_native(tmp_path / "e.embd", limit=2).words.tolist() == ["the", "she"]


def test_native_vocab_bulk_lookup(tmp_path):
    words = [f"w{i}" for i in range(5000)]
    e = Embedding(words, np.zeros((5000, 2)))
    write_native(e, tmp_path / "big.embd")
    v = Vocabulary.from_native(tmp_path / "big.embd")
    query = words[::-1] + ["missing"]
    assert v.rows(query).tolist() == list(range(4999, -1, -1)) + [-1]


def test_native_writer_failure_leaves_nothing(emb, tmp_path):
    target = tmp_path / "out.embd"
    with pytest.raises(RuntimeError):
        with NativeWriter(target, emb.words, emb.shape) as w:
            w.vectors[:] = 1
            raise RuntimeError("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_native_writer_replaces_existing_atomically(emb, tmp_path):
    target = tmp_path / "out.embd"
    write_native(emb, target)
    write_native(emb.head(3), target)
    assert len(read_native(target)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.embd"]


def test_native_refuses_to_overwrite_its_input(emb, tmp_path):
    target = tmp_path / "e.embd"
    write_native(emb, target)
    opened = read_native(target)
    with pytest.raises(EmbdebiasError, match="input"):
        write_native(opened, target)
    assert np.array_equal(read_native(target).vectors, emb.vectors)


def test_atomic_dir_keeps_a_users_directory(emb, tmp_path):
    victim = tmp_path / "results"
    victim.mkdir()
    (victim / "important.txt").write_text("keep me")
    with pytest.raises(EmbdebiasError, match="not an embdebias output"):
        write_native(emb, victim)
    assert (victim / "important.txt").read_text() == "keep me"
    empty = tmp_path / "empty"
    empty.mkdir()
    write_native(emb, empty)  # an empty directory may be filled
    assert len(read_native(empty)) == len(emb)


def test_outputs_never_inside_or_around_an_input(emb, tmp_path):
    from embdebias._atomic import atomic_file

    src = tmp_path / "in.embd"
    write_native(emb, src)
    opened = read_native(src)
    with pytest.raises(EmbdebiasError, match="input"):
        with atomic_file(src / "vectors.npy", inputs=[src]):
            pass
    with pytest.raises(EmbdebiasError, match="input"):
        write_native(opened, tmp_path)  # the target would contain the input
    assert np.array_equal(read_native(src).vectors, emb.vectors)


def test_non_finite_values_in_a_memory_map_are_found_lazily(tmp_path):
    from embdebias.errors import NonFiniteError

    vecs = np.ones((5, 3), dtype=np.float32)
    vecs[3, 1] = np.nan
    with NativeWriter(tmp_path / "nan.embd", ["a", "b", "c", "bad", "e"], vecs.shape) as w:
        w.vectors[:] = vecs
    e = read_native(tmp_path / "nan.embd")  # opening does not read the matrix
    assert np.array_equal(e["a"], [1, 1, 1])
    with pytest.raises(NonFiniteError, match=r"row 3 \('bad'\)"):
        e["bad"]
    with pytest.raises(NonFiniteError, match="nan.embd"):
        e.normalize(chunk_rows=2)
    with pytest.raises(NonFiniteError):
        e[["a", "bad"]]
