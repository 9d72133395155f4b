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
    assert emb.get("zzz") == -1 and emb.get("zzz", None) is None and emb.get("he") == 2
    assert emb.rows(["he", "zzz", "the"]).tolist() == [2, -1, 0]
    assert emb.split_known(["he", "zzz", "the"]) == (["he", "the"], ["zzz"])
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


# -- copy / share semantics: caches never go stale ----------------------------------------------
WORDS3 = ["a", "b", "c"]


def test_default_copies_a_writeable_array_so_later_changes_do_not_leak():
    a = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
    e = Embedding(WORDS3, a)
    assert not np.shares_memory(e.vectors, a) and not e.live
    assert e.norms().tolist() == [5.0, 1.0, 2.0]
    a[0] = [np.nan, 0.0]  # the caller's array changes: the embedding does not
    assert e["a"].tolist() == [3.0, 4.0] and e.norms()[0] == 5.0
    with pytest.raises(ValueError):  # nobody writes through the embedding either
        e.vectors[0, 0] = 1.0
    with pytest.raises(ValueError):
        e.norms()[0] = 1.0


def test_copy_false_shares_a_live_read_only_view_without_caches():
    from embdebias.errors import NonFiniteError

    a = np.array([[3.0, 4.0], [1.0, 0.0], [0.0, 2.0]], dtype=np.float32)
    e = Embedding(WORDS3, a, copy=False)
    assert np.shares_memory(e.vectors, a) and e.live
    assert not e.vectors.flags.writeable and a.flags.writeable  # the caller's array is untouched
    assert e.norms()[0] == 5.0 and e.normalize()["a"].tolist() == pytest.approx([0.6, 0.8])
    a[0] = [6.0, 8.0]
    assert e.norms()[0] == 10.0 and e["a"].tolist() == [6.0, 8.0]
    assert e.normalize()["a"].tolist() == pytest.approx([0.6, 0.8])
    list(e.iter_chunks())  # a full clean pass ...
    a[1, 0] = np.inf  # ... is not remembered for a live view
    with pytest.raises(NonFiniteError, match="'b'"):
        e["b"]
    with pytest.raises(ValueError, match="float32"):
        Embedding(WORDS3, a.astype(np.float64), copy=False)


def test_copy_true_always_copies_and_read_only_memory_maps_are_shared(tmp_path):
    np.save(tmp_path / "m.npy", np.arange(6, dtype=np.float32).reshape(3, 2))
    mm = np.load(tmp_path / "m.npy", mmap_mode="r")
    shared = Embedding(WORDS3, mm)
    assert np.shares_memory(shared.vectors, mm) and not shared.live
    from embdebias.io import describe

    assert describe(shared)["memory_mapped"]
    copied = Embedding(WORDS3, mm, copy=True)
    assert not np.shares_memory(copied.vectors, mm)
    np.testing.assert_array_equal(copied.vectors, mm)


def test_gensim_input_copied_by_default_shared_live_when_asked():
    kv = Embedding(WORDS3, np.ones((3, 2))).to_gensim()
    copied = Embedding.from_gensim(kv)
    live = Embedding.from_gensim(kv, copy=False)
    wrapped = as_embedding(kv)  # the estimators' way in: no copy
    assert copied.norms()[0] == pytest.approx(np.sqrt(2))
    kv.vectors[0] = [3.0, 4.0]
    assert copied.norms()[0] == pytest.approx(np.sqrt(2)) and copied["a"].tolist() == [1.0, 1.0]
    assert live.norms()[0] == 5.0 and wrapped["a"].tolist() == [3.0, 4.0]
    assert np.shares_memory(wrapped.vectors, kv.vectors) and wrapped.live


def test_readers_and_transforms_keep_their_caches(emb, tmp_path):
    write_native(emb, tmp_path / "e.embd")
    for e in (read_native(tmp_path / "e.embd"), read_native(tmp_path / "e.embd", mmap=False),
              emb.normalize(), emb.subset(["x", "he"]), emb.head(3)):
        assert not e.live
        assert e.norms() is e.norms()  # cached


# -- Vocabulary: immutable, unique ---------------------------------------------------------------
def test_tolist_is_a_copy(emb, tmp_path):
    write_native(emb, tmp_path / "e.embd")
    for vocab in (Vocabulary(["a", "b"]), read_native(tmp_path / "e.embd").words):
        n, words = len(vocab), vocab.tolist()
        words.append("zzz")
        words[0] = "changed"
        assert len(vocab) == n and vocab.tolist()[0] != "changed" and "zzz" not in vocab
        assert len(list(vocab)) == n


def test_vocabulary_refuses_duplicates_and_embeddings_keep_the_first_row():
    from embdebias.errors import DuplicateWordsError

    with pytest.raises(DuplicateWordsError, match=r"'a' \(row 2\)") as info:
        Vocabulary(["a", "b", "a"])
    assert info.value.duplicates == ["a"] and isinstance(info.value, ValueError)
    with pytest.warns(DuplicateWordWarning):
        e = Embedding(["a", "b", "a", "b"], np.arange(4.0)[:, None])
    assert e.index("a") == 0 and e["a"][0] == 0.0 and e["b"][0] == 1.0
    assert e.words.index("b") == 1 and e.rows(["a", "b"]).tolist() == [0, 1]


# -- container protocol -------------------------------------------------------------------------
def test_len_iteration_membership_and_array(emb):
    assert len(emb) == 6 and list(emb) == emb.words.tolist() == ["the", "she", "he", "naïve", "日本", "x"]
    assert "he" in emb and "nope" not in emb and 0 not in emb
    arr = np.asarray(emb)
    assert arr.dtype == np.float32 and arr.shape == (6, 4)
    np.testing.assert_array_equal(arr, emb.vectors)
    assert np.asarray(emb, dtype=np.float64).dtype == np.float64
    assert np.array(emb, copy=True).flags.writeable


def test_integer_slice_and_list_indexing(emb):
    np.testing.assert_array_equal(emb[0], emb["the"])
    np.testing.assert_array_equal(emb[np.int64(2)], emb["he"])
    np.testing.assert_array_equal(emb[-1], emb["x"])
    with pytest.raises(IndexError):
        emb[6]
    np.testing.assert_array_equal(emb[[0, 2]], emb[["the", "he"]])
    np.testing.assert_array_equal(emb[np.array([5, 1])], emb[["x", "she"]])
    assert emb[[]].shape == (0, 4)
    part = emb[1:3]
    assert isinstance(part, Embedding) and list(part) == ["she", "he"] and part.name == "toy"
    assert np.shares_memory(part.vectors, emb.vectors)
    assert part.index("he") == 1 and "the" not in part
    assert list(emb[::2]) == ["the", "he", "日本"]
    for bad in (["the", 1], 1.5, True):
        with pytest.raises(TypeError):
            emb[bad]


def test_array_checks_memory_mapped_values(tmp_path):
    from embdebias.errors import NonFiniteError

    vecs = np.ones((3, 2), dtype=np.float32)
    vecs[2, 0] = np.inf
    with NativeWriter(tmp_path / "inf.embd", WORDS3, vecs.shape) as w:
        w.vectors[:] = vecs
    with pytest.raises(NonFiniteError, match="'c'"):
        np.asarray(read_native(tmp_path / "inf.embd"))


# -- one lookup contract --------------------------------------------------------------------------
@pytest.fixture(params=["embedding", "vocabulary", "native-embedding", "native-vocabulary"])
def lookup(request, emb, tmp_path):
    if request.param.startswith("native"):
        write_native(emb, tmp_path / "e.embd")
        emb = read_native(tmp_path / "e.embd")
    return emb if request.param.endswith("embedding") else emb.words


def test_one_lookup_contract(lookup):
    assert lookup.index("he") == 2 and lookup.get("he") == 2 and lookup.get("he", None) == 2
    assert lookup.get("nope") == -1 and lookup.get("nope", None) is None and lookup.get(3) == -1
    assert lookup.rows(["x", "nope", "the"]).tolist() == [5, -1, 0]
    assert lookup.rows(iter(["she"])).dtype == np.int64
    assert lookup.split_known(["x", "nope", "the"]) == (["x", "the"], ["nope"])
    assert "日本" in lookup and "nope" not in lookup
    for catch in (MissingWordsError, KeyError, ValueError):
        with pytest.raises(catch, match="'nope'"):
            lookup.index("nope")
    with pytest.raises(TypeError):
        lookup.rows("he")  # one word is not a list of words


def test_one_gensim_conversion(emb, tmp_path, monkeypatch):
    kv = emb.to_gensim()
    assert kv.index_to_key == emb.words.tolist() and kv.key_to_index["x"] == 5
    np.testing.assert_array_equal(kv.vectors, emb.vectors)
    assert not np.shares_memory(kv.vectors, emb.vectors)
    assert np.shares_memory(emb.to_gensim(copy=False).vectors, emb.vectors)
    assert kv.most_similar("he", topn=1)[0][0] in emb  # a working KeyedVectors
    back = Embedding.from_gensim(kv)
    assert list(back) == list(emb) and np.array_equal(back.vectors, emb.vectors)
    # the gensim-kv writer goes through the same conversion
    calls = []
    original = Embedding.to_gensim
    monkeypatch.setattr(Embedding, "to_gensim", lambda self, **kw: calls.append(kw) or original(self, **kw))
    from embdebias.io import load, save

    save(emb, tmp_path / "e.kv")
    assert calls == [{"copy": False}]
    np.testing.assert_array_equal(load(tmp_path / "e.kv").vectors, emb.vectors)


def test_repeated_gensim_keys_keep_the_first_row_too():
    kv = Embedding(WORDS3, np.arange(6.0).reshape(3, 2)).to_gensim()
    kv.index_to_key = ["a", "b", "a"]  # only a hand-edited KeyedVectors repeats a key
    for copy in (None, False):
        with pytest.warns(DuplicateWordWarning, match="'a'"):
            e = Embedding.from_gensim(kv, copy=copy)
        assert list(e) == ["a", "b"] and e["a"].tolist() == [0.0, 1.0]


def test_finite_check_after_an_overflowing_sum_still_accepts_finite_rows():
    """The quick test (a finite sum) can overflow on huge finite values; the row test decides then."""
    from embdebias.errors import NonFiniteError

    big = Embedding(["a", "b", "c"], np.array([[3e38, 3e38], [3e38, 1.0], [1.0, 2.0]], dtype=np.float32))
    assert list(big.iter_chunks()) and big.take([0, 1]).shape == (2, 2)
    bad = Embedding(["a", "b", "c"], np.array([[1.0, 2.0], [np.inf, -np.inf], [np.nan, 0.0]], dtype=np.float32))
    with pytest.raises(NonFiniteError, match=r"row 1 \('b'\)"):
        list(bad.iter_chunks())


def test_scattered_take_from_a_memory_map_leaves_no_pages_mapped(tmp_path):
    """take() of scattered rows from a native file copies them and unmaps the pages it faulted in."""
    import re

    from embdebias import io

    rng = np.random.default_rng(0)
    emb = Embedding([f"w{i}" for i in range(60_000)], rng.standard_normal((60_000, 64)).astype(np.float32))
    io.save(emb, tmp_path / "e.embd")
    mapped = io.load(tmp_path / "e.embd")

    def rss_file_kb():
        return int(re.search(r"RssFile:\s+(\d+)", open("/proc/self/status").read()).group(1))

    before = rss_file_kb()
    rows = np.sort(rng.choice(60_000, 2_000, replace=False))
    np.testing.assert_array_equal(mapped.take(rows), emb.vectors[rows])
    assert rss_file_kb() - before < 2_000  # 2,000 rows would map ~15 MB (the whole file) without the release


@pytest.mark.parametrize("rows", [slice(1, 3), 2, np.int64(1), [2, 0], np.array([3, 1, 1]),
                                  np.array([True, False, True, False]), np.array([], dtype=np.int64)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_take_returns_a_fresh_contiguous_copy_whatever_the_rows(tmp_path, rows, dtype):
    """A gather is not copied twice, a view is copied: the result never aliases the vectors."""
    from embdebias import io

    vectors = np.arange(12, dtype=np.float32).reshape(4, 3)
    emb = Embedding(["a", "b", "c", "d"], vectors.copy())
    io.save(emb, tmp_path / "e.embd")
    for source in (emb, io.load(tmp_path / "e.embd")):
        block = source.take(rows, dtype=dtype)
        assert block.dtype == dtype and block.flags.c_contiguous and block.flags.writeable
        np.testing.assert_array_equal(block, vectors[rows])
        block[...] = -1.0
        np.testing.assert_array_equal(source.vectors, vectors)


@pytest.mark.parametrize("chunk_rows", [1, 2, 7, 100])
def test_fingerprint_is_the_blake2b_of_the_words_the_shape_and_the_float32_rows(tmp_path, chunk_rows):
    """The digest is the definition's whatever the chunking and the storage (in memory, a map)."""
    import hashlib

    from embdebias import io

    rng = np.random.default_rng(1)
    words = ["a", "bé", "c", "d", "e"]
    vectors = rng.standard_normal((5, 3)).astype(np.float32)
    expected = hashlib.blake2b(digest_size=16)
    expected.update("\n".join(words).encode("utf-8"))
    expected.update(np.array([5, 3], dtype="<i8").tobytes())
    expected.update(vectors.astype("<f4").tobytes())
    emb = Embedding(words, vectors)
    io.save(emb, tmp_path / "e.embd")
    for source in (emb, io.load(tmp_path / "e.embd")):
        assert source.fingerprint(chunk_rows) == f"blake2b:{expected.hexdigest()}"
    changed = vectors.copy()
    changed[4, 2] = np.nextafter(changed[4, 2], np.float32(np.inf))
    assert Embedding(words, changed).fingerprint(chunk_rows) != emb.fingerprint(chunk_rows)
